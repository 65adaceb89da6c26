"""MuteProducer's confluent-kafka API on a fake inner producer: the wiring of the injectable inner producer and
clock, and the one per-message path (flush, close, len: test_lifecycle.py)."""

from __future__ import annotations

import pytest

from tests.unit._producer_fakes import CONF, TOPIC, Harness


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
