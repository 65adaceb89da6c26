"""Audit where the replicas and leaders of existing topics sit, rack by rack.

Three questions, each a cross-zone bill:

- **Partitions that miss racks** (KIP-36's rule broken): with RF 3 on racks a/b/c, replicas ``[1, 4, 2]``
  with 1 and 4 both on rack-a leave rack-c without a copy; losing rack-a then loses two of three replicas.
- **Leader skew per rack**: producers and non-follower consumers talk to leaders; 6 partitions led 4/1/1
  instead of 2/2/2 send two thirds of the topic's traffic to one zone.
- **Zones without a local replica**: a consumer with ``client.rack=rack-c`` can fetch a partition locally
  (KIP-392) only if the partition has a replica on rack-c; every partition without one is read cross-zone.

The snapshot is taken once (:func:`snapshot_cluster`) and audited as pure data (:func:`audit`), so the rules
are unit-tested without a broker.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mutepro.errors import ClusterError


class AdminLike(Protocol):
    """The part of ``confluent_kafka.admin.AdminClient`` the audit needs."""

    def describe_cluster(self, **kwargs: Any) -> Any: ...

    def describe_topics(self, topics: Any, **kwargs: Any) -> Any: ...

    def list_topics(self, *args: Any, **kwargs: Any) -> Any: ...


@dataclass(frozen=True)
class PartitionState:
    """One partition as the cluster describes it: replicas in preference order, live leader, ISR."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    leader: int = -1
    isr: tuple[int, ...] = ()


@dataclass(frozen=True)
class ClusterSnapshot:
    """Brokers with their racks and the partitions of the audited topics, at one moment."""

    brokers: Mapping[int, str | None]
    partitions: tuple[PartitionState, ...]

    @property
    def racks(self) -> tuple[str, ...]:
        """Distinct racks of live brokers, sorted."""
        return tuple(sorted({r for r in self.brokers.values() if r}))

    @property
    def topics(self) -> tuple[str, ...]:
        """Audited topic names, sorted."""
        return tuple(sorted({p.topic for p in self.partitions}))

    def topic_partitions(self, topic: str) -> tuple[PartitionState, ...]:
        """The partitions of ``topic`` in partition order."""
        return tuple(sorted((p for p in self.partitions if p.topic == topic), key=lambda p: p.partition))

    def rack_of(self, broker: int) -> str | None:
        """The rack of ``broker``; ``None`` for a broker without rack or not in the cluster."""
        return self.brokers.get(broker)


