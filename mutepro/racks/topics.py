"""Create a topic with an explicit KIP-36 rack-aware replica assignment.

KRaft controllers place replicas with ``StripedReplicaPlacer`` (random offsets), which also spreads racks;
an explicit assignment makes the placement *reviewable and reproducible*: the same brokers, start index and
partition count always give the same replicas, so a runbook can show them before creating the topic.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

from mutepro.cluster.topics import wait_for_leaders
from mutepro.errors import ClusterError
from mutepro.racks.placement import Assignment, assign_replicas_to_brokers


def cluster_racks(admin: Any, *, timeout_s: float = 15.0) -> dict[int, str | None]:
    """``{broker id: broker.rack}`` of the live brokers, from ``describe_cluster``."""
    from confluent_kafka import KafkaException

    try:
        cluster = admin.describe_cluster(request_timeout=timeout_s).result(timeout=timeout_s + 5)
    except KafkaException as err:
        raise ClusterError(f"describe_cluster failed: {err}; check bootstrap.servers", kafka_error=err.args[0]) from err
    except TimeoutError as err:  # the future itself timed out: nothing answered at all
        raise ClusterError(
            f"the cluster did not answer describe_cluster within {timeout_s:g}s; check bootstrap.servers "
            "(host:port reachable, a broker running)"
        ) from err
    return {int(n.id): (n.rack or None) for n in sorted(cluster.nodes, key=lambda n: n.id)}


def missing_topics(admin: Any, topics: Iterable[str], *, timeout_s: float = 15.0) -> list[str]:
    """The names in ``topics`` the cluster does not have (sorted), from one metadata request."""
    from confluent_kafka import KafkaException

    try:
        known = admin.list_topics(timeout=timeout_s).topics
    except KafkaException as err:
        raise ClusterError(
            f"listing topics failed: {err}; check bootstrap.servers", kafka_error=err.args[0]
        ) from err
    return sorted(t for t in set(topics) if t not in known or known[t].error is not None)


def create_rack_aware_topic(
    admin: Any,
    name: str,
    partitions: int,
    replication_factor: int,
    *,
    brokers: Mapping[int, str | None] | None = None,
    config: Mapping[str, str] | None = None,
    fixed_start_index: int = -1,
    rng: random.Random | None = None,
    timeout_s: float = 30.0,
    wait: bool = True,
    assignment: Assignment | None = None,
) -> Assignment:
    """Create ``name`` with replicas placed by :func:`~mutepro.racks.placement.assign_replicas_to_brokers`.

    ``brokers`` defaults to the live cluster's racks. A precomputed ``assignment`` (e.g. from
    :func:`~mutepro.racks.striped.striped_placement`) is created as given instead. Returns the assignment
    used (partition → replicas) once every partition has a leader (unless ``wait=False``).
    Raises :class:`~mutepro.racks.placement.PlacementError` for impossible placements (before touching the
    cluster) and :class:`~mutepro.errors.ClusterError` when the broker rejects the topic.
    """
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import NewTopic

    if assignment is None:
        racks = dict(brokers) if brokers is not None else cluster_racks(admin, timeout_s=timeout_s)
        assignment = assign_replicas_to_brokers(racks, partitions, replication_factor, fixed_start_index, rng=rng)
    # confluent-kafka 2.16.1 rejects replica_assignment unless num_partitions matches it (-1 is refused).
    new_topic = NewTopic(
        name,
        num_partitions=len(assignment),
        replica_assignment=[assignment[p] for p in sorted(assignment)],
        config=dict(config or {}),
    )
    try:
        futures = admin.create_topics([new_topic], operation_timeout=timeout_s, request_timeout=timeout_s + 5)
        futures[name].result(timeout=timeout_s + 10)
    except KafkaException as err:
        raise ClusterError(
            f"creating topic {name!r} with a rack-aware assignment failed: {err}. A topic of that name may "
            "already exist, or a broker id in the assignment may be offline.",
            kafka_error=err.args[0] if err.args else None,
        ) from err
    if wait:
        wait_for_leaders(admin, name, len(assignment), timeout_s)
    return assignment

