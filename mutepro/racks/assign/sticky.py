"""A port of the Java client's ``AbstractStickyAssignor`` / ``CooperativeStickyAssignor`` with KIP-881 racks.

Two builders, picked like Java does:

- *constrained* (every member subscribes to the same topics): keep owned partitions up to the quota
  (``floor``/``ceil`` of partitions/members; with 17 partitions and 3 members, 5 or 6 each and exactly
  17 % 3 = 2 members at 6), then fill under-quota members round-robin - first only with partitions that have
  a replica on the member's rack, then with anything;
- *general* (unequal subscriptions): keep owned partitions, assign the rest to the least-loaded eligible
  member (rack-matching first), then move partitions while that strictly improves balance.

Priority is balance > rack locality > stickiness. The cooperative variant then withholds every partition
that changes owner: it is first revoked, and given to its new owner in the follow-up rebalance.

Java's tie-breaks include ``HashMap`` iteration order (which member keeps its owned partitions first), so
member order here is :func:`~mutepro.racks.assign.javacompat.hash_order` of the member ids - the order Java's
leader sees for a ``HashMap<String, Subscription>`` - and partition-movement sets are
:class:`~mutepro.racks.assign.javacompat.JavaHashSet`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator
from dataclasses import dataclass

from mutepro.racks.assign.javacompat import JavaHashSet, hash_order, string_key
from mutepro.racks.assign.model import (
    DEFAULT_GENERATION,
    Assignment,
    AssignmentStateError,
    Member,
    Scenario,
    TopicPartition,
    tp_key,
)
from mutepro.racks.assign.racks import use_rack_aware_assignment


@dataclass(frozen=True)
class StickyResult:
    """The full (target) assignment and the partitions changing owner (``None``: computed afterwards)."""

    assignment: Assignment
    transferring: dict[TopicPartition, str] | None


class _RackInfo:
    """Java's ``AbstractStickyAssignor.RackInfo``."""

    def __init__(self, scenario: Scenario, topics: list[str], order: list[str], prefer_rack_aware: bool) -> None:
        members = {m.member_id: m for m in scenario.members}
        consumers_by_rack: dict[str, list[str]] = {}
        for consumer in order:
            rack = members[consumer].rack
            if rack:
                consumers_by_rack.setdefault(rack, []).append(consumer)
        partition_racks: dict[TopicPartition, frozenset[str]] = {}
        if consumers_by_rack:
            for topic in topics:
                for tp in scenario.cluster.partitions(topic):
                    partition_racks[tp] = scenario.cluster.replica_racks(tp)
        all_partition_racks: set[str] = set().union(*partition_racks.values()) if partition_racks else set()
        if use_rack_aware_assignment(
            consumers_by_rack, all_partition_racks, partition_racks, prefer_rack_aware=prefer_rack_aware
        ):
            self.consumer_racks = {c: rack for rack, cs in consumers_by_rack.items() for c in cs}
            self.partition_racks = partition_racks
        else:
            self.consumer_racks = {}
            self.partition_racks = {}
        # Java counts candidate consumers per partition whenever any consumer has a rack, even when the
        # rack-aware path is off; the constrained builder then orders unassigned partitions by it.
        self.num_consumers_by_partition = {
            tp: sum(len(consumers_by_rack.get(r, ())) for r in racks) for tp, racks in partition_racks.items()
        }

    def racks_mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.consumer_racks.get(consumer)
        if rack is None:
            return False
        racks = self.partition_racks.get(tp)
        return racks is None or rack not in racks

    def sort_by_rack_consumers(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        if not self.num_consumers_by_partition:
            return partitions
        return sorted(partitions, key=lambda tp: self.num_consumers_by_partition.get(tp, 0))

    def next_rack_consumer(self, tp: TopicPartition, consumers: list[str], first_index: int) -> int:
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        for i in range(len(consumers)):
            index = (first_index + i) % len(consumers)
            rack = self.consumer_racks.get(consumers[index])
            if rack is not None and rack in racks:
                return index
        return -1


def _unassigned_two_pointer(
    all_sorted: list[TopicPartition], assigned_sorted: list[TopicPartition]
) -> list[TopicPartition]:
    """Java's two-pointer difference (literal: an assigned partition absent from ``all_sorted`` stalls it)."""
    if not assigned_sorted:
        return list(all_sorted)
    result: list[TopicPartition] = []
    it = iter(assigned_sorted)
    nxt = next(it)
    add_directly = False
    for tp in all_sorted:
        if add_directly or nxt != tp:
            result.append(tp)
        else:
            try:
                nxt = next(it)
            except StopIteration:
                add_directly = True
    return result


class _StickyCore:
    """Shared input preparation (``assignPartitions`` + ``allSubscriptionsEqual``)."""

    def __init__(self, scenario: Scenario, prefer_rack_aware: bool) -> None:
        self.scenario = scenario
        self.members = {m.member_id: m for m in scenario.members}
        self.order = hash_order(m.member_id for m in scenario.members)
        subscribed = {t for m in scenario.members for t in m.topics}
        self.partitions_per_topic = {
            t: len(scenario.cluster.topics[t]) for t in subscribed if scenario.cluster.topics.get(t)
        }
        self.rack_info = _RackInfo(scenario, list(self.partitions_per_topic), self.order, prefer_rack_aware)
        self.max_generation = DEFAULT_GENERATION
        self.owned: dict[str, list[TopicPartition]] = {}
        self.multiple_owners: set[TopicPartition] = set()
        self.all_equal = self._all_subscriptions_equal()

    def _generation(self, member: Member) -> int:
        return member.generation if member.generation is not None else DEFAULT_GENERATION

    def _all_subscriptions_equal(self) -> bool:
        equal = True
        topics: set[str] = set()
        previous_owner: dict[TopicPartition, str] = {}
        for consumer in self.order:
            member = self.members[consumer]
            if not topics:
                topics.update(member.topics)
            elif equal and not (len(member.topics) == len(topics) and topics.issuperset(member.topics)):
                equal = False
            generation = self._generation(member)
            self.max_generation = max(self.max_generation, generation)
            owned: list[TopicPartition] = []
            self.owned[consumer] = owned
            for tp in member.owned:
                if tp.topic not in self.partitions_per_topic:
                    continue
                other = previous_owner.get(tp)
                if other is None:
                    owned.append(tp)
                    previous_owner[tp] = consumer
                    continue
                other_generation = self._generation(self.members[other])
                if generation == other_generation:
                    # two members of one generation claim it: nobody keeps it
                    self.multiple_owners.add(tp)
                    _remove_first(self.owned[other], tp)
                    previous_owner[tp] = consumer
                elif generation > other_generation:
                    owned.append(tp)
                    _remove_first(self.owned[other], tp)
                    previous_owner[tp] = consumer
        return equal

    def sorted_topics(self) -> list[str]:
        return sorted(self.partitions_per_topic, key=string_key)

    def all_partitions(self, topics: list[str]) -> list[TopicPartition]:
        return [TopicPartition(t, i) for t in topics for i in range(self.partitions_per_topic[t])]


def _remove_first(items: list[TopicPartition], tp: TopicPartition) -> None:
    if tp in items:
        items.remove(tp)


class _Constrained:
    """Java's ``ConstrainedAssignmentBuilder`` (all subscriptions equal)."""

    def __init__(self, core: _StickyCore) -> None:
        self.core = core
        self.rack = core.rack_info
        total = sum(core.partitions_per_topic.values())
        n = len(core.owned)
        self.min_quota = total // n
        self.max_quota = math.ceil(total / n)
        self.expected_over_min = total % n
        self.current_over_min = 0
        self.assignment: Assignment = {c: [] for c in core.owned}
        self.assigned: list[TopicPartition] = []
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.transferring: dict[TopicPartition, str] = {}
        self.under_min: list[str] = []
        self.exactly_min: list[str] = []

    def build(self) -> StickyResult:
        self._assign_owned()
        all_sorted = self.core.all_partitions(self.core.sorted_topics())
        assigned_sorted = sorted(self.assigned, key=tp_key)
        unassigned = _unassigned_two_pointer(all_sorted, assigned_sorted)
        self.under_min.sort(key=string_key)
        self.exactly_min.sort(key=string_key)
        unassigned = self.rack.sort_by_rack_consumers(unassigned)
        unassigned = self._assign_rack_aware_round_robin(unassigned)
        self._assign_round_robin(unassigned)
        self._verify_unfilled()
        return StickyResult(self.assignment, self.transferring)

    def _assign_owned(self) -> None:
        for consumer, owned_list in self.core.owned.items():
            owned: list[TopicPartition] = []
            for tp in owned_list:
                if self.rack.racks_mismatch(consumer, tp):
                    self.maybe_revoked[tp] = consumer
                else:
                    owned.append(tp)
            owned.sort(key=lambda tp: (tp.partition, string_key(tp.topic)))
            for doubly in self.core.multiple_owners:
                _remove_first(owned, doubly)
            target = self.assignment[consumer]
            if len(owned) < self.min_quota:
                target.extend(owned)
                self.assigned.extend(owned)
                self.under_min.append(consumer)
            elif len(owned) >= self.max_quota and self.current_over_min < self.expected_over_min:
                self.current_over_min += 1
                if self.current_over_min == self.expected_over_min:
                    self.exactly_min.clear()
                target.extend(owned[: self.max_quota])
                self.assigned.extend(owned[: self.max_quota])
                for tp in owned[self.max_quota :]:
                    self.maybe_revoked[tp] = consumer
            else:
                target.extend(owned[: self.min_quota])
                self.assigned.extend(owned[: self.min_quota])
                for tp in owned[self.min_quota :]:
                    self.maybe_revoked[tp] = consumer
                if self.current_over_min < self.expected_over_min:
                    self.exactly_min.append(consumer)

    def _assign_rack_aware_round_robin(self, unassigned: list[TopicPartition]) -> list[TopicPartition]:
        if not self.rack.consumer_racks:
            return unassigned
        remaining: list[TopicPartition] = []
        next_index = 0
        for tp in unassigned:
            consumer: str | None = None
            index = self.rack.next_rack_consumer(tp, self.under_min, next_index)
            if index >= 0:
                consumer = self.under_min[index]
                count = len(self.assignment[consumer]) + 1
                if count >= self.min_quota:
                    self.under_min.remove(consumer)
                    if count < self.max_quota and self.current_over_min < self.expected_over_min:
                        self.exactly_min.append(consumer)
                else:
                    index += 1
                next_index = 0 if not self.under_min else index % len(self.under_min)
            elif self.exactly_min:
                first = self.rack.next_rack_consumer(tp, self.exactly_min, 0)
                if first >= 0:
                    consumer = self.exactly_min[first]
                    if len(self.assignment[consumer]) + 1 == self.max_quota:
                        del self.exactly_min[first]
                        self.current_over_min += 1
                        if self.current_over_min == self.expected_over_min:
                            self.exactly_min.clear()
            if consumer is not None:
                self._assign_new(tp, consumer)
            else:
                remaining.append(tp)
        return remaining

    def _assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        # Java walks ``under_min`` with an Iterator it removes through and restarts; ``pos`` is its cursor.
        pos = 0
        for tp in unassigned:
            if pos < len(self.under_min):
                consumer = self.under_min[pos]
                pos += 1
            elif not self.under_min and not self.exactly_min:
                raise AssignmentStateError(
                    f"no unfilled consumer left for {tp} (Java: 'No more unfilled consumers to be assigned.')"
                )
            elif not self.under_min:
                consumer = self.exactly_min.pop(0)
            else:
                pos = 0
                consumer = self.under_min[pos]
                pos += 1
            count = self._assign_new(tp, consumer)
            if count == self.min_quota:
                pos -= 1
                del self.under_min[pos]
                self.exactly_min.append(consumer)
            elif count == self.max_quota:
                self.current_over_min += 1

    def _assign_new(self, tp: TopicPartition, consumer: str) -> int:
        target = self.assignment[consumer]
        target.append(tp)
        revoked_from = self.maybe_revoked.get(tp)
        if (revoked_from is not None and revoked_from != consumer) or tp in self.core.multiple_owners:
            self.transferring[tp] = consumer
        return len(target)

    def _verify_unfilled(self) -> None:
        if not self.under_min:
            return
        if self.current_over_min != self.expected_over_min:
            raise AssignmentStateError(
                "fewer members than expected reached the max quota and no partitions are left "
                f"(members under min quota: {self.under_min})"
            )
        for consumer in self.under_min:
            if len(self.assignment[consumer]) != self.min_quota:
                raise AssignmentStateError(f"consumer {consumer} did not reach the min quota {self.min_quota}")


class _SortedConsumers:
    """Java's ``TreeSet`` ordered by (number of assigned partitions, member id) at insertion time."""

    def __init__(self, assignment: Assignment) -> None:
        self._assignment = assignment
        self._keys: list[tuple[int, bytes, str]] = []
        self._key_of: dict[str, tuple[int, bytes, str]] = {}

    def add(self, consumer: str) -> None:
        if consumer in self._key_of:
            return
        key = (len(self._assignment[consumer]), string_key(consumer), consumer)
        bisect.insort(self._keys, key)
        self._key_of[consumer] = key

    def remove(self, consumer: str) -> None:
        key = self._key_of.pop(consumer, None)
        if key is not None:
            self._keys.remove(key)

    def first(self) -> str:
        return self._keys[0][2]

    def last(self) -> str:
        return self._keys[-1][2]

    def __iter__(self) -> Iterator[str]:
        return iter([k[2] for k in self._keys])


class _Movements:
    """Java's ``PartitionMovements``: where moved partitions came from, so moves get undone, not chained."""

    def __init__(self) -> None:
        self.by_topic: dict[str, dict[tuple[str, str], JavaHashSet[TopicPartition]]] = {}
        self.moves: dict[TopicPartition, tuple[str, str]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        topic_moves = self.by_topic[tp.topic]
        topic_moves[pair].discard(tp)
        if not len(topic_moves[pair]):
            del topic_moves[pair]
        if not topic_moves:
            del self.by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        topic_moves = self.by_topic.setdefault(tp.topic, {})
        if pair not in topic_moves:
            topic_moves[pair] = JavaHashSet(TopicPartition.java_hash)
        topic_moves[pair].add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moves:
            src, _dst = self._remove_record(tp)
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def actual_partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        topic_moves = self.by_topic.get(tp.topic)
        if topic_moves is None:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = topic_moves.get((new, old))
        if reverse is None:
            return tp
        return reverse.first()


class _General:
    """Java's ``GeneralAssignmentBuilder`` (unequal subscriptions)."""

    def __init__(self, core: _StickyCore) -> None:
        self.core = core
        self.rack = core.rack_info
        self.ppt = core.partitions_per_topic
        self.total = sum(self.ppt.values())
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in self.ppt}
        self.consumer_topics: dict[str, list[str]] = {}
        self.current: Assignment = core.owned
        for consumer in core.order:
            topics = [t for t in core.members[consumer].topics if t in self.ppt]
            self.consumer_topics[consumer] = topics
            for t in topics:
                self.topic_consumers[t].append(consumer)
            self.current.setdefault(consumer, [])
        self.partition_consumer: dict[TopicPartition, str] = {tp: c for c, tps in self.current.items() for tp in tps}
        sorted_topics = sorted(self.ppt, key=lambda t: (len(self.topic_consumers[t]), string_key(t)))
        self.sorted_all = core.all_partitions(sorted_topics)
        self.sorted_consumers = _SortedConsumers(self.current)
        self.revocation_required = False
        self.movements = _Movements()

    def build(self) -> StickyResult:
        prev = self._prepopulate()
        assigned = self._assign_owned()
        if assigned:
            assigned.sort(key=lambda tp: (len(self.topic_consumers[tp.topic]), string_key(tp.topic), tp.partition))
            unassigned = _unassigned_two_pointer(self.sorted_all, assigned)
        else:
            unassigned = list(self.sorted_all)
        for consumer in self.current:
            self.sorted_consumers.add(consumer)
        self._balance(prev, unassigned)
        return StickyResult(self.current, None)

    def _prepopulate(self) -> dict[TopicPartition, tuple[str, int]]:
        prev: dict[TopicPartition, tuple[str, int]] = {}
        for consumer in self.core.order:
            member = self.core.members[consumer]
            generation = member.generation
            if generation is not None and generation < self.core.max_generation:
                self._update_prev(prev, member.owned, consumer, generation)
            elif generation is None and self.core.max_generation > DEFAULT_GENERATION:
                self._update_prev(prev, member.owned, consumer, DEFAULT_GENERATION)
        return prev

    @staticmethod
    def _update_prev(
        prev: dict[TopicPartition, tuple[str, int]],
        partitions: tuple[TopicPartition, ...],
        consumer: str,
        generation: int,
    ) -> None:
        for tp in partitions:
            if tp not in prev or generation > prev[tp][1]:
                prev[tp] = (consumer, generation)

    def _assign_owned(self) -> list[TopicPartition]:
        assigned: list[TopicPartition] = []
        for consumer, partitions in self.current.items():
            member = self.core.members[consumer]
            kept: list[TopicPartition] = []
            for tp in partitions:
                if tp.topic not in self.topic_consumers:
                    self.partition_consumer.pop(tp, None)
                elif tp.topic not in member.topics or self.rack.racks_mismatch(consumer, tp):
                    self.revocation_required = True
                else:
                    kept.append(tp)
                    assigned.append(tp)
            partitions[:] = kept
        return assigned

    def _max_assignment_size(self, topics: list[str]) -> int:
        if len(topics) == len(self.ppt):
            return self.total
        return sum(self.ppt[t] for t in topics)

    def _is_balanced(self) -> bool:
        smallest = len(self.current[self.sorted_consumers.first()])
        largest = len(self.current[self.sorted_consumers.last()])
        if smallest >= largest - 1:
            return True
        owner = {tp: c for c, tps in self.current.items() for tp in tps}
        for consumer in self.sorted_consumers:
            partitions = self.current[consumer]
            count = len(partitions)
            topics = self.consumer_topics[consumer]
            if count == self._max_assignment_size(topics):
                continue
            mine = set(partitions)
            for topic in topics:
                for i in range(self.ppt[topic]):
                    tp = TopicPartition(topic, i)
                    if tp not in mine and count + 1 < len(self.current[owner[tp]]):
                        return False
        return True

    @staticmethod
    def _balance_score(assignment: Assignment) -> int:
        sizes = [len(v) for v in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def _maybe_assign_partition(self, tp: TopicPartition, use_racks: bool) -> bool:
        for consumer in self.sorted_consumers:
            if tp.topic in self.consumer_topics[consumer] and not (
                use_racks and self.rack.racks_mismatch(consumer, tp)
            ):
                self.sorted_consumers.remove(consumer)
                self.current[consumer].append(tp)
                self.partition_consumer[tp] = consumer
                self.sorted_consumers.add(consumer)
                return True
        return False

    def _maybe_assign(self, partitions: list[TopicPartition], use_racks: bool, remove_assigned: bool) -> None:
        kept: list[TopicPartition] = []
        for tp in partitions:
            if not self.topic_consumers[tp.topic]:
                kept.append(tp)
                continue
            if not (self._maybe_assign_partition(tp, use_racks) and remove_assigned):
                kept.append(tp)
        partitions[:] = kept

    def _topic_can_move(self, topic: str) -> bool:
        return len(self.topic_consumers[topic]) >= 2

    def _consumer_can_move(self, consumer: str) -> bool:
        partitions = self.current[consumer]
        if len(partitions) < self._max_assignment_size(self.consumer_topics[consumer]):
            return True
        return any(self._topic_can_move(tp.topic) for tp in partitions)

    def _balance(self, prev: dict[TopicPartition, tuple[str, int]], unassigned: list[TopicPartition]) -> None:
        initializing = not self.current[self.sorted_consumers.last()]
        to_assign = unassigned
        if self.rack.consumer_racks:
            to_assign = list(unassigned)
            self._maybe_assign(to_assign, True, True)
        self._maybe_assign(to_assign, False, False)

        fixed_partitions = {
            TopicPartition(t, i)
            for t in self.topic_consumers
            if not self._topic_can_move(t)
            for i in range(self.ppt[t])
        }
        self.sorted_all = [tp for tp in self.sorted_all if tp not in fixed_partitions]
        unassigned[:] = [tp for tp in unassigned if tp not in fixed_partitions]

        fixed_assignments: Assignment = {}
        for consumer in self.consumer_topics:
            if not self._consumer_can_move(consumer):
                self.sorted_consumers.remove(consumer)
                fixed_assignments[consumer] = self.current.pop(consumer)

        before = {c: list(ps) for c, ps in self.current.items()}
        before_owner = dict(self.partition_consumer)
        if not self.revocation_required:
            self._perform_reassignments(unassigned, prev)
        performed = self._perform_reassignments(self.sorted_all, prev)
        if not initializing and performed and self._balance_score(self.current) >= self._balance_score(before):
            self.current.clear()
            self.current.update({c: list(ps) for c, ps in before.items()})
            self.partition_consumer = before_owner
        for consumer, partitions in fixed_assignments.items():
            self.current[consumer] = partitions
            self.sorted_consumers.add(consumer)

    def _perform_reassignments(
        self, partitions: list[TopicPartition], prev: dict[TopicPartition, tuple[str, int]]
    ) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                consumer = self.partition_consumer.get(tp)
                if consumer is None:
                    raise AssignmentStateError(f"expected {tp} to be assigned to a consumer")
                if tp in prev:
                    prev_consumer = prev[tp][0]
                    if prev_consumer not in self.current:
                        raise AssignmentStateError(
                            f"previous owner {prev_consumer} of {tp} takes no part in reassignment "
                            "(Java fails here with a NullPointerException)"
                        )
                    if len(self.current[consumer]) > len(self.current[prev_consumer]) + 1:
                        self._reassign(tp, prev_consumer)
                        performed = modified = True
                        continue
                if self._move_if_better(tp, consumer):
                    performed = modified = True
        return performed

    def _move_if_better(self, tp: TopicPartition, consumer: str) -> bool:
        size = len(self.current[consumer])
        consumer_rack = self.rack.consumer_racks.get(consumer)
        racks = self.rack.partition_racks.get(tp)
        if consumer_rack is not None and racks and consumer_rack in racks:
            for other in self.topic_consumers[tp.topic]:
                other_rack = self.rack.consumer_racks.get(other)
                if other_rack is None or other_rack not in racks:
                    continue
                if size > len(self.current[other]) + 1:
                    self._reassign_to_least_loaded(tp)
                    return True
        for other in self.topic_consumers[tp.topic]:
            if size > len(self.current[other]) + 1:
                self._reassign_to_least_loaded(tp)
                return True
        return False

    def _reassign_to_least_loaded(self, tp: TopicPartition) -> None:
        for candidate in self.sorted_consumers:
            if tp.topic in self.consumer_topics[candidate]:
                self._reassign(tp, candidate)
                return
        raise AssignmentStateError(f"no consumer subscribed to {tp.topic} to move {tp} to")

    def _reassign(self, tp: TopicPartition, new_consumer: str) -> None:
        consumer = self.partition_consumer[tp]
        to_move = self.movements.actual_partition_to_move(tp, consumer, new_consumer)
        old = self.partition_consumer[to_move]
        self.sorted_consumers.remove(old)
        self.sorted_consumers.remove(new_consumer)
        self.movements.move(to_move, old, new_consumer)
        self.current[old].remove(to_move)
        self.current[new_consumer].append(to_move)
        self.partition_consumer[to_move] = new_consumer
        self.sorted_consumers.add(new_consumer)
        self.sorted_consumers.add(old)


def sticky_target(scenario: Scenario, *, prefer_rack_aware: bool = False) -> StickyResult:
    """The sticky assignment Java converges to (before cooperative rebalancing withholds moving ones)."""
    core = _StickyCore(scenario, prefer_rack_aware)
    if not core.owned:
        return StickyResult({}, {})
    builder: _Constrained | _General = _Constrained(core) if core.all_equal else _General(core)
    result = builder.build()
    return StickyResult({c: sorted(ps, key=tp_key) for c, ps in result.assignment.items()}, result.transferring)


def transferring_partitions(scenario: Scenario, assignment: Assignment) -> dict[TopicPartition, str]:
    """Partitions newly assigned to a member while another member owned them (and now loses them)."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member in scenario.members:
        assigned = set(assignment.get(member.member_id, ()))
        owned = set(member.owned)
        for tp in assignment.get(member.member_id, ()):
            if tp not in owned:
                added[tp] = member.member_id
        revoked.update(tp for tp in member.owned if tp not in assigned)
    return {tp: c for tp, c in added.items() if tp in revoked}


@dataclass(frozen=True)
class CooperativeStickyAssignor:
    """``CooperativeStickyAssignor``: the sticky target minus partitions that must first be revoked."""

    prefer_rack_aware: bool = False
    name: str = "cooperative-sticky"

    def plan(self, scenario: Scenario) -> tuple[Assignment, Assignment, dict[TopicPartition, str]]:
        """(this rebalance's assignment, the target assignment, partitions moving -> new owner)."""
        result = sticky_target(scenario, prefer_rack_aware=self.prefer_rack_aware)
        target = result.assignment
        moving = result.transferring if result.transferring is not None else transferring_partitions(scenario, target)
        now = {c: [tp for tp in ps if moving.get(tp) != c] for c, ps in target.items()}
        return now, target, moving

    def assign(self, scenario: Scenario) -> Assignment:
        """Java's ``CooperativeStickyAssignor.assignPartitions`` result."""
        return self.plan(scenario)[0]