@dataclass(frozen=True)
class PartitionIssue:
    """A partition whose replicas cover fewer racks than ``min(RF, racks)``."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    replica_racks: tuple[str | None, ...]
    missing_racks: tuple[str, ...]
    duplicated_racks: tuple[str, ...]

    @property
    def moves_needed(self) -> int:
        """Replicas that must move: one per rack short of ``min(RF, racks)``."""
        have = len({r for r in self.replica_racks if r})
        return min(len(self.replicas), have + len(self.missing_racks)) - have


@dataclass(frozen=True)
class LeaderSkew:
    """Leaders of one topic per rack, when the spread is worse than its partition count forces."""

    topic: str
    leaders_per_rack: Mapping[str, int]
    skew: int
    ideal_skew: int


@dataclass(frozen=True)
class ZoneGap:
    """Partitions of ``topic`` with no replica on ``rack``: a consumer in that zone reads them cross-zone.

    Some gap is unavoidable when RF < racks: RF 2 over 3 racks leaves each partition off one rack, so of 6
    partitions each rack should still hold ``6 * 2 // 3 = 4`` (``min_local``). Placing every partition on
    rack-a and rack-b leaves rack-c with 0 local partitions: that gap is :attr:`excessive`.
    """

    topic: str
    rack: str
    partitions: tuple[int, ...]
    total_partitions: int
    #: partitions that a balanced placement keeps local to every rack
    min_local: int

    @property
    def local_partitions(self) -> int:
        """Partitions with a replica on ``rack``."""
        return self.total_partitions - len(self.partitions)

    @property
    def excessive(self) -> bool:
        """True when the rack holds fewer local partitions than a balanced placement gives it."""
        return self.local_partitions < self.min_local

    @property
    def cross_zone_fraction(self) -> float:
        """Share of the topic a consumer on ``rack`` must read from another zone."""
        return len(self.partitions) / self.total_partitions if self.total_partitions else 0.0


@dataclass(frozen=True)
class AuditReport:
    """Everything the audit found; :attr:`clean` is what ``mutepro racks audit`` exits on."""

    brokers: Mapping[int, str | None]
    topics: tuple[str, ...]
    partition_issues: tuple[PartitionIssue, ...] = ()
    leader_skews: tuple[LeaderSkew, ...] = ()
    zone_gaps: tuple[ZoneGap, ...] = ()
    brokers_without_rack: tuple[int, ...] = field(default=())

    @property
    def racks(self) -> tuple[str, ...]:
        """Distinct racks, sorted."""
        return tuple(sorted({r for r in self.brokers.values() if r}))

    @property
    def clean(self) -> bool:
        """No rack-missing partition, no leader skew, no excessive zone gap, every broker has a rack."""
        return not (
            self.partition_issues
            or self.leader_skews
            or self.brokers_without_rack
            or any(g.excessive for g in self.zone_gaps)
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (``mutepro racks audit --json``)."""
        return {
            "clean": self.clean,
            "brokers": {str(b): r for b, r in sorted(self.brokers.items())},
            "racks": list(self.racks),
            "brokers_without_rack": list(self.brokers_without_rack),
            "topics": list(self.topics),
            "partition_issues": [
                {
                    "topic": i.topic,
                    "partition": i.partition,
                    "replicas": list(i.replicas),
                    "replica_racks": list(i.replica_racks),
                    "missing_racks": list(i.missing_racks),
                    "duplicated_racks": list(i.duplicated_racks),
                    "moves_needed": i.moves_needed,
                }
                for i in self.partition_issues
            ],
            "leader_skews": [
                {
                    "topic": s.topic,
                    "leaders_per_rack": dict(s.leaders_per_rack),
                    "skew": s.skew,
                    "ideal_skew": s.ideal_skew,
                }
                for s in self.leader_skews
            ],
            "zone_gaps": [
                {
                    "topic": g.topic,
                    "rack": g.rack,
                    "partitions": list(g.partitions),
                    "total_partitions": g.total_partitions,
                    "cross_zone_fraction": round(g.cross_zone_fraction, 4),
                    "min_local": g.min_local,
                    "excessive": g.excessive,
                }
                for g in self.zone_gaps
            ],
        }


def partition_issue(state: PartitionState, brokers: Mapping[int, str | None]) -> PartitionIssue | None:
    """The issue of one partition, or ``None`` when it covers ``min(RF, racks)`` racks.

    RF 3 on 3 racks must cover all 3; RF 2 on 3 racks must cover 2 (no rack twice); RF 4 on 3 racks must
    cover 3 (one rack twice is unavoidable and fine).
    """
    racks = sorted({r for r in brokers.values() if r})
    replica_racks = tuple(brokers.get(b) for b in state.replicas)
    counts = Counter(r for r in replica_racks if r)
    # A replica on a broker that describe_cluster does not list (offline or gone) covers no rack.
    if len(counts) >= min(len(state.replicas), len(racks)):
        return None
    return PartitionIssue(
        topic=state.topic,
        partition=state.partition,
        replicas=state.replicas,
        replica_racks=replica_racks,
        missing_racks=tuple(r for r in racks if r not in counts),
        duplicated_racks=tuple(sorted(r for r, c in counts.items() if c > 1)),
    )


def leader_skew(
    topic: str, leaders: Iterable[int], brokers: Mapping[int, str | None], n_partitions: int
) -> LeaderSkew | None:
    """A :class:`LeaderSkew` when leaders spread worse than ``n_partitions`` over the racks allows.

    6 partitions on 3 racks can be led 2/2/2 (ideal skew 0); 7 can at best be 3/2/2 (ideal skew 1). A
    partition without a leader (-1) counts for no rack.
    """
    racks = sorted({r for r in brokers.values() if r})
    if not racks:
        return None
    per_rack: Counter[str] = Counter({r: 0 for r in racks})
    for leader in leaders:
        rack = brokers.get(leader)
        if rack:
            per_rack[rack] += 1
    ideal = 0 if n_partitions % len(racks) == 0 else 1
    skew = max(per_rack.values()) - min(per_rack.values())
    if skew <= ideal:
        return None
    return LeaderSkew(topic, dict(sorted(per_rack.items())), skew, ideal)


