"""KIP-36 rack-aware replica placement, ported from Kafka's ``AdminUtils.assignReplicasToBrokers``.

Same inputs, same output as Java: for a fixed start index the assignment is deterministic, and a cluster where
only some brokers have a rack fails with Java's own message. With no fixed start index the start and the shift
are drawn from an injected :class:`random.Random`, as Java draws them from its static ``Random``.

How it works (worked on the KIP-36 vector, racks ``{0:r1, 1:r3, 2:r3, 3:r2, 4:r2, 5:r1}``):

1. The *rack-alternated list* takes one broker per rack in sorted rack order, lowest id first, round-robin:
   r1→0, r2→3, r3→1, r1→5, r2→4, r3→2, so ``L = [0, 3, 1, 5, 4, 2]``.
2. Partition ``p``'s leader is ``L[(p + start) % n]``: leaders walk the list, so leaders are even per broker
   and, because the list alternates racks, even per rack.
3. Followers are taken at ``replica_index(first, shift * num_racks, k, n)``, skipping a broker whose rack
   already holds a replica while some rack holds none (and a broker that already holds one while some
   broker holds none). With ``start = 0`` partition 0 gets ``[0, 3, 1]`` — three racks.
4. Every ``n`` partitions the shift grows by one, so partition 6 is ``[0, 4, 2]``, not ``[0, 3, 1]`` again.

Hence: RF <= racks gives at most one replica per rack; RF >= racks gives every rack at least one replica.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mutepro.errors import ConfigError

#: Java's message, kept word for word so operators can search for it; mutepro appends the fix.
PARTIAL_RACKS_MESSAGE = "Not all brokers have rack information for replica rack aware assignment."

Assignment = dict[int, list[int]]


class PlacementError(ConfigError):
    """A replica assignment cannot be computed from these brokers, partitions and replication factor."""


@dataclass(frozen=True)
class BrokerMetadata:
    """A broker id and its ``broker.rack`` (``None`` when the broker has none), like Java's BrokerMetadata."""

    id: int
    rack: str | None = None


BrokersLike = Mapping[int, "str | None"] | Iterable[BrokerMetadata]


def as_brokers(brokers: BrokersLike) -> list[BrokerMetadata]:
    """Normalise ``{id: rack}`` or an iterable of :class:`BrokerMetadata`, keeping the given order.

    Order matters only without racks: Java then walks brokers in the order the collection yields them.
    """
    if isinstance(brokers, Mapping):
        return [BrokerMetadata(int(b), rack or None) for b, rack in brokers.items()]
    return [b if isinstance(b, BrokerMetadata) else BrokerMetadata(*b) for b in brokers]


def replica_index(first_replica_index: int, second_replica_shift: int, replica: int, n_brokers: int) -> int:
    """Index in the broker list of follower ``replica`` (Java's ``AdminUtils.replicaIndex``).

    ``shift = 1 + (s + j) % (n - 1)`` is never 0, so a follower never lands on its leader: with ``n = 5``,
    ``first = 0``, ``s = 0`` the followers are at 1, 2, 3, 4.
    """
    shift = 1 + (second_replica_shift + replica) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


def rack_alternated_broker_list(broker_racks: Mapping[int, str]) -> list[int]:
    """Brokers ordered rack by rack in round-robin (Java's ``getRackAlternatedBrokerList``).

    Racks are visited in sorted order and each rack yields its brokers lowest id first; a rack that has run
    out is skipped. ``{0:r1, 1:r3, 2:r3, 3:r2, 4:r2, 5:r1}`` gives ``[0, 3, 1, 5, 4, 2]``.
    """
    by_rack: dict[str, list[int]] = {}
    for broker, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker)
    queues = {rack: sorted(ids) for rack, ids in by_rack.items()}
    racks = sorted(queues)
    result: list[int] = []
    position = {rack: 0 for rack in racks}
    rack_index = 0
    while len(result) < len(broker_racks):
        rack = racks[rack_index]
        if position[rack] < len(queues[rack]):
            result.append(queues[rack][position[rack]])
            position[rack] += 1
        rack_index = (rack_index + 1) % len(racks)
    return result


def assign_replicas_to_brokers(
    brokers: BrokersLike,
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    *,
    rng: random.Random | None = None,
) -> Assignment:
    """Partition id → replica list (leader first), exactly as Kafka's ``AdminUtils.assignReplicasToBrokers``.

    ``fixed_start_index >= 0`` makes the result deterministic (it is both the start index and the first
    shift, as in Java); otherwise both are drawn from ``rng``. ``start_partition_id`` is for adding
    partitions to an existing topic. Rack-aware when every broker has a rack, rack-unaware when none has;
    a mix raises :class:`PlacementError` with Java's message.
    """
    metas = as_brokers(brokers)
    if n_partitions <= 0:
        raise PlacementError(
            f"Number of partitions must be larger than 0 (n_partitions={n_partitions}); pass at least 1."
        )
    if replication_factor <= 0:
        raise PlacementError(
            f"Replication factor must be larger than 0 (replication_factor={replication_factor}); pass at least 1."
        )
    if replication_factor > len(metas):
        raise PlacementError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(metas)}. Lower "
            "replication_factor or add brokers."
        )
    rng = rng or random.Random()
    with_rack = [b for b in metas if b.rack is not None]
    if not with_rack:
        return _assign_rack_unaware(
            n_partitions,
            replication_factor,
            [b.id for b in metas],
            fixed_start_index,
            start_partition_id,
            rng,
        )
    if len(with_rack) != len(metas):
        missing = sorted(b.id for b in metas if b.rack is None)
        raise PlacementError(
            f"{PARTIAL_RACKS_MESSAGE} Brokers without broker.rack: {missing}. Set broker.rack on every "
            "broker (or on none) and restart them."
        )
    return _assign_rack_aware(
        n_partitions,
        replication_factor,
        {b.id: b.rack for b in metas if b.rack is not None},
        fixed_start_index,
        start_partition_id,
        rng,
    )


