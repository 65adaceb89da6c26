"""The new consumer group protocol's (KIP-848) server-side assignors, ported from Kafka 4.3.1's group coordinator.

With ``group.protocol=consumer`` the *group coordinator* computes the assignment with ``uniform`` (the
default, ``org.apache.kafka.coordinator.group.assignor.UniformAssignor``) or ``range``; the client's
``partition.assignment.strategy`` and KIP-881's rack logic are not used. In 4.3.1 neither assignor reads a
rack (the describer's ``racksForPartition`` is never called): ``client.rack`` still enables follower
fetching (KIP-392), but which member gets which partition ignores it.

The assignors work on topic *ids* (``Uuid``) and on ``java.util.HashMap``/``HashSet`` collections, and a
few of their choices follow those collections' iteration order, so the port reproduces it:

- members iterate in ``HashMap<String, ...>`` order of their member ids (the coordinator puts them into a
  default ``HashMap``), which decides who gets the extra partitions and, in the heterogeneous builder, the
  tie-break between equally loaded members;
- the homogeneous ``uniform`` builder lists unassigned partitions topic by topic in ``HashSet<Uuid>`` order
  (``Uuid.hashCode`` is the xor of its four 32-bit words), and keeps the first ``quota`` of a member's
  current partitions in ``HashSet<Integer>`` order when it must revoke some.

The member map is filled from the group's own member table (a ``TimelineHashMap``, whose order
:func:`~mutepro.racks.assign.javacompat.timeline_order` reproduces from the join order), then the member whose
heartbeat triggered the computation, if it was not a member yet. By default the coordinator computes at most
one assignment per second (``group.consumer.assignment.interval.ms`` = 1000), so a member that joins soon
after the last computation is assigned on a later heartbeat, when it is already in the table:
``GroupState.joined_last`` says which of the two happened. The two orders differ only when the joiner's id
shares a ``HashMap`` bucket with an earlier member's (about one join in eight with three members), and
:func:`mutepro.racks.assign.planner.plan` reports the other outcome as ``alternative`` when they do.

Subscriptions, too, depend on whether a member is in the table. A member in the table was rebuilt from its
``ConsumerGroupMemberMetadataValue`` record, whose topic names ``newConsumerGroupMemberSubscriptionRecord``
*sorts* (``Collections.sort``) before the record is written; the joiner's ``ConsumerGroupMember`` is built from
its heartbeat, as sent. Both become ``new HashSet<>(names)``, and two names sharing a bucket iterate in
insertion order, so ``[payments.v1, BB]`` and ``[BB, payments.v1]`` can walk their topics differently (see
:func:`coordinator_subscription`).
Member ids are drawn by the clients (22-character base64 uuids), so a plan with made-up ids shows a typical
assignment and its cost, and one with the real ids and the current assignment shows the exact one.

Inputs: :class:`GroupTopic` (name, id, partition count) and :class:`GroupMember` (member id, subscribed
topic names as sent, ``group.instance.id``, current target assignment). Output: member id -> topic ->
partitions. Example (3 members, one topic of 6 partitions, no current assignment): uniform gives every
member 2 partitions, range gives members sorted by id ``[0, 1]``, ``[2, 3]``, ``[4, 5]``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from mutepro.errors import ConfigError
from mutepro.racks.assign.javacompat import (
    JavaHashSet,
    capacity_for_copy,
    string_hash,
    string_key,
    timeline_order,
    to_int32,
)

#: The Kafka version whose group coordinator assignors this module follows.
KAFKA_VERSION = "4.3.1"
SERVER_ASSIGNORS = ("uniform", "range")

_MAX_ITERATION_COUNT = 16

GroupAssignment = dict[str, dict[str, set[int]]]


def _int64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


@dataclass(frozen=True, order=False)
class JavaUuid:
    """``org.apache.kafka.common.Uuid``: two signed 64-bit halves, printed as url-safe base64 (22 chars)."""

    msb: int
    lsb: int

    @classmethod
    def parse(cls, text: str) -> JavaUuid:
        """From Kafka's base64 form (e.g. a topic id printed by ``kafka-topics --describe``)."""
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (ValueError, TypeError) as err:
            raise ConfigError(f"topic id {text!r} is not a Kafka Uuid (22 url-safe base64 characters)") from err
        if len(raw) != 16:
            raise ConfigError(f"topic id {text!r} does not decode to 16 bytes; copy it from kafka-topics --describe")
        return cls(_int64(int.from_bytes(raw[:8], "big")), _int64(int.from_bytes(raw[8:], "big")))

    @classmethod
    def for_name(cls, name: str) -> JavaUuid:
        """A stable stand-in id for a topic known only by name (a real cluster draws ids at random)."""
        digest = hashlib.sha256(f"mutepro-topic:{name}".encode()).digest()
        return cls(_int64(int.from_bytes(digest[:8], "big")), _int64(int.from_bytes(digest[8:16], "big")))

    def java_hash(self) -> int:
        """``Uuid.hashCode()``: the xor of the high and low 32 bits of ``msb ^ lsb``."""
        x = (self.msb ^ self.lsb) & ((1 << 64) - 1)
        return to_int32((x >> 32) ^ x)

    def sort_key(self) -> tuple[int, int]:
        """``Uuid.compareTo``: most significant half, then least, as signed longs."""
        return (self.msb, self.lsb)

    def __str__(self) -> str:
        raw = (self.msb & ((1 << 64) - 1)).to_bytes(8, "big") + (self.lsb & ((1 << 64) - 1)).to_bytes(8, "big")
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass(frozen=True)
class GroupTopic:
    """A topic as the coordinator's metadata image describes it."""

    name: str
    topic_id: JavaUuid
    partitions: int


