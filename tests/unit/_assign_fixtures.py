"""Scenario builders with the layout of Kafka's own assignor tests (``AbstractPartitionAssignorTest``).

Brokers ``0..n-1`` get the given racks; replica ``j`` of partition ``p`` of the ``k``-th topic lives on broker
``(p + j + offset_k) % n`` where ``offset_k`` is the number of partitions of the topics before it. Consumers
are ``consumer0, consumer1, ...``. With racks a,b,c, RF=1 and t1 of 6 partitions, t1-0 is on rack a, t1-1 on
b, t1-2 on c, t1-3 on a again - the layout behind Java's expected assignments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mutepro.racks.assign.model import ClusterMetadata, Member, Scenario, TopicPartition, tps

ALL_RACKS = ("a", "b", "c", "d", "e", "f")


def racks(n: int) -> list[str | None]:
    """``racks(3) == ["a", "b", "c"]``."""
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(n)]


def null_racks(n: int) -> list[str | None]:
    """``n`` brokers or consumers without a rack."""
    return [None] * n


def striped_cluster(
    topics: Mapping[str, int], replication_factor: int, broker_racks: Sequence[str | None]
) -> ClusterMetadata:
    """Java's ``partitionsPerTopic(numPartitionsPerTopic, replicationFactor, brokerRacks)``."""
    brokers = {i: r for i, r in enumerate(broker_racks)}
    layout: dict[str, tuple[tuple[int, ...], ...]] = {}
    offset = 0
    for topic, count in topics.items():
        layout[topic] = tuple(
            tuple((p + j + offset) % len(brokers) for j in range(replication_factor)) for p in range(count)
        )
        offset += count
    return ClusterMetadata(brokers, layout)


def java_test_scenario(
    topics: Mapping[str, int],
    replication_factor: int,
    broker_racks: Sequence[str | None],
    consumer_racks: Sequence[str | None],
    consumer_topics: Sequence[Sequence[str]],
    owned: Sequence[str] | None = None,
) -> Scenario:
    """Java's ``verifyRackAssignment`` input; ``owned[i]`` is ``"t1-0, t1-3"`` for ``consumer<i>``."""
    members = []
    for i, subscribed in enumerate(consumer_topics):
        claimed: tuple[TopicPartition, ...] = ()
        if owned is not None and i < len(owned) and owned[i]:
            claimed = tps(*owned[i].split(", "))
        members.append(Member(f"consumer{i}", tuple(subscribed), consumer_racks[i], claimed))
    return Scenario(tuple(members), striped_cluster(topics, replication_factor, broker_racks))


def assignment_strings(assignment: Mapping[str, Sequence[TopicPartition]], n: int) -> list[str]:
    """Java's ``toSortedString`` per ``consumer0..n-1`` (string-sorted, as Java's tests compare)."""
    return [", ".join(sorted(str(tp) for tp in assignment.get(f"consumer{i}", ()))) for i in range(n)]
