"""flush(), len() and close() of a MuteProducer (mutepro.producer.lifecycle), on the fake librdkafka client:
what len() counts, flush's return as the real client's, and close() purging what is left with a warning."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from tests.unit._producer_fakes import TOPIC, Harness


class TestLen:
    def test_counts_outstanding_messages_and_callbacks_not_yet_run(self) -> None:
        h = Harness()
        h.produce(b"a", partition=0)
        h.produce(b"b", partition=1)
        assert len(h.producer) == 2
        h.fake.deliver(TOPIC, 0)
        h.producer._inner.poll(0)  # the report arrived; its callback has not run yet (no application poll)
        assert len(h.producer) == 2
        h.producer.poll(0)
        assert len(h.producer) == 1


class TestFlush:
    def test_returns_what_is_left_when_the_timeout_runs_out(self) -> None:
        h = Harness()
        h.produce(b"a", partition=0)
        assert h.producer.flush(0) == 1
        h.fake.deliver()
        assert h.producer.flush(0) == 0
        assert [code for code, _ in h.reports] == [None]

    def test_a_timeout_that_is_not_a_number_is_the_real_clients_type_error(self) -> None:
        with pytest.raises(TypeError, match="must be real number, not NoneType"):
            Harness().producer.flush(None)  # type: ignore[arg-type]


class TestClose:
    def test_what_is_left_is_purged_its_callbacks_run_and_a_warning_says_how_many(self) -> None:
        h = Harness()
        h.produce(b"a", partition=0)
        h.produce(b"b", partition=1)
        with pytest.warns(RuntimeWarning, match="2 messages still undelivered"):
            assert h.producer.close(0.01) is True
        assert sorted(code for code, _ in h.reports) == [KafkaError._PURGE_QUEUE] * 2
        assert len(h.producer) == 0

    def test_closed_calls_raise_as_the_real_client_and_a_second_close_is_true(self) -> None:
        h = Harness()
        h.close()
        for call in (lambda: h.producer.flush(0), lambda: h.producer.poll(0), lambda: h.produce(b"x")):
            with pytest.raises(RuntimeError, match="Producer has been closed"):
                call()
        assert h.producer.close() is True

    @pytest.mark.parametrize("args", [(True,), ("x",), (1, 2)])
    def test_any_arguments_are_accepted_as_by_the_real_client(self, args: tuple[object, ...]) -> None:
        h = Harness()
        h.fake.deliver()
        assert h.producer.close(*args) is True
