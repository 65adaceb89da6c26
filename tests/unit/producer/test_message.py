"""The message mutepro keeps off the hot path (mutepro.producer.message): an OutMessage rebuilt from a delivery
report, its failure report, and what is read off a confluent_kafka Message (topic, partition, create time, when
it was produced, headers with one set)."""

from __future__ import annotations

import time

import confluent_kafka
from confluent_kafka import KafkaError, Message

from mutepro.producer import message
from mutepro.producer.tracker import UNASSIGNED


def _noop(err: KafkaError | None, msg: Message) -> None: ...


class TestOutMessage:
    def test_from_a_purged_report_keeps_the_message_and_dates_it_by_its_latency(self) -> None:
        """Purged: enqueued = now - latency (10 s ago), headers replaced by those given, the create time kept."""
        report = Message(topic="t", partition=2, value=b"v", key=b"k", headers=[("a", b"1")], latency=10.0,
                         timestamp=(confluent_kafka.TIMESTAMP_CREATE_TIME, 1234))
        before = time.monotonic()
        out = message.OutMessage.from_report(report, _noop, headers=[("b", b"2")], purged=True)
        assert (out.topic, out.value, out.key, out.headers, out.timestamp, out.callback, out.purged) == (
            "t", b"v", b"k", [("b", b"2")], 1234, _noop, True
        )
        assert before - 10.0 <= out.enqueued <= time.monotonic() - 10.0

    def test_from_a_failed_report_it_is_enqueued_now_with_the_reports_headers(self) -> None:
        report = Message(topic="t", value=b"v", headers=[("a", b"1")], latency=10.0)
        before = time.monotonic()
        out = message.OutMessage.from_report(report, None)
        assert out.enqueued >= before and out.headers == [("a", b"1")] and out.purged is False

    def test_size_and_failure_report(self) -> None:
        out = message.OutMessage("t", b"abc", b"k", None, 0, None, enqueued=5.0)
        assert out.size == 3
        assert message.OutMessage("t", None, None, None, 0, None).size == 0
        report = out.failed_report(KafkaError(KafkaError._MSG_TIMED_OUT), 1)
        assert (report.topic(), report.partition(), report.value(), report.key()) == ("t", 1, b"abc", b"k")
        error = report.error()
        assert error is not None and error.code() == KafkaError._MSG_TIMED_OUT

    def test_ordered_by_enqueue_time(self) -> None:
        later = message.OutMessage("t", b"2", None, None, 0, None, enqueued=2.0)
        earlier = message.OutMessage("t", b"1", None, None, 0, None, enqueued=1.0)
        assert sorted([later, earlier], key=message.by_enqueue_time) == [earlier, later]


class TestReportFields:
    def test_partition_unassigned_when_the_report_has_none(self) -> None:
        assert message.partition_of(Message(topic="t", partition=3)) == 3
        assert message.partition_of(Message(topic="t")) == UNASSIGNED

    def test_topic_is_a_string(self) -> None:
        assert message.topic_of(Message(topic="t")) == "t"
        assert message.topic_of(Message()) == ""

    def test_only_a_create_time_is_kept(self) -> None:
        """A log-append time is the broker's, not the application's: it is not sent again."""
        created = Message(topic="t", timestamp=(confluent_kafka.TIMESTAMP_CREATE_TIME, 7))
        appended = Message(topic="t", timestamp=(confluent_kafka.TIMESTAMP_LOG_APPEND_TIME, 7))
        assert (message.create_time(created), message.create_time(appended)) == (7, 0)

    def test_enqueued_at_needs_a_latency(self) -> None:
        assert message.enqueued_at(Message(topic="t")) is None
        before = time.monotonic()
        at = message.enqueued_at(Message(topic="t", latency=2.0))
        assert at is not None and before - 2.0 <= at <= time.monotonic() - 2.0


class TestWithHeader:
    def test_set_on_none_a_list_or_a_mapping_replacing_an_earlier_value(self) -> None:
        assert message.with_header(None, "x", b"1") == [("x", b"1")]
        assert message.with_header([("x", b"0"), ("y", b"2")], "x", b"1") == [("y", b"2"), ("x", b"1")]
        assert message.with_header({"y": b"2"}, "x", b"1") == [("y", b"2"), ("x", b"1")]

    def test_the_given_headers_are_not_changed(self) -> None:
        given = [("x", b"0")]
        message.with_header(given, "x", b"1")
        assert given == [("x", b"0")]
