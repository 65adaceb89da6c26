"""MuteProducer's in-flight rescue (what the Spark sink asks for at a task's end) on the real cluster: messages stuck
in flight to a stalled broker are re-sent elsewhere and delivered while it is still stopped; an idempotent
producer is never purged (its messages wait for the broker, and are written exactly once)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from _helpers import consume_all, end_offsets, wait_for

from mutepro.cluster.launcher import LocalCluster
from mutepro.producer import MuteProducer

pytestmark = [pytest.mark.integration]

# Broker 2 leads partitions 1 and 4 of a topic made with this assignment.
RF1 = [[1], [2], [3], [1], [2], [3]]
ON_BROKER_2 = {1, 4}
COUNT = 600


def _end_offsets(bootstrap: str, topic: str) -> int:
    return sum(end_offsets(bootstrap, topic, 6).values())


@pytest.mark.parametrize("idempotent", [False, True], ids=["plain", "idempotent"])
def test_messages_in_flight_to_a_stalled_broker(
    kafka_cluster: LocalCluster, topic_factory: Any, idempotent: bool
) -> None:
    """Keyed messages sent while broker 2 is stopped: once its partitions are muted and the others drained, the
    in-flight rescue moves what is stuck there (plain producer: delivered before the broker resumes, every message
    present afterwards, at most one extra copy each) or leaves it alone (idempotent: nothing purged or moved, and
    after the resume every message is written exactly once)."""
    topic = topic_factory(replica_assignment=RF1)
    conf = kafka_cluster.client_config(**{"linger.ms": 5, "enable.idempotence": idempotent})
    policy = {"defaults": {"slow_call": {"threshold_ms": 500}, "breaker": {"retry_interval_ms": 60_000}}}
    producer = MuteProducer(conf, policy=policy)
    for p in range(6):
        producer.produce(topic, b"warm", partition=p)
    assert producer.flush(30) == 0
    assert wait_for(lambda: producer.mute_manager.snapshot(topic) is not None, 15, step=lambda: producer.poll(0.1))
    values = {f"m{i}".encode() for i in range(COUNT)}

    def stuck_on_broker_2() -> bool:
        muted = set(producer.mute_manager.muted_partitions().get(topic, []))
        healthy = [p for p in range(6) if p not in ON_BROKER_2]
        return muted >= ON_BROKER_2 and all(producer.outstanding(topic, p) == 0 for p in healthy)

    with kafka_cluster.stalled(2):
        for i in range(COUNT):
            producer.produce(topic, f"m{i}".encode(), key=f"k{i}".encode())
        assert wait_for(stuck_on_broker_2, 30, step=lambda: producer.poll(0.1))
        stuck = sum(producer.outstanding(topic, p) for p in ON_BROKER_2)
        assert stuck > 0
        if idempotent:
            assert producer._rescue_in_flight(0.0) is None
            assert producer.counters.rescued == 0
            assert sum(producer.outstanding(topic, p) for p in ON_BROKER_2) == stuck
        else:
            assert producer._rescue_in_flight(0.0) == stuck
            assert producer.flush(30) == 0  # delivered while broker 2 is still stopped
    assert producer.flush(60) == 0
    written = _end_offsets(kafka_cluster.bootstrap_servers, topic)
    if idempotent:
        assert written == COUNT + 6
    else:
        assert COUNT + 6 <= written <= COUNT + 6 + producer.counters.rescued
    got = Counter(m.value() for m in consume_all(kafka_cluster.bootstrap_servers, topic, written))
    assert set(got) - {b"warm"} == values and max(n for v, n in got.items() if v != b"warm") <= 2
    producer.close()
