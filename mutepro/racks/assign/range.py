"""A port of the Java client's ``RangeAssignor`` with KIP-881 rack awareness (Kafka 3.5+).

Per topic, members are laid out in ``MemberInfo`` order (static members by group.instance.id, then member
ids) and each gets ``quota = partitions // members`` partitions, the first ``partitions % members`` one
extra. With racks, a first pass hands each member only partitions with a replica on its rack, within that
same per-member quota, and topics with the same subscribers and partition count ("co-partitioned") are
assigned partition-by-partition to one member so ``t1-p`` and ``t2-p`` stay together. A second, plain pass
fills what is left. Example (RF=1, racks a,b,c, t1 has 6 partitions): c0 on rack a gets t1-0,t1-3 (both on
broker a) instead of the plain t1-0,t1-1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mutepro.racks.assign.model import Assignment, Member, Scenario, TopicPartition, member_order_key, tp_key
from mutepro.racks.assign.racks import use_rack_aware_assignment


class _TopicState:
    """Java's ``RangeAssignor.TopicAssignmentState``: quota bookkeeping for one topic."""

    def __init__(
        self,
        topic: str,
        scenario: Scenario,
        members: list[Member],
        consumer_racks: dict[str, str],
        prefer_rack_aware: bool,
    ) -> None:
        self.topic = topic
        ordered = sorted(members, key=member_order_key)
        # member id -> rack (None when the member has none); insertion order is the range order
        self.consumers: dict[str, str | None] = {}
        for m in ordered:
            self.consumers.setdefault(m.member_id, consumer_racks.get(m.member_id))
        partitions = scenario.cluster.partitions(topic)
        self.unassigned: dict[TopicPartition, None] = dict.fromkeys(partitions)
        self.num_assigned = dict.fromkeys(self.consumers, 0)
        n = len(self.consumers)
        self.per_consumer = len(partitions) // n if n else 0
        self.with_extra = len(partitions) % n if n else 0
        all_consumer_racks = {r for r in self.consumers.values() if r is not None}
        self.partition_racks: dict[TopicPartition, frozenset[str]] = {}
        if all_consumer_racks:
            self.partition_racks = {tp: scenario.cluster.replica_racks(tp) for tp in partitions}
        all_partition_racks = set().union(*self.partition_racks.values()) if self.partition_racks else set()
        self.num_partitions = len(self.partition_racks)
        self.needs_rack_aware = use_rack_aware_assignment(
            all_consumer_racks, all_partition_racks, self.partition_racks, prefer_rack_aware=prefer_rack_aware
        )

    def racks_match(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.consumers[consumer]
        if rack is None:
            return True
        racks = self.partition_racks.get(tp)
        return racks is not None and rack in racks

    def max_assignable(self, consumer: str) -> int:
        limit = self.per_consumer + (1 if self.with_extra > 0 else 0) - self.num_assigned[consumer]
        return max(0, limit)

    def on_assigned(self, consumer: str, partitions: list[TopicPartition]) -> None:
        self.num_assigned[consumer] += len(partitions)
        if self.num_assigned[consumer] > self.per_consumer:
            self.with_extra -= 1
        for tp in partitions:
            self.unassigned.pop(tp, None)

    def group_key(self) -> tuple[tuple[str, str | None], ...]:
        """Java groups states by the (ordered) consumer map; equal maps -> same subscribers and racks."""
        return tuple(sorted(self.consumers.items(), key=lambda kv: kv[0]))


@dataclass(frozen=True)
class RangeAssignor:
    """``RangeAssignor``; ``prefer_rack_aware`` mirrors Java's test-only ``preferRackAwareLogic``."""

    prefer_rack_aware: bool = False
    name: str = "range"

    def assign(self, scenario: Scenario) -> Assignment:
        """Assign like Java's ``RangeAssignor.assignPartitions`` (each member's list sorted like Java's)."""
        members = scenario.members
        consumer_racks = {m.member_id: m.rack for m in members if m.rack}
        by_topic: dict[str, list[Member]] = {}
        for m in members:
            for topic in dict.fromkeys(m.topics):
                by_topic.setdefault(topic, []).append(m)
        states = [
            _TopicState(topic, scenario, subscribers, consumer_racks, self.prefer_rack_aware)
            for topic, subscribers in by_topic.items()
            if scenario.cluster.topics.get(topic)
        ]
        assignment: Assignment = {m.member_id: [] for m in members}
        use_rack_aware = any(s.needs_rack_aware for s in states)
        if use_rack_aware:
            self._assign_with_rack_matching(states, assignment)
        for state in states:
            _assign_ranges(state, lambda _c, _tp: True, assignment)
        # Java sorts only after a rack pass; otherwise the order is per-topic HashMap order. Sorting always
        # makes ours deterministic; membership is what Java defines.
        return {m: sorted(ps, key=tp_key) for m, ps in assignment.items()}

    @staticmethod
    def _assign_with_rack_matching(states: list[_TopicState], assignment: Assignment) -> None:
        groups: dict[tuple[tuple[str, str | None], ...], dict[int, list[_TopicState]]] = {}
        for state in states:
            groups.setdefault(state.group_key(), {}).setdefault(state.num_partitions, []).append(state)
        for by_count in groups.values():
            for num_partitions, co_partitioned in by_count.items():
                if len(co_partitioned) > 1:
                    _assign_co_partitioned(num_partitions, co_partitioned, assignment)
                elif co_partitioned[0].needs_rack_aware:
                    state = co_partitioned[0]
                    _assign_ranges(state, state.racks_match, assignment)


def _assign(consumer: str, partitions: list[TopicPartition], state: _TopicState, assignment: Assignment) -> None:
    assignment[consumer].extend(partitions)
    state.on_assigned(consumer, partitions)


def _assign_ranges(
    state: _TopicState, may_assign: Callable[[str, TopicPartition], bool], assignment: Assignment
) -> None:
    for consumer in state.consumers:
        if not state.unassigned:
            break
        limit = state.max_assignable(consumer)
        chosen: list[TopicPartition] = []
        for tp in state.unassigned:
            if len(chosen) >= limit:
                break
            if may_assign(consumer, tp):
                chosen.append(tp)
        if chosen:
            _assign(consumer, chosen, state, assignment)


def _assign_co_partitioned(num_partitions: int, states: list[_TopicState], assignment: Assignment) -> None:
    """Partition ``p`` of all co-partitioned topics goes to the first member matching racks for all."""
    remaining = list(states[0].consumers)
    for p in range(num_partitions):
        match = next(
            (
                c
                for c in remaining
                if all(s.racks_match(c, TopicPartition(s.topic, p)) and s.max_assignable(c) > 0 for s in states)
            ),
            None,
        )
        if match is None:
            continue
        for s in states:
            _assign(match, [TopicPartition(s.topic, p)], s, assignment)
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break
