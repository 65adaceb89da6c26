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
    pytest.param(lambda: MuteProducer(CONF), id="mutepro"),
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


class TestBadInputAtConstruction:
    @pytest.mark.parametrize("key", ["error_cb", "stats_cb", "throttle_cb", "on_delivery"])
    def test_a_non_callable_callback_fails_like_the_plain_client(self, key: str) -> None:
        """A callback in the config that is not callable fails at construction with the plain client's own
        exception type and message (not at the first flush())."""
        conf = {**CONF, key: 5}
        with pytest.raises(Exception) as plain:
            Producer(conf)
        with pytest.raises(type(plain.value)) as ours:
            MuteProducer(conf)
        assert str(ours.value) == str(plain.value)

    @pytest.mark.parametrize("tick", [0, -1, 100])
    def test_tick_interval_out_of_range(self, tick: float) -> None:
        """tick_interval_s must be 0.001-10 s: a clear ConfigError naming it."""
        from mutepro.errors import ConfigError

        with pytest.raises(ConfigError, match="tick_interval_s"):
            MuteProducer(CONF, tick_interval_s=tick)


def test_negative_partition_gets_the_plain_clients_outcome() -> None:
    """partition=-2 is handed to librdkafka as given (not placed on some partition): the same final error as the
    plain client's for the same message."""
    conf = {**CONF, "message.timeout.ms": 1500}
    outcomes = []
    for producer in (Producer(conf), MuteProducer(conf)):
        got: list[Any] = []
        producer.produce("orders", value=b"v", partition=-2, on_delivery=lambda err, msg, got=got: got.append(
            (err.code() if err else None, msg.partition())))
        assert producer.flush(10) == 0
        outcomes.append(got)
        if isinstance(producer, MuteProducer):
            producer.close()
    assert outcomes[0] == outcomes[1] and outcomes[0][0][0] is not None
