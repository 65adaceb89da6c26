"""mutepro's own API of a MuteProducer and the pass-through to the wrapped client (mutepro.producer.api), on the
fake librdkafka client: construction from a YAML policy, the counts per partition, metrics, and what goes straight
to librdkafka."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro import MuteProducer
from mutepro.errors import ConfigError
from tests.unit._producer_fakes import PARTITIONS, TOPIC, Harness


class TestFromPolicy:
    def test_no_bootstrap_servers_names_where_they_go(self, tmp_path: Path) -> None:
        path = tmp_path / "p.yaml"
        path.write_text("defaults: {keyed_policy: hold}\n")
        with pytest.raises(ConfigError, match=r"client\.bootstrap\.servers: the policy has no bootstrap servers"):
            MuteProducer.from_policy(path)


class TestCounts:
    def test_outstanding_per_partition_until_reported(self) -> None:
        h = Harness()
        h.produce(b"a", partition=1)
        h.produce(b"b", partition=1)
        assert [h.producer.outstanding(TOPIC, p) for p in range(PARTITIONS)] == [0, 2, 0, 0]
        assert h.producer.mute_manager.outstanding(TOPIC, 1) == 2  # KIP-693's question, the producer's answer
        h.fake.deliver(TOPIC, 1)
        h.producer.poll(0)
        assert h.producer.outstanding(TOPIC, 1) == 0

    def test_statistics_counts_read_zero_before_any_statistics(self) -> None:
        h = Harness()
        assert (h.producer.accumulated(TOPIC, 0), h.producer.in_flight(TOPIC, 0)) == (0, 0)

    def test_nothing_held_without_a_hold(self) -> None:
        assert Harness().producer.held() == 0


class TestMetrics:
    def test_counters_partitions_and_mutes(self) -> None:
        h = Harness()
        h.produce(b"a", partition=2)
        h.producer.mute_manager.mute(TOPIC, 3)
        m = h.producer.metrics()
        assert m["counters"]["produced"] == 1 and m["outstanding"] == 1
        assert m["partitions"][TOPIC][2]["outstanding"] == 1
        assert m["muted"] == {TOPIC: [3]} and m["rack"] is None
        assert f"muted={{'{TOPIC}': [3]}}" in repr(h.producer)


class TestWaitForTopic:
    def test_true_once_the_metadata_is_loaded(self) -> None:
        h = Harness()  # the harness loads the topic's metadata
        assert h.producer.wait_for_topic(TOPIC, 0)
        assert not h.producer.wait_for_topic("unknown", 0)


class TestPassthrough:
    def test_the_wrapped_clients_other_methods_are_reached(self) -> None:
        h = Harness()
        metadata = h.producer.list_topics(TOPIC)
        assert len(metadata.topics[TOPIC].partitions) == PARTITIONS

    def test_a_context_manager_closes_the_producer(self) -> None:
        h = Harness()
        with h.producer as p:
            assert p is h.producer
        with pytest.raises(RuntimeError, match="Producer has been closed"):
            h.producer.poll(0)
