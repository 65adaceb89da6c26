"""The producer's threads (mutepro.producer.threads): none in unit tests, a thread's failure surfaced on the
application's next poll()/flush() as a MuteproError chained to the cause, and librdkafka's client callbacks
forwarded to the application."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, ThrottleEvent

from mutepro.errors import MuteproError
from mutepro.producer.threads import start_threads
from tests.unit._producer_fakes import Harness


class TestThreads:
    def test_none_started_when_the_rounds_are_driven_by_hand(self) -> None:
        h = Harness()
        assert start_threads(h.producer, start=False) == []

    @pytest.mark.parametrize("call", ["poll", "flush"])
    def test_a_failed_thread_is_raised_on_the_next_call(self, call: str) -> None:
        h = Harness()
        cause = ValueError("boom")
        h.producer._driver_failed(cause)
        with pytest.raises(MuteproError, match="driver thread failed: ValueError") as raised:
            getattr(h.producer, call)(0)
        assert raised.value.__cause__ is cause


class TestClientCallbacks:
    def test_the_applications_error_cb_gets_each_error(self) -> None:
        seen: list[Any] = []
        h = Harness(conf={"error_cb": seen.append})
        err = KafkaError(KafkaError._TRANSPORT, "refused")
        h.producer._on_error(err)
        h.producer.poll(0)
        assert seen == [err]

    def test_the_applications_throttle_cb_gets_each_event(self) -> None:
        seen: list[Any] = []
        h = Harness(conf={"throttle_cb": seen.append})
        event = ThrottleEvent("b1", 1, 0.5)
        h.producer._on_throttle(event)
        h.producer.poll(0)
        assert seen == [event]
