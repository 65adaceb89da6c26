"""MuteProducer's confluent-kafka API on a fake inner producer: flush, close, len, and the wiring of the
injectable inner producer and clock."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from tests.unit._producer_fakes import CONF, TOPIC, Harness, keys_by_home


class TestFlushAndClose:
    def test_flush_waits_for_the_reports_and_runs_the_callbacks(self) -> None:
        """flush(timeout) returns what is still outstanding; once reports arrive, 0 and every callback ran."""
        h = Harness()
        for i in range(5):
            h.produce(f"{i}".encode())
        assert len(h.producer) == 5 and h.producer.flush(0.01) == 5 and h.reports == []
        h.fake.deliver()
        assert h.producer.flush(1) == 0 and len(h.reports) == 5 and len(h.producer) == 0
        assert h.producer.counters.delivered == 5
        h.close()

    def test_len_counts_held_messages(self) -> None:
        """len() = outstanding in librdkafka + held + callbacks not yet run."""
        h = Harness(keyed_policy="hold")
        key = next(k for k, p in keys_by_home(h) if p == 1)
        h.producer.mute_manager.mute(TOPIC, 1)
        h.produce(b"held", key)
        h.produce(b"free")
        assert len(h.producer) == 2 and h.producer.held() == 1
        h.close()

    def test_close_purges_what_is_left_and_closes_the_inner_producer(self) -> None:
        """close(timeout) with undelivered messages: purged (callbacks see _PURGE_QUEUE), a RuntimeWarning, the
        inner producer closed; afterwards produce() raises the real client's RuntimeError and len() is 0."""
        h = Harness()
        h.produce(b"stuck")
        with pytest.warns(RuntimeWarning, match="1 messages still undelivered"):
            assert h.producer.close(0.01) is True
        assert h.fake.closed and [c for c, _ in h.reports] == [KafkaError._PURGE_QUEUE]
        with pytest.raises(RuntimeError, match="closed"):
            h.produce(b"late")
        assert len(h.producer) == 0

    def test_close_after_delivery_is_silent(self) -> None:
        """Everything delivered: close() returns True with no warning and no purge."""
        h = Harness()
        h.produce(b"x")
        h.fake.deliver()
        assert h.producer.close(1) is True and h.fake.purges == [] and len(h.reports) == 1


def test_the_inner_producer_gets_mutepros_callbacks_and_not_the_applications() -> None:
    """The factory receives the final librdkafka config: mutepro's statistics interval and callbacks; the
    application's on_delivery is kept by MuteProducer (served from its poll)."""
    h = Harness(conf={"on_delivery": lambda err, msg: None})
    conf = h.fake.config
    assert conf["statistics.interval.ms"] == 1000 and callable(conf["stats_cb"]) and "on_delivery" not in conf
    h.close()


def test_explicit_negative_partition_is_handed_over_as_given() -> None:
    """partition=-2 goes to librdkafka unchanged (it answers with the plain client's error)."""
    h = Harness()
    h.producer.produce(TOPIC, b"x", partition=-2)
    assert h.fake.sent[-1].partition == -2
    h.close()


class TestOnePath:
    """The C extension is the only per-message path: the retired ``accelerate=`` and a missing extension."""

    def test_accelerate_true_still_works_with_a_deprecation_warning(self) -> None:
        from mutepro import MuteProducer
        from mutepro.testing.fakes import FakeInnerProducer

        fake = FakeInnerProducer({TOPIC: 4})
        with pytest.warns(DeprecationWarning, match=r"accelerate=True\) is deprecated"):
            p = MuteProducer(CONF, accelerate=True, _inner_factory=fake.factory, _threads=False)
        p.close(0)

    @pytest.mark.parametrize("value", [False, 0, "no"])
    def test_accelerate_false_is_a_config_error(self, value: object) -> None:
        from mutepro import MuteProducer
        from mutepro.errors import ConfigError

        with pytest.raises(ConfigError, match="no longer has a pure-Python path"):
            MuteProducer(CONF, accelerate=value, _threads=False)
