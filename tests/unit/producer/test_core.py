"""The parts every other part shares (mutepro.producer.core): the write-once cell that ties the message's own loop,
and the Core's send/fail paths, on the fake librdkafka client."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from mutepro.producer.core import Later
from mutepro.producer.message import NORMAL, OutMessage
from tests.unit._producer_fakes import TOPIC, Harness


class TestLater:
    def test_set_once_then_read(self) -> None:
        cell: Later[int] = Later("the part")
        assert cell.value is None
        cell.set(3)
        assert (cell.value, cell.get()) == (3, 3)

    def test_a_second_set_is_refused(self) -> None:
        cell: Later[int] = Later("the C fast path")
        cell.set(1)
        with pytest.raises(RuntimeError, match="the C fast path was already set"):
            cell.set(2)
        assert cell.get() == 1

    def test_reading_before_it_is_built_names_the_part(self) -> None:
        with pytest.raises(RuntimeError, match="the reporter is not built yet"):
            Later[int]("the reporter").get()


class TestCore:
    def test_dispatch_hands_a_kept_message_to_librdkafka_on_its_partition(self) -> None:
        h = Harness()
        core = h.producer._core
        core.dispatch(OutMessage(TOPIC, b"v", b"k", None, 0, h.callback), 3, NORMAL)
        assert [(s.value, s.key, s.partition) for s in h.fake.sent] == [(b"v", b"k", 3)]

    def test_fail_reports_the_error_to_the_messages_callback(self) -> None:
        h = Harness()
        core = h.producer._core
        core.fail(OutMessage(TOPIC, b"v", None, None, 0, h.callback), KafkaError(KafkaError._QUEUE_FULL), 2)
        h.producer.poll(0)
        assert [(code, m.partition(), m.value()) for code, m in h.reports] == [(KafkaError._QUEUE_FULL, 2, b"v")]
        assert not h.fake.sent
