"""The end of a MuteProducer's life (mutepro.producer.lifecycle): flush() waits for every report and callback,
len() counts what is not yet handled, close() delivers, purges what is left after its timeout and closes."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from tests.unit._producer_fakes import TOPIC, Harness, keys_by_home


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

    def test_close_twice_and_flush_after_close(self) -> None:
        """A second close() returns True again; flush() afterwards raises the real client's RuntimeError."""
        h = Harness()
        assert h.producer.close(0.01) is True and h.producer.close(0.01) is True
        with pytest.raises(RuntimeError, match="Producer has been closed"):
            h.producer.flush(0)

    def test_close_ignores_arguments_the_real_client_ignores(self) -> None:
        """close("x", foo=1): the timeout is not a number, so close waits for every message as the real one does
        (here they are delivered: nothing purged)."""
        h = Harness()
        h.produce(b"x")
        h.fake.deliver()
        assert h.producer.close("x", foo=1) is True and h.fake.purges == [] and len(h.reports) == 1

    def test_flush_checks_its_timeout_like_the_real_client(self) -> None:
        h = Harness()
        with pytest.raises(TypeError, match="must be real number, not NoneType"):
            h.producer.flush(None)  # type: ignore[arg-type]
        h.close()
