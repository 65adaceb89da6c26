"""Delivery reports that reach Python (mutepro.producer.reports): a failure counted against its partition or not
(the broker's fault or the message's own), the application's callback queued with the error, and success reports
kept from it under ``delivery.report.only.error``."""

from __future__ import annotations

from confluent_kafka import KafkaError

from tests.unit._producer_fakes import TOPIC, Harness


def _failed_on(h: Harness, partition: int) -> int:
    return int(h.producer._core.tracker.topics[TOPIC].failed[partition])


class TestReportHandler:
    def test_a_broker_failure_counts_against_its_partition(self) -> None:
        h = Harness()
        h.warm()
        h.producer.produce(TOPIC, b"v", partition=1, on_delivery=h.callback)
        h.fake.fail(TOPIC, 1, KafkaError.REQUEST_TIMED_OUT)
        h.producer.poll(0)
        assert [c for c, _ in h.reports] == [KafkaError.REQUEST_TIMED_OUT]
        assert _failed_on(h, 1) == 1 and _failed_on(h, 2) == 0
        assert h.producer.counters.failed == 1
        h.close()

    def test_the_messages_own_error_is_not_held_against_the_partition(self) -> None:
        """MSG_SIZE_TOO_LARGE: the broker answered; the callback sees the error, the partition's tally does not."""
        h = Harness()
        h.warm()
        h.producer.produce(TOPIC, b"v", partition=1, on_delivery=h.callback)
        h.fake.fail(TOPIC, 1, KafkaError.MSG_SIZE_TOO_LARGE)
        h.producer.poll(0)
        assert [c for c, _ in h.reports] == [KafkaError.MSG_SIZE_TOO_LARGE]
        assert _failed_on(h, 1) == 0 and h.producer.counters.failed == 1
        h.close()

    def test_only_errors_reach_the_callback_under_delivery_report_only_error(self) -> None:
        h = Harness(conf={"delivery.report.only.error": True})
        h.producer.produce(TOPIC, b"ok", partition=0, on_delivery=h.callback)
        h.producer.produce(TOPIC, b"bad", partition=1, on_delivery=h.callback)
        h.fake.deliver(TOPIC, 0)
        h.fake.fail(TOPIC, 1, KafkaError.MSG_SIZE_TOO_LARGE)
        assert h.producer.flush(1) == 0
        assert [(c, m.value()) for c, m in h.reports] == [(KafkaError.MSG_SIZE_TOO_LARGE, b"bad")]
        assert h.producer.counters.delivered == 1
        h.close()

    def test_every_report_is_counted_once(self) -> None:
        h = Harness()
        h.warm()
        for p in range(3):
            h.producer.produce(TOPIC, b"v", partition=p, on_delivery=h.callback)
        h.fake.deliver(TOPIC, 0)
        h.fake.fail(TOPIC, 1, KafkaError.REQUEST_TIMED_OUT)
        h.fake.fail(TOPIC, 2, KafkaError.MSG_SIZE_TOO_LARGE)
        assert h.producer.flush(1) == 0
        assert sorted((c or 0, m.partition()) for c, m in h.reports) == sorted(
            [(0, 0), (KafkaError.REQUEST_TIMED_OUT, 1), (KafkaError.MSG_SIZE_TOO_LARGE, 2)]
        )
        assert (h.producer.counters.delivered, h.producer.counters.failed) == (4 + 1, 2)
        h.close()
