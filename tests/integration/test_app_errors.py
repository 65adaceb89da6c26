"""Errors of the message, not of the partition (here: records too large for the topic), never mute a healthy
partition nor move keys off it, on both paths."""

from __future__ import annotations

from typing import Any

from mutepro import MuteProducer
from mutepro.cluster.launcher import LocalCluster
from mutepro.partition.hashing import key_partitioner


def test_oversized_records_do_not_mute_the_partition(
    kafka_cluster: LocalCluster, topic_factory: Any
) -> None:
    """40 records the broker rejects as too large (MSG_SIZE_TOO_LARGE) reach the application as errors; the
    partition stays unmuted and the next 30 keyed messages all land on their home partitions."""
    topic = topic_factory(partitions=6, replication_factor=1, config={"max.message.bytes": "2000"})
    producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}))
    home = key_partitioner("consistent_random")
    errors: list[int] = []
    placed: list[tuple[int, int]] = []
    producer.produce(topic, value=b"warm", key=b"warm")  # metadata known before the test proper
    assert producer.flush(30) == 0
    for _ in range(40):
        producer.produce(topic, value=b"x" * 5000, key=b"big", on_delivery=lambda err, msg: errors.append(err.code()))
        producer.poll(0)
    assert producer.flush(30) == 0
    producer.poll(1.0)  # a driver tick judges the partition meanwhile
    assert errors == [10] * 40  # MSG_SIZE_TOO_LARGE, reported to the application
    assert producer.mute_manager.muted_partitions().get(topic, []) == []
    for i in range(30):
        key = f"k{i}".encode()
        producer.produce(topic, value=b"v", key=key, on_delivery=lambda err, msg, k=key: placed.append(
            (home(k, 6), msg.partition())))
    assert producer.flush(30) == 0
    assert len(placed) == 30 and all(expected == got for expected, got in placed)
    assert producer.counters.mutes == 0
    producer.close()
