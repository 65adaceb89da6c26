"""KIP-881's switch: when is rack-aware assignment worth doing at all (``useRackAwareAssignment``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def use_rack_aware_assignment(
    consumer_racks: Iterable[str],
    partition_racks: Iterable[str],
    racks_per_partition: Mapping[Any, frozenset[str]],
    *,
    prefer_rack_aware: bool = False,
) -> bool:
    """Java's ``AbstractPartitionAssignor.useRackAwareAssignment``.

    Skipped when no consumer has a rack, when consumer and replica racks do not overlap (consumers on
    d,e,f with replicas on a,b,c), or when every partition has replicas on every rack (RF=3 over 3 racks:
    any consumer is local to any partition, so plain assignment is already optimal).
    ``prefer_rack_aware`` is Java's test-only switch that keeps the rack path in that last case.
    """
    consumers = set(consumer_racks)
    partitions = set(partition_racks)
    if not consumers or consumers.isdisjoint(partitions):
        return False
    if prefer_rack_aware:
        return True
    return not all(racks == partitions for racks in racks_per_partition.values())