def audit(snapshot: ClusterSnapshot, *, leaders: str = "current") -> AuditReport:
    """Audit ``snapshot``; ``leaders="current"`` judges live leaders, ``"preferred"`` the first replicas."""
    if leaders not in ("current", "preferred"):
        raise ValueError(f"leaders must be 'current' or 'preferred', not {leaders!r}")
    brokers = snapshot.brokers
    racks = snapshot.racks
    issues: list[PartitionIssue] = []
    skews: list[LeaderSkew] = []
    gaps: list[ZoneGap] = []
    for topic in snapshot.topics:
        parts = snapshot.topic_partitions(topic)
        for state in parts:
            issue = partition_issue(state, brokers)
            if issue is not None:
                issues.append(issue)
        leader_ids = [p.leader if leaders == "current" else (p.replicas[0] if p.replicas else -1) for p in parts]
        skew = leader_skew(topic, leader_ids, brokers, len(parts))
        if skew is not None:
            skews.append(skew)
        # Each partition can be local to at most min(RF, racks) racks; a balanced topic shares those
        # slots evenly, so every rack is local to at least total // racks partitions.
        slots = sum(min(len(p.replicas), len(racks)) for p in parts)
        min_local = slots // len(racks) if racks else 0
        for rack in racks:
            missing = tuple(p.partition for p in parts if rack not in {brokers.get(b) for b in p.replicas})
            if missing:
                gaps.append(ZoneGap(topic, rack, missing, len(parts), min_local))
    return AuditReport(
        brokers=dict(brokers),
        topics=snapshot.topics,
        partition_issues=tuple(issues),
        leader_skews=tuple(skews),
        zone_gaps=tuple(gaps),
        brokers_without_rack=tuple(sorted(b for b, r in brokers.items() if not r)),
    )


def snapshot_cluster(
    admin: AdminLike,
    topics: Sequence[str] | None = None,
    *,
    include_internal: bool = False,
    timeout_s: float = 15.0,
) -> ClusterSnapshot:
    """Describe the brokers (with racks) and ``topics`` (all non-internal topics when ``None``)."""
    from confluent_kafka import KafkaException

    try:
        cluster = admin.describe_cluster(request_timeout=timeout_s).result(timeout=timeout_s + 5)
        brokers = {int(n.id): (n.rack or None) for n in cluster.nodes}
        if topics is None:
            metadata = admin.list_topics(timeout=timeout_s)
            topics = sorted(t for t in metadata.topics if include_internal or not t.startswith("__"))
        partitions = _describe_topics(admin, list(topics), timeout_s) if topics else []
    except KafkaException as err:
        raise ClusterError(
            f"could not describe the cluster or topics {list(topics or [])}: {err}. Check bootstrap.servers "
            "and that the topics exist.",
            kafka_error=err.args[0] if err.args else None,
        ) from err
    return ClusterSnapshot(brokers=brokers, partitions=tuple(partitions))


def _describe_topics(admin: AdminLike, topics: list[str], timeout_s: float) -> list[PartitionState]:
    """Every partition of ``topics``, as DescribeTopics answers.

    UNKNOWN_TOPIC_OR_PART is retried until ``timeout_s`` (every 0.1 s), as Kafka's own clients treat it (a
    retriable error): CreateTopics returns once the controller has the topic, and each broker learns it from the
    metadata log a moment later. A describe sent right after a create -- even after another broker's metadata
    showed every partition led -- can reach a broker that does not know it yet (seen in CI)."""
    from confluent_kafka import KafkaError, KafkaException, TopicCollection

    deadline = time.monotonic() + timeout_s
    while True:
        partitions: list[PartitionState] = []
        try:
            futures = admin.describe_topics(TopicCollection(topics), request_timeout=timeout_s)
            for name, fut in futures.items():
                desc = fut.result(timeout=timeout_s + 5)
                for p in desc.partitions:
                    partitions.append(
                        PartitionState(
                            topic=name,
                            partition=int(p.id),
                            replicas=tuple(int(n.id) for n in p.replicas),
                            leader=int(p.leader.id) if p.leader is not None else -1,
                            isr=tuple(int(n.id) for n in p.isr),
                        )
                    )
            return partitions
        except KafkaException as err:
            code = err.args[0].code() if err.args and hasattr(err.args[0], "code") else None
            if code != KafkaError.UNKNOWN_TOPIC_OR_PART or time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


def audit_cluster(
    admin: AdminLike,
    topics: Sequence[str] | None = None,
    *,
    include_internal: bool = False,
    timeout_s: float = 15.0,
) -> AuditReport:
    """Snapshot the live cluster and audit it."""
    return audit(snapshot_cluster(admin, topics, include_internal=include_internal, timeout_s=timeout_s))
