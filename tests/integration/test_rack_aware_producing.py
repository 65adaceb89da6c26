"""Rack-aware partitioning (KIP-1123) on the real 3-rack cluster, measured from the broker side.

Configuration: RF 1, 12 partitions, leaders on brokers 1, 2, 3 in turn (one rack each), acks=all (librdkafka's
default), unkeyed messages, ``client.rack`` = broker 1's rack with ``partitioner.rack.aware=true``. Where the
messages went is read from the brokers (each partition's end offset; with RF 1 the leader holds the partition's
only copy), not from the producer's own counts.
"""

from __future__ import annotations

import pytest
from _helpers import BackgroundLoad, Ledger, consume_all, wait_for
from confluent_kafka import Consumer, TopicPartition

from mutepro.cluster.launcher import LocalCluster
from mutepro.producer import MuteProducer

pytestmark = pytest.mark.integration

ASSIGNMENT = [[p % 3 + 1] for p in range(12)]
ON_BROKER_1 = {p for p in range(12) if p % 3 == 0}


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "rack-offsets"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(12)}
    finally:
        consumer.close()


def rack_aware_producer(cluster: LocalCluster) -> MuteProducer:
    rack = cluster.racks[1]
    conf = cluster.client_config(**{"linger.ms": 5, "client.rack": rack, "partitioner.rack.aware": "true"})
    policy = {"defaults": {"slow_call": {"threshold_ms": 500}, "breaker": {"retry_interval_ms": 60_000}}}
    # the brokers' racks arrive with the first metadata round, on the producer's metadata thread: each test waits
    # for the topic's local set before producing
    return MuteProducer(conf, policy=policy)


class TestRackAwareProducing:
    def test_unkeyed_bytes_all_go_to_the_producers_rack_while_its_leaders_are_writable(
        self, kafka_cluster: LocalCluster, topic_factory
    ) -> None:
        topic = topic_factory(replica_assignment=ASSIGNMENT)
        producer = rack_aware_producer(kafka_cluster)
        assert producer.wait_for_topic(topic, 30)
        assert wait_for(lambda: producer.mute_manager.racks.local_partitions(topic) == ON_BROKER_1, 30,
                        step=lambda: producer.poll(0.1))
        for i in range(20_000):
            while True:
                try:
                    producer.produce(topic, b"x" * 200 + str(i).encode())
                    break
                except BufferError:
                    producer.poll(0.05)
        assert producer.flush(60) == 0
        offsets = end_offsets(kafka_cluster.bootstrap_servers, topic)
        assert sum(offsets.values()) == 20_000
        assert {p for p, n in offsets.items() if n > 0} <= ON_BROKER_1
        rack = producer.metrics()["rack"]
        assert rack["client_rack"] == kafka_cluster.racks[1]
        producer.close()

    def test_a_stalled_local_broker_sends_traffic_to_the_other_racks_and_loses_nothing(
        self, kafka_cluster: LocalCluster, topic_factory
    ) -> None:
        topic = topic_factory(replica_assignment=ASSIGNMENT)
        producer = rack_aware_producer(kafka_cluster)
        ledger = Ledger()
        assert producer.wait_for_topic(topic, 30)
        assert wait_for(lambda: producer.mute_manager.racks.local_partitions(topic) == ON_BROKER_1, 30,
                        step=lambda: producer.poll(0.1))
        with kafka_cluster.stalled(1), BackgroundLoad(producer, topic, ledger, rate=400) as load:
            assert wait_for(lambda: set(producer.mute_manager.muted_partitions().get(topic, [])) >= ON_BROKER_1, 30,
                            step=lambda: producer.poll(0.1))
            mark = len(load.sent)
            assert wait_for(lambda: len(load.sent) >= mark + 400, 30, step=lambda: producer.poll(0.1))
            after = load.sent[mark : mark + 400]
            assert wait_for(lambda: all(m in ledger.delivered for m in after), 30, step=lambda: producer.poll(0.1))
            # muted local leaders: every message after the mute went to the other racks
            assert {ledger.delivered[m] for m in after}.isdisjoint(ON_BROKER_1)
            load.stop()
        assert producer.flush(60) == 0
        assert ledger.failed == {}
        assert ledger.reports == len(load.sent)
        records = consume_all(kafka_cluster.bootstrap_servers, topic, len(load.sent))
        assert {m.value().decode().split("|", 1)[0] for m in records} == set(load.sent)
        producer.close()
