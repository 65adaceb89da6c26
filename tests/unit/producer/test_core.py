"""What every part of MuteProducer shares (mutepro.producer.core): the cell linking a part built later, the
producer lock that raises the C fast path's gate, and the one way a message is handed to librdkafka or failed
without it."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError

from mutepro.producer.core import GatedLock, Later
from mutepro.producer.message import NORMAL, OutMessage
from tests.unit._producer_fakes import TOPIC, Harness


class TestLater:
    def test_set_once(self) -> None:
        """A link is made once: a second set raises instead of re-pointing the part that holds it."""
        link: Later[int] = Later("the part")
        assert link.value is None
        link.set(7)
        assert link.get() == 7
        with pytest.raises(RuntimeError, match="already set"):
            link.set(8)
        assert link.get() == 7

    def test_get_before_set_raises(self) -> None:
        """Reaching a part before it is built is an error naming it, not a None passed along."""
        with pytest.raises(RuntimeError, match="the report handler is not built yet"):
            Later[Any]("the report handler").get()


class TestGatedLock:
    def test_the_fast_paths_gate_is_raised_while_held_nested_too(self) -> None:
        """Held (re-entrantly): the gate counts the holds, so the C path stays out until the last release."""
        fast = SimpleNamespace(gate=0)
        link: Later[Any] = Later("the fast path")
        link.set(fast)
        lock = GatedLock(link)
        with lock:
            assert fast.gate == 1
            with lock:
                assert fast.gate == 2
            assert fast.gate == 1
        assert fast.gate == 0

    def test_before_the_fast_path_exists_it_is_a_plain_lock(self) -> None:
        lock = GatedLock(Later("the fast path"))
        with lock, lock:
            pass  # no fast path to gate: nothing raised


class TestCore:
    @pytest.fixture
    def h(self) -> Iterator[Harness]:
        harness = Harness()
        yield harness
        harness.close()

    def test_metadata_is_asked_for_once_per_topic(self, h: Harness) -> None:
        core = h.producer._core
        core.metadata_wanted.clear()
        core.want_metadata("new")
        assert core.metadata_wanted.is_set() and "new" in core.wanted_topics
        core.metadata_wanted.clear()
        core.want_metadata("new")
        assert not core.metadata_wanted.is_set()  # already wanted: the thread is not woken again

    def test_dispatch_hands_the_message_to_librdkafka_for_its_partition(self, h: Harness) -> None:
        h.producer._core.dispatch(OutMessage(TOPIC, b"v", b"k", None, 0, None), 2, NORMAL)
        assert [(s.topic, s.value, s.key, s.partition) for s in h.fake.sent] == [(TOPIC, b"v", b"k", 2)]

    def test_a_resend_into_a_full_queue_is_kept_by_the_caller(self, h: Harness) -> None:
        """BufferError: False and nothing sent, nothing failed (the caller keeps the message)."""
        h.fake.capacity = 0
        assert h.producer._core.resend(OutMessage(TOPIC, b"v", None, None, 0, h.callback), 1, NORMAL) is False
        assert h.fake.sent == [] and h.producer.counters.failed == 0

    def test_a_resend_librdkafka_refuses_becomes_the_messages_failed_report(self, h: Harness) -> None:
        """The topic gone from librdkafka's metadata: the message's callback gets _UNKNOWN_TOPIC, not an exception."""
        core = h.producer._core
        h.fake.unknown_topics.add(TOPIC)
        assert core.resend(OutMessage(TOPIC, b"v", None, None, 0, h.callback), 1, NORMAL) is True
        core.callbacks.serve(0)
        assert [(code, msg.partition(), msg.value()) for code, msg in h.reports] == [
            (KafkaError._UNKNOWN_TOPIC, 1, b"v")
        ]
        assert h.producer.counters.failed == 1

    def test_fail_without_a_callback_is_counted(self, h: Harness) -> None:
        core = h.producer._core
        core.fail(OutMessage(TOPIC, b"v", None, None, 0, None), KafkaError(KafkaError._MSG_TIMED_OUT), 0)
        assert h.producer.counters.failed == 1 and len(core.callbacks) == 0