@dataclass(frozen=True)
class GroupMember:
    """One member of a ``group.protocol=consumer`` group, as the coordinator's target assignment builder sees it.

    ``topics`` is the subscription as the member sent it; ``assignment`` its current target assignment as
    (topic, partitions) pairs in the order the coordinator recorded them.
    """

    member_id: str
    topics: tuple[str, ...]
    instance_id: str | None = None
    rack: str | None = None
    assignment: tuple[tuple[str, tuple[int, ...]], ...] = ()


@dataclass(frozen=True)
class GroupState:
    """Members in join order and the topics they may subscribe to.

    ``joined_last`` (default False): the last member is joining now and its own join heartbeat computes the
    assignment, so it goes into the member map after the others and keeps its subscription as it sent it.
    False: every member is already in the coordinator's member table (a group as it stands, or a joiner whose
    assignment a later heartbeat computes), each rebuilt from its record with its topic names sorted.
    """

    members: tuple[GroupMember, ...]
    topics: Mapping[str, GroupTopic] = field(default_factory=dict)
    joined_last: bool = False

    @property
    def joiner(self) -> str | None:
        """The member id whose join heartbeat computes the assignment, or None when all are in the table."""
        return self.members[-1].member_id if self.joined_last and self.members else None

    def homogeneous(self) -> bool:
        """``ModernGroup.subscriptionType``: homogeneous when every member subscribes to the same names."""
        subscriptions = [frozenset(m.topics) for m in self.members]
        return not subscriptions or all(s == subscriptions[0] for s in subscriptions)


# -- the collections the coordinator builds ------------------------------------------------------------------


def _member_order(group: GroupState) -> list[str]:
    """``groupSpec.memberIds()``: the key order of the default ``HashMap<String, ...>`` the builder fills.

    ``TargetAssignmentBuilder.build`` puts the group's members in as its ``TimelineHashMap`` iterates them,
    then the updated member (a new key only when it is joining).
    """
    ids = [m.member_id for m in group.members]
    if group.joined_last:
        inserted = timeline_order(string_hash, ids[:-1]) + ids[-1:]
    else:
        inserted = timeline_order(string_hash, ids)
    return list(JavaHashSet(string_hash, inserted))


def coordinator_subscription(member: GroupMember, *, joining: bool) -> list[str]:
    """The topic names in the order the coordinator inserts them into the member's ``HashSet``.

    A member already in the group was rebuilt from its subscription record, whose names Kafka 4.3.1's
    ``GroupCoordinatorRecordHelpers.newConsumerGroupMemberSubscriptionRecord`` sorts (``String.compareTo``),
    and ``ConsumerGroupMember.Builder.updateWith`` turns into ``new HashSet<>(sorted names)``. Only the
    joining member's set is built from its heartbeat (``maybeUpdateSubscribedTopicNames``), in the order sent.
    Worked example: ``[payments.v1, BB]`` as sent stays so for a joiner; in the group it is ``[BB, payments.v1]``.
    """
    if joining:
        return list(member.topics)
    return sorted(set(member.topics), key=string_key)


