"""MuteProducer.purge() against an unreachable broker (no Java, no Kafka needed): every message is reported
purged at once, as by confluent_kafka.Producer, never re-sent."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer

from mutepro import MuteProducer

CONF = {"bootstrap.servers": "127.0.0.1:1", "message.timeout.ms": 60_000, "log_level": 0}


@pytest.mark.parametrize("make", [
    pytest.param(lambda: Producer(CONF), id="plain"),
    pytest.param(lambda: MuteProducer(CONF, accelerate=False), id="pure-python"),
    pytest.param(lambda: MuteProducer(CONF), id="default-path"),
])
def test_purge_reports_every_message_purged_at_once(make: Any) -> None:
    """produce(); purge(); flush(): all 20 reports say _PURGE_QUEUE and flush() returns 0 right away (no message
    requeued to wait for message.timeout.ms)."""
    producer = make()
    errors: list[int] = []
    for i in range(20):
        producer.produce("orders", value=f"m{i}".encode(), on_delivery=lambda err, msg: errors.append(err.code()))
    producer.purge()
    assert producer.flush(10) == 0
    assert errors == [KafkaError._PURGE_QUEUE] * 20
    if isinstance(producer, MuteProducer):
        producer.close()
