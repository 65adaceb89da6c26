"""The message mutepro keeps off the hot path (mutepro.producer.message): built from what produce() was given or
from a report, its failed report, and the helpers that read a librdkafka report."""

from __future__ import annotations

import time

import confluent_kafka
from confluent_kafka import KafkaError, Message

from mutepro.producer.message import (
    OutMessage,
    by_enqueue_time,
    create_time,
    partition_of,
    topic_of,
    with_header,
)
from mutepro.producer.tracker import UNASSIGNED


def report(**fields: object) -> Message:
    return Message(**fields)  # type: ignore[arg-type]


class TestOutMessage:
    def test_keeps_what_produce_was_given_and_when(self) -> None:
        before = time.monotonic()
        m = OutMessage("t", b"abc", b"k", [("h", b"v")], 1234, None)
        assert (m.topic, m.value, m.key, m.headers, m.timestamp, m.purged) == ("t", b"abc", b"k", [("h", b"v")], 1234,
                                                                              False)  # fmt: skip
        assert before <= m.enqueued <= time.monotonic()
        assert m.size == 3 and OutMessage("t", None, None, None, 0, None).size == 0

    def test_from_a_report_with_headers_replaced(self) -> None:
        msg = report(topic="t", partition=2, value=b"v", key=b"k", headers=[("a", b"1")])
        m = OutMessage.from_report(msg, None, headers=[("b", b"2")])
        assert (m.topic, m.value, m.key, m.headers, m.purged) == ("t", b"v", b"k", [("b", b"2")], False)

    def test_its_failed_report_carries_the_error_and_partition(self) -> None:
        m = OutMessage("t", b"v", b"k", None, 0, None)
        failed = m.failed_report(KafkaError(KafkaError._QUEUE_FULL), 3)
        assert (failed.topic(), failed.partition(), failed.value(), failed.error().code()) == (
            "t", 3, b"v", KafkaError._QUEUE_FULL
        )

    def test_hold_queues_sort_by_enqueue_time(self) -> None:
        late = OutMessage("t", b"1", None, None, 0, None, enqueued=2.0)
        early = OutMessage("t", b"2", None, None, 0, None, enqueued=1.0)
        assert sorted([late, early], key=by_enqueue_time) == [early, late]


class TestReportReaders:
    def test_topic_and_partition_with_their_absent_forms(self) -> None:
        assert topic_of(report(topic="t")) == "t" and topic_of(report()) == ""
        assert partition_of(report(partition=4)) == 4 and partition_of(report()) == UNASSIGNED

    def test_only_a_create_time_is_kept(self) -> None:
        assert create_time(report(timestamp=(confluent_kafka.TIMESTAMP_CREATE_TIME, 99))) == 99
        assert create_time(report(timestamp=(confluent_kafka.TIMESTAMP_LOG_APPEND_TIME, 99))) == 0


class TestWithHeader:
    def test_set_on_none_a_list_or_a_mapping_replacing_an_earlier_one(self) -> None:
        assert with_header(None, "x", b"1") == [("x", b"1")]
        assert with_header([("a", b"0"), ("x", b"old")], "x", b"1") == [("a", b"0"), ("x", b"1")]
        assert with_header({"a": b"0"}, "x", b"1") == [("a", b"0"), ("x", b"1")]