def _subscribed_ids(member: GroupMember, topics: Mapping[str, GroupTopic], *, joining: bool) -> list[JavaUuid]:
    """``TopicIds`` over ``new HashSet<>(subscribedTopicNames)``: names in HashSet order, unknown ones skipped.

    The order matters when two names share a bucket: the one inserted first comes first, and which one that
    is depends on ``joining`` (see :func:`coordinator_subscription`).
    """
    names = coordinator_subscription(member, joining=joining)
    # HashSet(Collection) sizes its table from the collection's size: max(size / .75 + 1, 16)
    hashed = JavaHashSet(string_hash, names, capacity_for_copy(len(names)))
    return [topics[n].topic_id for n in hashed if n in topics]


def _current(member: GroupMember, ids: Mapping[str, JavaUuid]) -> list[tuple[JavaUuid, list[int]]]:
    """The current assignment as ``Assignment.fromRecord`` builds it: HashMap of topic id -> HashSet."""
    by_id = {ids[t]: ps for t, ps in member.assignment}
    order = JavaHashSet(JavaUuid.java_hash, by_id)
    return [
        (tid, list(JavaHashSet(lambda p: p, by_id[tid], capacity_for_copy(len(set(by_id[tid]))))))
        for tid in order
    ]


def _names(group: GroupState) -> dict[JavaUuid, str]:
    return {t.topic_id: name for name, t in group.topics.items()}


def _ids(group: GroupState) -> dict[str, JavaUuid]:
    return {name: t.topic_id for name, t in group.topics.items()}


def _check_current(group: GroupState) -> None:
    owners: dict[tuple[str, int], str] = {}
    for m in group.members:
        for topic, parts in m.assignment:
            if topic not in group.topics:
                raise ConfigError(f"members.{m.member_id}.owned: topic {topic!r} is not in topics")
            count = group.topics[topic].partitions
            for p in parts:
                if not 0 <= p < count:
                    raise ConfigError(
                        f"members.{m.member_id}.owned: {topic}-{p} does not exist ({topic} has {count} partitions)"
                    )
                if (topic, p) in owners and owners[(topic, p)] != m.member_id:
                    raise ConfigError(
                        f"members: {topic}-{p} is owned by both {owners[(topic, p)]} and {m.member_id}; "
                        "a target assignment gives each partition to one member"
                    )
                owners[(topic, p)] = m.member_id


# -- uniform --------------------------------------------------------------------------------------------------


def uniform_assign(group: GroupState) -> GroupAssignment:
    """``UniformAssignor.assign``: the homogeneous or heterogeneous builder, as the coordinator picks."""
    _check_current(group)
    if not group.members:
        return {}
    result = _uniform_homogeneous(group) if group.homogeneous() else _UniformHeterogeneous(group).build()
    names = _names(group)
    return {
        m.member_id: {names[t]: set(ps) for t, ps in result.get(m.member_id, {}).items() if ps}
        for m in group.members
    }


def _uniform_homogeneous(group: GroupState) -> dict[str, dict[JavaUuid, set[int]]]:
    members = {m.member_id: m for m in group.members}
    order = _member_order(group)
    ids = _ids(group)
    first = _subscribed_ids(members[order[0]], group.topics, joining=order[0] == group.joiner)
    # new HashSet<>(TopicIds): sized from the name count, filled in name order
    subscribed = list(JavaHashSet(JavaUuid.java_hash, first, capacity_for_copy(len(set(members[order[0]].topics)))))
    if not subscribed:
        return {}
    counts = {t.topic_id: t.partitions for t in group.topics.values()}
    assigned = {(ids[t], p) for m in group.members for t, ps in m.assignment for p in ps}
    unassigned: list[tuple[JavaUuid, int]] = []
    total = 0
    for tid in subscribed:
        unassigned += [(tid, p) for p in range(counts[tid]) if (tid, p) not in assigned]
        total += counts[tid]
    n_members = len(order)
    min_quota, extra_left = divmod(total, n_members)
    subscribed_set = set(subscribed)
    target: dict[str, dict[JavaUuid, set[int]]] = {}
    unfilled: list[tuple[str, int]] = []
    for index, member_id in enumerate(order):
        quota = min_quota
        has_extra = False
        if extra_left > 0:
            quota += 1
            has_extra = True
        kept: dict[JavaUuid, set[int]] = {}
        for tid, parts in _current(members[member_id], ids):
            if tid not in subscribed_set:
                continue  # the whole topic is dropped: nobody subscribes to it any more
            if len(parts) <= quota:
                quota -= len(parts)
                kept[tid] = set(parts)
                continue
            keep: set[int] = set()
            for p in parts:  # HashSet order decides which ones stay
                if quota > 0:
                    quota -= 1
                    keep.add(p)
                else:
                    unassigned.append((tid, p))
            if keep:
                kept[tid] = keep
        # Give the extra slot back unless this member is among the last ``extra_left`` members, which
        # must take it for the total to come out right.
        if quota > 0 and has_extra and n_members - index > extra_left:
            quota -= 1
            has_extra = False
        if quota > 0:
            unfilled.append((member_id, quota))
        if has_extra:
            extra_left -= 1
        target[member_id] = kept
    position = 0
    for member_id, quota in unfilled:
        for _ in range(quota):
            if position >= len(unassigned):
                break
            tid, p = unassigned[position]
            position += 1
            target[member_id].setdefault(tid, set()).add(p)
    if position < len(unassigned):
        raise ConfigError("Partitions were left unassigned (the uniform assignor's own consistency check)")
    return target