def _assign_rack_unaware(
    n_partitions: int,
    replication_factor: int,
    broker_list: Sequence[int],
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random,
) -> Assignment:
    n = len(broker_list)
    start_index = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    next_shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    partition = max(0, start_partition_id)
    result: Assignment = {}
    for _ in range(n_partitions):
        if partition > 0 and partition % n == 0:
            next_shift += 1
        first = (partition + start_index) % n
        replicas = [broker_list[first]]
        replicas += [broker_list[replica_index(first, next_shift, j, n)] for j in range(replication_factor - 1)]
        result[partition] = replicas
        partition += 1
    return result


def _assign_rack_aware(
    n_partitions: int,
    replication_factor: int,
    broker_racks: Mapping[int, str],
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random,
) -> Assignment:
    num_racks = len(set(broker_racks.values()))
    arranged = rack_alternated_broker_list(broker_racks)
    n = len(arranged)
    start_index = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    next_shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    partition = max(0, start_partition_id)
    result: Assignment = {}
    for _ in range(n_partitions):
        if partition > 0 and partition % n == 0:
            next_shift += 1
        first = (partition + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks_used = {broker_racks[leader]}
        brokers_used = {leader}
        k = 0
        for _j in range(replication_factor - 1):
            while True:
                broker = arranged[replica_index(first, next_shift * num_racks, k, n)]
                rack = broker_racks[broker]
                k += 1
                # Take the broker unless its rack already has a replica while another rack has none, or it
                # already holds one while another broker holds none (Java's two skip rules, same order).
                rack_ok = rack not in racks_used or len(racks_used) == num_racks
                broker_ok = broker not in brokers_used or len(brokers_used) == n
                if rack_ok and broker_ok:
                    replicas.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    break
        result[partition] = replicas
        partition += 1
    return result


# -- properties ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlacementCheck:
    """What an assignment guarantees, measured: rack spread per partition and leader/replica balance."""

    num_racks: int
    replication_factor: int
    #: partitions breaking KIP-36: a rack twice while RF <= racks, or a rack missing while RF >= racks
    rack_violations: tuple[int, ...]
    leaders_per_broker: Mapping[int, int]
    replicas_per_broker: Mapping[int, int]
    leaders_per_rack: Mapping[str, int]

    @property
    def rack_aware(self) -> bool:
        """True when no partition breaks the one-per-rack / every-rack rule."""
        return not self.rack_violations

    @property
    def leader_skew(self) -> int:
        """Most minus fewest leaders on any broker (0 or 1 means as even as the partition count allows)."""
        counts = list(self.leaders_per_broker.values())
        return max(counts) - min(counts) if counts else 0

    @property
    def replica_skew(self) -> int:
        """Most minus fewest replicas on any broker."""
        counts = list(self.replicas_per_broker.values())
        return max(counts) - min(counts) if counts else 0

    @property
    def rack_leader_skew(self) -> int:
        """Most minus fewest leaders on any rack."""
        counts = list(self.leaders_per_rack.values())
        return max(counts) - min(counts) if counts else 0


def partition_rack_violation(replicas: Sequence[int], broker_racks: Mapping[int, str], num_racks: int) -> bool:
    """True if ``replicas`` cover fewer than ``min(RF, racks)`` racks (RF 3, 3 racks, two on one rack)."""
    distinct = len({broker_racks.get(b) for b in replicas})
    return distinct < min(len(replicas), num_racks)


def check_placement(assignment: Mapping[int, Sequence[int]], broker_racks: Mapping[int, str]) -> PlacementCheck:
    """Measure rack spread and balance of ``assignment`` over the brokers in ``broker_racks``.

    Every broker in ``broker_racks`` is counted, even one with no leader, so an idle broker shows as skew.
    """
    num_racks = len(set(broker_racks.values()))
    leaders: Counter[int] = Counter({b: 0 for b in broker_racks})
    replicas: Counter[int] = Counter({b: 0 for b in broker_racks})
    rack_leaders: Counter[str] = Counter({r: 0 for r in broker_racks.values()})
    violations: list[int] = []
    rf = 0
    for partition, reps in sorted(assignment.items()):
        rf = max(rf, len(reps))
        if reps:
            leaders[reps[0]] += 1
            rack_leaders[broker_racks.get(reps[0], "?")] += 1
        for b in reps:
            replicas[b] += 1
        if partition_rack_violation(reps, broker_racks, num_racks):
            violations.append(partition)
    return PlacementCheck(
        num_racks=num_racks,
        replication_factor=rf,
        rack_violations=tuple(violations),
        leaders_per_broker=dict(sorted(leaders.items())),
        replicas_per_broker=dict(sorted(replicas.items())),
        leaders_per_rack=dict(sorted(rack_leaders.items())),
    )
