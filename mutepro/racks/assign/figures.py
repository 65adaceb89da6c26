"""What an assignment costs: rack locality, estimated cross-rack bytes, balance and moves.

A partition is *local* to a member when one of its replicas is on the member's rack (KIP-881's notion, which
pays off with KIP-392 follower fetching); it is a *mismatch* when the member has a rack and no replica is on
it. Without follower fetching a consumer reads from the leader, so ``leader_cross_rack`` counts partitions
whose leader is on another rack. Bytes are the scenario's per-partition estimates (1 each when none were
given, so byte figures then count partitions). Example: RF=1 over racks a,b,c with three consumers on a,b,c
and t1 of 6 partitions: range with racks gives 0 mismatches; plain range (t1-0,t1-1 to the rack-a member)
gives 4 of 6 read cross-rack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from mutepro.racks.assign.model import Scenario, TopicPartition


@dataclass(frozen=True)
class MemberFigures:
    """Per-member locality."""

    member_id: str
    rack: str | None
    partitions: int
    local: int
    mismatched: int
    leader_cross_rack: int
    bytes: int
    cross_rack_bytes: int


@dataclass(frozen=True)
class Figures:
    """Totals for one assignment; lower is better for every count but ``partitions``/``local``."""

    partitions: int
    unassigned: int
    local: int
    mismatched: int
    no_rack: int
    leader_cross_rack: int
    bytes: int
    cross_rack_bytes: int
    leader_cross_rack_bytes: int
    min_per_member: int
    max_per_member: int
    moves: int
    members: tuple[MemberFigures, ...]

    @property
    def spread(self) -> int:
        """``max - min`` partitions per member: 0 or 1 is balanced."""
        return self.max_per_member - self.min_per_member

    def to_dict(self) -> dict[str, object]:
        """Plain data for JSON."""
        data = asdict(self)
        data["spread"] = self.spread
        return data

    def not_worse_than(self, other: Figures) -> bool:
        """True when this is at least as good as ``other`` on balance, rack mismatches and moves."""
        return (
            self.spread <= other.spread
            and self.unassigned <= other.unassigned
            and self.mismatched <= other.mismatched
            and self.moves <= other.moves
        )


def previous_owners(scenario: Scenario) -> dict[TopicPartition, set[str]]:
    """Who owned each partition before: the claimants with the highest generation (ties keep all of them)."""
    best: dict[TopicPartition, tuple[int, set[str]]] = {}
    for member in scenario.members:
        generation = member.generation if member.generation is not None else -1
        for tp in member.owned:
            current = best.get(tp)
            if current is None or generation > current[0]:
                best[tp] = (generation, {member.member_id})
            elif generation == current[0]:
                current[1].add(member.member_id)
    return {tp: owners for tp, (_g, owners) in best.items()}


def count_moves(scenario: Scenario, assignment: Mapping[str, Sequence[TopicPartition]]) -> int:
    """Owned partitions of still-subscribed topics that are not (now) with their previous owner."""
    owner_now = {tp: m for m, tps in assignment.items() for tp in tps}
    subscribed = {t for m in scenario.members for t in m.topics}
    moved = 0
    for tp, owners in previous_owners(scenario).items():
        if tp.topic not in subscribed or not 0 <= tp.partition < len(scenario.cluster.topics.get(tp.topic, ())):
            continue
        if owner_now.get(tp) not in owners:
            moved += 1
    return moved


def compute_figures(scenario: Scenario, assignment: Mapping[str, Sequence[TopicPartition]]) -> Figures:
    """All figures for ``assignment`` of ``scenario``."""
    cluster = scenario.cluster
    per_member: list[MemberFigures] = []
    for member in scenario.members:
        tps = list(assignment.get(member.member_id, ()))
        local = mismatched = leader_cross = total_bytes = cross_bytes = 0
        for tp in tps:
            size = cluster.bytes_of(tp)
            total_bytes += size
            if member.rack is None:
                continue
            if member.rack in cluster.replica_racks(tp):
                local += 1
            else:
                mismatched += 1
                cross_bytes += size
            if cluster.leader_rack(tp) != member.rack:
                leader_cross += 1
        per_member.append(
            MemberFigures(
                member.member_id,
                member.rack,
                len(tps),
                local,
                mismatched,
                leader_cross,
                total_bytes,
                cross_bytes,
            )
        )
    subscribed = {t for m in scenario.members for t in m.topics}
    all_tps = {tp for t in subscribed for tp in cluster.partitions(t)}
    assigned = {tp for tps in assignment.values() for tp in tps}
    no_rack = sum(f.partitions for f in per_member if f.rack is None)
    leader_cross_bytes = 0
    racks = {m.member_id: m.rack for m in scenario.members}
    for member_id, member_tps in assignment.items():
        rack = racks.get(member_id)
        if rack is not None:
            leader_cross_bytes += sum(cluster.bytes_of(tp) for tp in member_tps if cluster.leader_rack(tp) != rack)
    counts = [f.partitions for f in per_member] or [0]
    return Figures(
        partitions=len(assigned),
        unassigned=len(all_tps - assigned),
        local=sum(f.local for f in per_member),
        mismatched=sum(f.mismatched for f in per_member),
        no_rack=no_rack,
        leader_cross_rack=sum(f.leader_cross_rack for f in per_member),
        bytes=sum(f.bytes for f in per_member),
        cross_rack_bytes=sum(f.cross_rack_bytes for f in per_member),
        leader_cross_rack_bytes=leader_cross_bytes,
        min_per_member=min(counts),
        max_per_member=max(counts),
        moves=count_moves(scenario, assignment),
        members=tuple(per_member),
    )