class _Balancer:
    """``MemberAssignmentBalancer``: walks members from least and most loaded ends of a sorted list."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.sorted: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: Sequence[int]) -> int:
        self.sorted = sorted(members, key=lambda i: (self.sizes[i], i))
        self.least_end = 0
        self.least_count = self.sizes[self.sorted[0]] - 1
        self.next_least = 0
        self.most_start = len(self.sorted)
        self.most_end = len(self.sorted)
        self.most_count = self.sizes[self.sorted[-1]] + 1
        self.next_most = len(self.sorted) - 1
        return self.sizes[self.sorted[-1]] - self.sizes[self.sorted[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(self.sorted) and self.sizes[self.sorted[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = self.sizes[self.sorted[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and self.sizes[self.sorted[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.sorted[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        member = self.sorted[self.next_most + 1]
        self.sorted[self.next_most + 1] = self.sorted[self.most_end - 1]
        self.sorted[self.most_end - 1] = member
        self.most_end -= 1

    def balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


class _UniformHeterogeneous:
    """``UniformHeterogeneousAssignmentBuilder``: members with different subscriptions."""

    def __init__(self, group: GroupState) -> None:
        self.group = group
        self.members = {m.member_id: m for m in group.members}
        self.member_ids = _member_order(group)
        self.index_of = {m: i for i, m in enumerate(self.member_ids)}
        self.counts = {t.topic_id: t.partitions for t in group.topics.values()}
        self.subscribers: dict[JavaUuid, list[int]] = {}
        self.subscriptions: list[set[JavaUuid]] = []
        for index, member_id in enumerate(self.member_ids):
            subscribed = _subscribed_ids(self.members[member_id], group.topics, joining=member_id == group.joiner)
            self.subscriptions.append(set(subscribed))
            for tid in subscribed:
                self.subscribers.setdefault(tid, []).append(index)
        self.sizes = [0] * len(self.member_ids)
        self.owners = {tid: [-1] * self.counts[tid] for tid in self.subscribers}
        self.target: dict[str, dict[JavaUuid, set[int]]] = {}

    def _sorted_topics(self, topics: Iterable[JavaUuid]) -> list[JavaUuid]:
        # most partitions per subscriber first, then fewer subscribers, then topic id
        return sorted(
            topics, key=lambda t: (-(self.counts[t] / len(self.subscribers[t])), len(self.subscribers[t]), t.sort_key())
        )

    def build(self) -> dict[str, dict[JavaUuid, set[int]]]:
        if not self.subscribers:
            return {}
        ids = _ids(self.group)
        for member_id in self.member_ids:
            index = self.index_of[member_id]
            kept: dict[JavaUuid, set[int]] = {}
            for tid, parts in _current(self.members[member_id], ids):
                if tid in self.subscriptions[index]:
                    self.sizes[index] += len(parts)
                    for p in parts:
                        self.owners[tid][p] = index
                    kept[tid] = set(parts)
            self.target[member_id] = kept
        unassigned = {
            tid: [p for p in range(self.counts[tid]) if owners[p] == -1]
            for tid, owners in self.owners.items()
            if -1 in owners
        }
        balancer = _Balancer(self.sizes)
        for tid in self._sorted_topics(unassigned):
            balancer.initialize(self.subscribers[tid])
            for p in unassigned[tid]:
                self._assign(tid, p, balancer.next_least_loaded())
        shared = [t for t in self.subscribers if len(self.subscribers[t]) >= 2]
        if shared:
            self._balance_topics(shared)
        return self.target

    def _balance_topics(self, topics: Iterable[JavaUuid]) -> None:
        ordered = self._sorted_topics(topics)
        last_rebalanced = -1
        balancer = _Balancer(self.sizes)
        for _ in range(_MAX_ITERATION_COUNT):
            for index, tid in enumerate(ordered):
                if index == last_rebalanced:
                    return  # a full pass since the last move changed nothing
                moved = self._balance_topic(tid, balancer)
                if moved > 0 or last_rebalanced == -1:
                    last_rebalanced = index

    def _balance_topic(self, tid: JavaUuid, balancer: _Balancer) -> int:
        moved = 0
        owners = self.owners[tid]
        if balancer.initialize(self.subscribers[tid]) <= 1:
            return moved
        partitions = sorted(range(self.counts[tid]), key=lambda p: (owners[p], p))
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, p in enumerate(partitions):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
        while not balancer.balanced():
            while True:
                most = balancer.next_most_loaded()
                if most == -1:
                    break
                if most not in end or end[most] - start[most] <= 0:
                    balancer.exclude_most_loaded()
                    continue
                break
            if most == -1:
                break
            partition = partitions[end[most] - 1]
            end[most] -= 1
            least = balancer.next_least_loaded()
            if balancer.balanced():
                break
            self._assign(tid, partition, least)
            moved += 1
        return moved

    def _assign(self, tid: JavaUuid, partition: int, member: int) -> None:
        old = self.owners[tid][partition]
        if old != -1:
            parts = self.target[self.member_ids[old]].get(tid)
            if parts is not None:
                parts.discard(partition)
                if not parts:
                    del self.target[self.member_ids[old]][tid]
            self.sizes[old] -= 1
        self.target[self.member_ids[member]].setdefault(tid, set()).add(partition)
        self.owners[tid][partition] = member
        self.sizes[member] += 1


# -- range ----------------------------------------------------------------------------------------------------


def _range_member_key(member: GroupMember) -> tuple[int, bytes]:
    # static members (by group.instance.id) first, then member ids, both in String.compareTo order
    if member.instance_id is not None:
        return (0, string_key(member.instance_id))
    return (1, string_key(member.member_id))


def range_assign(group: GroupState) -> GroupAssignment:
    """``RangeAssignor.assign`` (server side): per topic, contiguous ranges over members sorted by id.

    The current assignment plays no part: the range assignor is not sticky.
    """
    _check_current(group)
    by_id = {m.member_id: m for m in group.members}
    # a stable sort of the HashMap order: two members with one group.instance.id keep that order
    ordered = sorted((by_id[i] for i in _member_order(group)), key=_range_member_key)
    subscribers: dict[str, int] = {}
    for m in ordered:
        for name in set(m.topics):
            if name in group.topics:
                subscribers[name] = subscribers.get(name, 0) + 1
    state = {
        name: [count // subscribers[name], count % subscribers[name], 0]
        for name, count in ((n, group.topics[n].partitions) for n in subscribers)
    }  # topic -> [min quota, extra partitions left, next range start]
    result: GroupAssignment = {}
    for m in ordered:
        mine: dict[str, set[int]] = {}
        for name in set(m.topics):
            if name not in state:
                continue
            quota, extra, start = state[name]
            if extra > 0:
                quota += 1
                state[name][1] -= 1
            end = min(start + quota, group.topics[name].partitions)
            state[name][2] = end
            if start < end:
                mine[name] = set(range(start, end))
        result[m.member_id] = mine
    return {m.member_id: result[m.member_id] for m in group.members}


def server_assign(group: GroupState, assignor: str) -> GroupAssignment:
    """Run the server-side ``assignor`` (``uniform`` or ``range``) on ``group``."""
    if assignor == "uniform":
        return uniform_assign(group)
    if assignor == "range":
        return range_assign(group)
    raise ConfigError(f"server-side assignor {assignor!r} is not supported; use one of {', '.join(SERVER_ASSIGNORS)}")
