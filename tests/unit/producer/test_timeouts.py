"""The re-send of a timed-out message (mutepro.producer.timeouts) driven through MuteProducer on a fake inner
producer."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError

from tests.unit._producer_fakes import TOPIC, Harness

HEADER = "x-mutepro-rescued-from"


class TestTimedOutResend:
    def test_a_timed_out_unkeyed_message_is_resent_once_elsewhere(self) -> None:
        """_MSG_TIMED_OUT on partition p (muted meanwhile): re-sent to another writable partition with the rescue
        header; a second timeout is reported to the application (never rescued twice)."""
        h = Harness()
        h.producer.produce(TOPIC, b"t", on_delivery=h.callback)
        first = h.fake.sent[-1].partition
        h.producer.mute_manager.mute(TOPIC, first)  # (no tick: no rescue purge, the report comes first)
        h.fake.fail(TOPIC, first, KafkaError._MSG_TIMED_OUT)
        h.producer.poll(0)
        again = h.fake.sent[-1]
        assert len(h.fake.sent) == 2 and again.partition != first and h.reports == []
        assert (HEADER, str(first).encode()) in again.headers
        h.producer.mute_manager.mute(TOPIC, again.partition)  # there would be somewhere else to go
        h.fake.fail(TOPIC, again.partition, KafkaError._MSG_TIMED_OUT)
        h.producer.poll(0)
        assert len(h.fake.sent) == 2 and [c for c, _ in h.reports] == [KafkaError._MSG_TIMED_OUT]
        h.close()

    def test_a_timed_out_message_with_an_explicit_partition_is_reported(self) -> None:
        """partition= given: the timeout is the application's to see."""
        h = Harness()
        h.producer.produce(TOPIC, b"t", partition=1, on_delivery=h.callback)
        h.fake.fail(TOPIC, 1, KafkaError._MSG_TIMED_OUT)
        h.producer.poll(0)
        assert len(h.fake.sent) == 1 and [c for c, _ in h.reports] == [KafkaError._MSG_TIMED_OUT]
        h.close()

    @pytest.mark.parametrize(
        "kwargs",
        [
            # enable.idempotence=true: a timed-out message may have been written; a re-send could duplicate it
            pytest.param({"conf": {"enable.idempotence": True}}, id="idempotent"),
            pytest.param({"rescue": {"enabled": False, "after_ms": 0}}, id="rescue-disabled"),
        ],
    )
    def test_no_resend_reports_the_timeout(self, kwargs: dict[str, Any]) -> None:
        """An idempotent producer, or rescue.enabled=false: the timeout goes to the application, nothing is re-sent
        although the partition is muted."""
        h = Harness(**kwargs)
        h.producer.produce(TOPIC, b"t", on_delivery=h.callback)
        h.producer.mute_manager.mute(TOPIC, h.fake.sent[-1].partition)
        h.fake.fail(TOPIC, h.fake.sent[-1].partition, KafkaError._MSG_TIMED_OUT)
        h.producer.poll(0)
        assert len(h.fake.sent) == 1 and [c for c, _ in h.reports] == [KafkaError._MSG_TIMED_OUT]
        h.close()
