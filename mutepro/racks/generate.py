"""What ``kafka-reassign-partitions --generate`` proposes on Kafka 4.x: every partition re-placed by the striped placer.

Kafka 4.3.1's ``ReassignPartitionsCommand`` keeps one ``StripedReplicaPlacer(new Random())`` and, topic by topic
(in ``HashMap`` order of the names), places ``PlacementSpec(0, partitions, RF)`` over the chosen brokers, all
marked unfenced, with their racks (or none when rack awareness is disabled; a mix of brokers with and without
rack is refused). Partition ``i`` gets the placer's ``i``-th replica list, whatever it had before, so a
generated plan usually moves most replicas even on a cluster that was already rack-balanced.

:func:`generate_plan` reproduces that proposal for a seed, as a :class:`~mutepro.racks.reassign.ReassignmentPlan`,
so it can be compared with :func:`~mutepro.racks.reassign.plan_reassignment`'s fewest-moves plan: same rack
guarantees, usually far fewer copies. Example: a topic whose replicas already cover every rack needs no move
in the minimal plan, while ``--generate`` re-places it from scratch and reorders or moves what the seed says.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mutepro.racks.assign.javacompat import JavaHashSet, string_hash
from mutepro.racks.audit import ClusterSnapshot
from mutepro.racks.javarandom import JavaRandom
from mutepro.racks.placement import PARTIAL_RACKS_MESSAGE, PlacementError
from mutepro.racks.reassign import PartitionMove, ReassignmentPlan
from mutepro.racks.striped import StripedReplicaPlacer, UsableBroker

REASON = "kafka-reassign-partitions --generate (striped placer)"


def tool_brokers(brokers: Mapping[int, str | None], *, rack_aware: bool = True) -> list[UsableBroker]:
    """The tool's broker list: all unfenced, with racks, or all without when rack awareness is off."""
    racked = [b for b, r in brokers.items() if r]
    if rack_aware and racked and len(racked) != len(brokers):
        missing = sorted(b for b, r in brokers.items() if not r)
        raise PlacementError(
            f"{PARTIAL_RACKS_MESSAGE} Brokers without broker.rack: {missing}. Set broker.rack everywhere, or "
            "plan without rack awareness (Kafka's --disable-rack-aware)."
        )
    return [UsableBroker(b, (r or None) if rack_aware else None) for b, r in brokers.items()]


def generate_assignment(
    current: Mapping[str, Mapping[int, tuple[int, ...]]],
    brokers: Iterable[UsableBroker],
    seed: int,
) -> dict[str, dict[int, tuple[int, ...]]]:
    """Topic -> partition -> replicas as the tool generates them with its placer seeded ``seed``.

    ``current`` gives each topic's partitions (their replica count is the RF kept). Topics are placed in
    the order a ``HashMap<String, ...>`` iterates them, each drawing on the same generator.
    """
    usable = list(brokers)
    placer = StripedReplicaPlacer(JavaRandom(seed))
    result: dict[str, dict[int, tuple[int, ...]]] = {}
    for topic in JavaHashSet(string_hash, sorted(current)):
        partitions = current[topic]
        rf = len(partitions[min(partitions)])
        placed = placer.place(len(partitions), rf, usable)
        result[topic] = {p: tuple(placed[i]) for i, p in enumerate(sorted(partitions))}
    return result


def generate_plan(
    snapshot: ClusterSnapshot, topics: Iterable[str] | None = None, *, seed: int, rack_aware: bool = True
) -> ReassignmentPlan:
    """The tool's ``--generate`` proposal for ``topics`` (default: all in the snapshot) as a plan."""
    wanted = sorted(set(topics) if topics is not None else set(snapshot.topics))
    current = {t: {p.partition: p.replicas for p in snapshot.topic_partitions(t)} for t in wanted}
    empty = [t for t, parts in current.items() if not parts]
    if empty:
        raise PlacementError(f"topics: {empty} are not in the snapshot; check the names")
    proposed = generate_assignment(current, tool_brokers(snapshot.brokers, rack_aware=rack_aware), seed)
    moves = tuple(
        PartitionMove(t, p, current[t][p], reps, REASON)
        for t in wanted
        for p, reps in sorted(proposed[t].items())
        if reps != current[t][p]
    )
    return ReassignmentPlan(moves, (), dict(snapshot.brokers))
