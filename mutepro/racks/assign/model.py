"""The assignor input: members (subscriptions), cluster metadata (partition -> replica racks), and results.

Mirrors what Java's ``ConsumerPartitionAssignor`` sees: a ``Subscription`` per member id (topics, rack,
owned partitions, generation, group.instance.id) and a ``Cluster`` whose partitions list replica nodes
with racks. Everything is a frozen dataclass so a scenario can be hashed, compared and replayed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from mutepro.errors import ConfigError, MuteproError
from mutepro.racks.assign.javacompat import string_key, topic_partition_hash

#: Java's ``AbstractStickyAssignor.DEFAULT_GENERATION``: a member that reports no generation.
DEFAULT_GENERATION = -1


@dataclass(frozen=True)
class TopicPartition:
    """One partition, printed like Java's ``TopicPartition.toString()`` (``t1-0``)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"

    def java_hash(self) -> int:
        """Java's ``hashCode()`` (drives ``HashSet`` order in the sticky port)."""
        return topic_partition_hash(self.topic, self.partition)

    @classmethod
    def parse(cls, text: str) -> TopicPartition:
        """Parse ``topic-N`` (the topic may itself contain dashes)."""
        topic, sep, number = text.strip().rpartition("-")
        if not sep or not topic or not number.lstrip("-").isdigit():
            raise ConfigError(f"partition {text!r} is not of the form 'topic-N' (e.g. 'orders-3')")
        return cls(topic, int(number))


def tp_key(tp: TopicPartition) -> tuple[bytes, int]:
    """Java's ``TopicPartitionComparator``: topic (``String.compareTo``), then partition number."""
    return (string_key(tp.topic), tp.partition)


@dataclass(frozen=True)
class Member:
    """One consumer's subscription, as the group leader receives it.

    ``generation`` is ``None`` when the member reports none (Java maps a negative generation to none too).
    ``owned`` is kept in the member's own order: Java's tie-breaks read it in that order.
    """

    member_id: str
    topics: tuple[str, ...]
    rack: str | None = None
    owned: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    group_instance_id: str | None = None

    def __post_init__(self) -> None:
        if not self.member_id:
            raise ConfigError("member_id must be a non-empty string (the consumer's member.id)")
        if self.generation is not None and self.generation < 0:
            object.__setattr__(self, "generation", None)
        if self.rack == "":
            object.__setattr__(self, "rack", None)


@dataclass(frozen=True)
class ClusterMetadata:
    """Brokers with racks and, per topic, each partition's replica broker ids (leader first)."""

    broker_racks: Mapping[int, str | None]
    topics: Mapping[str, tuple[tuple[int, ...], ...]]
    #: Estimated bytes a consumer reads per partition (for the cross-rack bytes figure); default 1 each.
    partition_bytes: Mapping[TopicPartition, int] = field(default_factory=dict)
    #: Topic ids (Kafka's base64 ``Uuid``) where known: the new protocol's assignors order topics by id.
    topic_ids: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "broker_racks", MappingProxyType(dict(self.broker_racks)))
        object.__setattr__(
            self,
            "topics",
            MappingProxyType({t: tuple(tuple(r) for r in ps) for t, ps in self.topics.items()}),
        )
        object.__setattr__(self, "partition_bytes", MappingProxyType(dict(self.partition_bytes)))
        object.__setattr__(self, "topic_ids", MappingProxyType(dict(self.topic_ids)))
        for topic, partitions in self.topics.items():
            for index, replicas in enumerate(partitions):
                unknown = [b for b in replicas if b not in self.broker_racks]
                if unknown:
                    raise ConfigError(
                        f"topics.{topic}[{index}] names broker(s) {unknown} that are not in brokers; "
                        "list every broker id with its rack (rack may be null)"
                    )

    def partitions(self, topic: str) -> list[TopicPartition]:
        """The partitions of ``topic`` in partition-number order (empty if the topic is unknown)."""
        return [TopicPartition(topic, i) for i in range(len(self.topics.get(topic, ())))]

    def replica_racks(self, tp: TopicPartition) -> frozenset[str]:
        """The racks holding a replica of ``tp`` (brokers without a rack are ignored, as in Java)."""
        replicas = self.replicas(tp)
        return frozenset(r for r in (self.broker_racks.get(b) for b in replicas) if r is not None)

    def replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        """The replica broker ids of ``tp``, leader first; empty if unknown."""
        partitions = self.topics.get(tp.topic, ())
        return partitions[tp.partition] if 0 <= tp.partition < len(partitions) else ()

    def leader_rack(self, tp: TopicPartition) -> str | None:
        """The rack of ``tp``'s leader (first replica), if known."""
        replicas = self.replicas(tp)
        return self.broker_racks.get(replicas[0]) if replicas else None

    def bytes_of(self, tp: TopicPartition) -> int:
        """The estimated bytes of ``tp`` (1 when no estimate was given, so figures count partitions)."""
        return self.partition_bytes.get(tp, 1)


@dataclass(frozen=True)
class Scenario:
    """Everything an assignor needs: the members (in the order the leader got them) and the metadata.

    ``joining`` (consumer protocol only): the id of the member joining now, whose join heartbeat computes the
    assignment; it must be the last member (members are in join order). None: every member is already in the
    group, as when planning a group as it stands.
    """

    members: tuple[Member, ...]
    cluster: ClusterMetadata
    joining: str | None = None

    def __post_init__(self) -> None:
        ids = [m.member_id for m in self.members]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ConfigError(f"members: member_id {duplicates} appears more than once; member ids must be unique")
        if self.joining is not None and (not ids or ids[-1] != self.joining):
            where = "is not a member" if self.joining not in ids else f"is listed before {ids[-1]!r}"
            raise ConfigError(
                f"joining: member {self.joining!r} {where}; members are in join order, so the member joining "
                "now is the last one: list it last"
            )

    def member(self, member_id: str) -> Member:
        """The member with this id."""
        for m in self.members:
            if m.member_id == member_id:
                return m
        raise KeyError(member_id)


Assignment = dict[str, list[TopicPartition]]


class AssignmentStateError(MuteproError):
    """An assignor reached a state Java's assignor also rejects (``IllegalStateException``/NPE in Java).

    This happens only for inconsistent input (e.g. owned partitions that do not exist); fix the scenario.
    """


def tps(*texts: str) -> tuple[TopicPartition, ...]:
    """``tps("t1-0", "t1-3")`` - shorthand for tests and scenario files."""
    return tuple(TopicPartition.parse(t) for t in texts)


def member_order_key(member: Member) -> tuple[int, bytes]:
    """Java's ``MemberInfo.compareTo``: static members (by group.instance.id) first, then by member id."""
    if member.group_instance_id is not None:
        return (0, string_key(member.group_instance_id))
    return (1, string_key(member.member_id))
