"""Create a plain topic on a (local or existing) cluster and wait until it can be produced to.

The demo, the examples, the benchmarks and the test fixtures all need "a fresh topic with this shape, ready now";
this is that one helper. It is library code (no pytest): ``mutepro demo`` imports it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from mutepro.errors import ClusterError, ConfigError


def create_topic(
    admin: object,
    name: str,
    *,
    partitions: int = 6,
    replication_factor: int = 3,
    replica_assignment: Sequence[Sequence[int]] | None = None,
    config: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
) -> None:
    """Create a topic and wait until every partition has a leader in the metadata.

    Nonsense is refused before the admin call, naming the argument: Kafka would answer ``partitions=-5``
    with "use the broker default" and a replica list ``[1, 1, 2]`` with a late INVALID_REPLICA_ASSIGNMENT.
    """
    from confluent_kafka.admin import NewTopic

    _check_topic_shape(partitions, replication_factor, replica_assignment)

    if replica_assignment is not None:
        # librdkafka wants the partition count stated alongside an explicit assignment (-1 means "broker default")
        topic = NewTopic(
            name, num_partitions=len(replica_assignment),
            replica_assignment=[list(r) for r in replica_assignment], config=dict(config or {}),
        )
        expected = len(replica_assignment)
    else:
        topic = NewTopic(
            name, num_partitions=partitions, replication_factor=replication_factor, config=dict(config or {})
        )
        expected = partitions
    futures = admin.create_topics([topic], operation_timeout=timeout_s)  # type: ignore[attr-defined]
    futures[name].result(timeout=timeout_s + 5)
    wait_for_leaders(admin, name, expected, timeout_s)


#: Upper bound on partitions for a test topic: enough for any test or benchmark, far below what would exhaust
#: the local brokers' file handles (each partition replica holds a few segment files open).
MAX_TEST_PARTITIONS = 10_000


def _check_topic_shape(
    partitions: int, replication_factor: int, replica_assignment: Sequence[Sequence[int]] | None
) -> None:
    if replica_assignment is not None:
        if not replica_assignment:
            raise ConfigError("replica_assignment: give one replica list per partition (got none)")
        for index, replicas in enumerate(replica_assignment):
            if not replicas:
                raise ConfigError(f"replica_assignment[{index}]: a partition needs at least one replica")
            if len(set(replicas)) != len(replicas):
                raise ConfigError(
                    f"replica_assignment[{index}]: broker ids must differ within a partition, got {list(replicas)}"
                )
        return
    if isinstance(partitions, bool) or not isinstance(partitions, int) or not 1 <= partitions <= MAX_TEST_PARTITIONS:
        raise ConfigError(f"partitions: expected a whole number from 1 to {MAX_TEST_PARTITIONS:,}, got {partitions!r}")
    if isinstance(replication_factor, bool) or not isinstance(replication_factor, int) or replication_factor < 1:
        raise ConfigError(f"replication_factor: expected a whole number >= 1, got {replication_factor!r}")


def wait_for_leaders(admin: Any, name: str, partitions: int, timeout_s: float) -> None:
    """Block until the metadata shows every partition of ``name`` with a leader (bounded by ``timeout_s``).

    CreateTopics returns when the controller has committed the topic; brokers learn it a moment later, and
    a describe in between answers UNKNOWN_TOPIC_OR_PART. Metadata is the only signal a client gets.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        topic = admin.list_topics(name, timeout=max(1.0, min(5.0, timeout_s))).topics.get(name)
        if (
            topic is not None
            and topic.error is None
            and len(topic.partitions) == partitions
            and all(p.leader >= 0 for p in topic.partitions.values())
        ):
            return
        if time.monotonic() >= deadline:
            raise ClusterError(f"topic {name!r} was created but had no leader for every partition after {timeout_s}s")
        time.sleep(0.1)
