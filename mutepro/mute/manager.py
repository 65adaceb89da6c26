"""ProducerMuteManager (KIP-693's name): which partitions and brokers are muted, why, and since when.

One :class:`~mutepro.mute.breaker.MuteBreaker` and a set of detectors per partition; a broker-level detector
over them. The manager runs on the producer's driver thread (``evaluate`` every tick, ``record`` for every
delivery report); producing threads only read :meth:`snapshot`, an immutable
:class:`~mutepro.partition.snapshot.TopicSnapshot` swapped whole whenever the writable set or the load weights
change, so the hot path never takes a lock here.

The manager is the public face of parts built once in its constructor, each with one job: the records
(:class:`~mutepro.mute.registry.TopicRegistry`), the snapshots (:class:`~mutepro.mute.publisher.SnapshotPublisher`),
what follows a breaker transition (:class:`~mutepro.mute.reactions.Reactions`: events out, the rescue queue), the
broker rule (:class:`~mutepro.mute.brokers.BrokerJudge`), the producer's rack
(:class:`~mutepro.mute.rack.RackLocator`) and the decisions applied to the records
(:class:`~mutepro.mute.control.MuteControl`). A detection round (:meth:`evaluate`) reads the clock once.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from mutepro.detect.model import Delivery, MuteReason, Verdict
from mutepro.detect.stats import StatsSnapshot
from mutepro.mute.answered import answered_meanwhile
from mutepro.mute.breaker import Clock, PartitionKey
from mutepro.mute.brokers import BrokerJudge
from mutepro.mute.control import MuteControl
from mutepro.mute.events import EventLog, MuteEvent, MuteEventKind, opened_partitions
from mutepro.mute.factory import DetectorFactory, build_detectors
from mutepro.mute.publisher import SnapshotPublisher
from mutepro.mute.rack import RackLocator
from mutepro.mute.reactions import Reactions
from mutepro.mute.records import TopicRecord
from mutepro.mute.registry import TopicRegistry
from mutepro.mute.scan import LoadReader, scan_topic
from mutepro.mute.store import BreakerStore, MemoryStore
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.schema import TopicPolicy

#: re-exported: these were always importable from here
__all__ = ["DetectorFactory", "LoadReader", "MuteEvent", "MuteEventKind", "ProducerMuteManager", "opened_partitions"]


class ProducerMuteManager:
    """Mute state of one producer: per-partition breakers and detectors, broker detection, snapshots.

    Read API (any thread): :meth:`snapshot`, :meth:`is_muted`, :meth:`muted_partitions`, :meth:`muted_brokers`,
    :meth:`state`. Manual control (any thread): :meth:`mute`, :meth:`unmute`, :meth:`mute_broker`,
    :meth:`unmute_broker`. Driver-thread API: :meth:`ensure_topic`, :meth:`update_leaders`, :meth:`record`,
    :meth:`evaluate`.

    ``acks_all``: the producer's writes wait for every in-sync replica (acks=all, librdkafka's default; see
    :func:`mutepro.mute.brokers.acks_wait_for_isr`), so a waiting partition may be waiting on a follower.
    """

    def __init__(
        self,
        policy_for: Callable[[str], TopicPolicy],
        *,
        clock: Clock = time.monotonic,
        wall_clock: Clock = time.time,
        store: BreakerStore | None = None,
        detector_factory: DetectorFactory = build_detectors,
        on_event: Callable[[MuteEvent], None] | None = None,
        broker_policy: TopicPolicy | None = None,
        client_rack: str | None = None,
        rack_aware_all: bool = False,
        acks_all: bool = True,
    ) -> None:
        self._clock = clock
        self._lock = threading.RLock()
        self._events = EventLog(on_event)
        self.events: list[MuteEvent] = self._events.history  # bounded history for inspection (last 1,000)
        topics: dict[str, TopicRecord] = {}
        self._topics: Mapping[str, TopicRecord] = MappingProxyType(topics)
        self._publisher = SnapshotPublisher()
        #: topic -> current immutable snapshot, swapped whole (read lock-free by producing threads)
        self.snapshots: dict[str, TopicSnapshot] = self._publisher.snapshots
        self._reactions = Reactions(self._topics, self._publisher, self._events, clock)
        self._registry = TopicRegistry(
            policy_for, clock=clock, wall_clock=wall_clock, store=store if store is not None else MemoryStore(),
            detector_factory=detector_factory, on_transition=self._reactions.on_transition, topics=topics,
            acks_all=acks_all,
        )
        self._brokers = BrokerJudge((broker_policy or policy_for("")).broker)
        #: rack-aware partitioning (KIP-1123): the producer's rack (None: off) and each broker's, from the cluster
        self._locator = RackLocator(client_rack, rack_aware_all)
        self._control = MuteControl(
            self._registry, self._publisher, self._reactions, self._brokers, self._locator, clock
        )
        self._outstanding: Callable[[str, int], int] = _zero
        self._accumulated: Callable[[str, int], int] = _zero
        self._in_flight: Callable[[str, int], int] = _zero

    # -- read side ------------------------------------------------------------------------------------

    def snapshot(self, topic: str) -> TopicSnapshot | None:
        """The topic's current immutable snapshot (``None`` before its metadata is known)."""
        t = self._topics.get(topic)
        return t.snapshot if t is not None else None

    def is_muted(self, topic: str, partition: int) -> bool:
        snap = self.snapshot(topic)
        return snap is not None and partition in snap.muted

    def probing(self, topic: str) -> frozenset[int]:
        """Half-open partitions of ``topic`` that are waiting for probe messages."""
        t = self._topics.get(topic)
        return t.probing if t is not None else frozenset()

    def delivered_at(self, topic: str, partition: int) -> float | None:
        """When a report of a delivered message of the partition last came (None: never)."""
        part = self._registry.find(topic, partition)
        return part.delivered_at if part is not None else None

    def answered_meanwhile(self, topic: str, exclude: Collection[int], since: float) -> bool:
        """Whether a partition of ``topic`` led by a broker outside ``exclude`` delivered something after ``since``
        (:func:`mutepro.mute.answered.answered_meanwhile`: the evidence that the producer could be served
        elsewhere, which the slow-call verdicts also need)."""
        t = self._topics.get(topic)
        return t is not None and answered_meanwhile(t, exclude, since)

    def try_probe(self, topic: str, partition: int) -> bool:
        """Reserve one probe slot on a half-open partition."""
        part = self._registry.find(topic, partition)
        return part is not None and part.breaker.try_probe()

    def probe_wait(self, topic: str) -> float:
        """Seconds until some half-open partition of ``topic`` could take a probe: 0 now, ``inf`` when none can
        before a probe result comes back (or none is half-open)."""
        t = self._topics.get(topic)
        if t is None:
            return math.inf
        waits = (w for p in t.probing if (part := t.partitions.get(p)) and (w := part.breaker.probe_wait()) is not None)
        return min(waits, default=math.inf)

    def probe_unsent(self, topic: str, partition: int) -> None:
        """Give back a probe slot :meth:`try_probe` reserved for a message that could not be sent."""
        part = self._registry.find(topic, partition)
        if part is not None:
            part.breaker.probe_unsent()

    def muted_partitions(self) -> dict[str, list[int]]:
        """Topic -> muted partitions (open, half-open or forced)."""
        return {name: sorted(t.snapshot.muted) for name, t in self._topics.items() if t.snapshot and t.snapshot.muted}

    @property
    def client_rack(self) -> str | None:
        """The producer's rack when rack-aware partitioning is on, else ``None``."""
        return self._locator.client_rack

    def broker_racks(self) -> dict[int, str]:
        """Each broker's rack as last described by the cluster (empty until then, or when rack-aware is off)."""
        return self._locator.broker_racks()

    def local_partitions(self, topic: str) -> frozenset[int] | None:
        """The topic's partitions led in the producer's rack (``None`` when rack-aware partitioning is off)."""
        t = self._topics.get(topic)
        return t.local if t is not None else None

    def muted_brokers(self) -> dict[int, str]:
        """Broker id -> why the broker is muted (by detection or by hand)."""
        out = {b: v.describe() for b, v in self._brokers.verdicts.items()}
        out.update({b: str(MuteReason.MANUAL) for b in self._control.forced_brokers})
        return out

    def leader(self, topic: str, partition: int) -> int:
        part = self._registry.find(topic, partition)
        return part.leader if part is not None else -1

    # KIP-693's ProducerMuteManager also answers "how much is queued / in flight for this partition"; the counts
    # live in the producer, which binds them here (until then they read 0).
    def bind_counts(
        self,
        outstanding: Callable[[str, int], int],
        accumulated: Callable[[str, int], int],
        in_flight: Callable[[str, int], int],
    ) -> None:
        self._outstanding, self._accumulated, self._in_flight = outstanding, accumulated, in_flight

    def outstanding(self, topic: str, partition: int) -> int:
        """Messages handed to librdkafka for the partition and not yet reported (exact)."""
        return self._outstanding(topic, partition)

    def accumulated(self, topic: str, partition: int) -> int:
        """KIP-693 getAccumulatedBatches, in messages: queued in librdkafka, not yet sent (latest statistics)."""
        return self._accumulated(topic, partition)

    def in_flight(self, topic: str, partition: int) -> int:
        """KIP-693 getInFlightRequestCount, in messages: sent and awaiting the broker (latest statistics)."""
        return self._in_flight(topic, partition)

    def known_topics(self) -> list[str]:
        return list(self._topics)

    def policy(self, topic: str) -> TopicPolicy:
        return self._registry.policy(topic)

    def state(self) -> dict[str, Any]:
        """A JSON-ready snapshot of every partition's breaker, for metrics and ``repr``."""
        out: dict[str, Any] = {"topics": {}, "brokers": self.muted_brokers()}
        out["topics"], avoided = self._registry.describe()
        if avoided:
            out["avoided"] = avoided
        return out

    @property
    def avoid_episodes(self) -> int:
        """How many times a leader began to be avoided by unkeyed messages (the outlier rule's first step)."""
        return sum(t.avoid_episodes for t in list(self._topics.values()))

    def add_event_listener(self, listener: Callable[[MuteEvent], None]) -> None:
        """Also call ``listener`` (on the deciding thread: keep it short) with every :class:`MuteEvent` from now
        on, after the ``on_event`` given at construction (the producer's counters)."""
        self._events.add_listener(listener)

    # -- manual control ---------------------------------------------------------------------------------

    def mute(self, topic: str, partition: int, reason: str = MuteReason.MANUAL) -> None:
        """Mute a partition by hand; it stays muted until :meth:`unmute` (detectors and probes are ignored)."""
        with self._lock:
            part = self._registry.require(topic, partition)
            self._control.mute(self._topics[topic], part, reason)

    def trip(self, topic: str, partition: int, verdict: Verdict) -> None:
        """Mute a partition as a detector would (unlike :meth:`mute`): its breaker opens with ``verdict``, and
        after the backoff probes test it and unmute it when they are delivered."""
        with self._lock:
            part = self._registry.require(topic, partition)
            t = self._topics[topic]
            self._control.trip(t, part, verdict)
            self._publisher.publish(t)

    def unmute(self, topic: str, partition: int) -> None:
        """Lift a mute: a manual one is released, a detected one is closed at once (fresh windows)."""
        with self._lock:
            part = self._registry.require(topic, partition)
            self._control.unmute(self._topics[topic], part)

    def mute_broker(self, broker_id: int) -> None:
        """Mute every partition led by ``broker_id`` until :meth:`unmute_broker`.

        Raises :class:`ConfigError` for an id that leads nothing this manager knows while it knows some leaders
        (a typo would otherwise be listed as a muted broker that mutes nothing)."""
        with self._lock:
            self._control.mute_broker(broker_id)

    def unmute_broker(self, broker_id: int) -> None:
        """Lift :meth:`mute_broker`; partitions muted by hand one by one (:meth:`mute`) stay muted."""
        with self._lock:
            self._control.unmute_broker(broker_id)

    # -- driver-thread API ------------------------------------------------------------------------------

    def ensure_topic(
        self, topic: str, partition_count: int, leaders: Mapping[int, int],
        replicas: Mapping[int, Sequence[int]] | None = None,
        isrs: Mapping[int, Sequence[int]] | None = None,
    ) -> None:
        """Create (or grow) the topic's partitions and publish its first snapshot. ``replicas``: each partition's
        replica brokers, ``isrs``: its in-sync replicas (what a mute event names as the broker its messages wait
        on)."""
        with self._lock:
            t = self._registry.ensure(topic, partition_count, replicas, isrs)
            self._control.apply_leaders(t, leaders)
            self._publisher.publish(t)

    def update_broker_racks(self, racks: Mapping[int, str]) -> None:
        """Each broker's ``broker.rack`` (rack-aware partitioning): republish the topics whose local set moved."""
        with self._lock:
            if self._locator.update(racks):
                for t in self._topics.values():
                    self._control.relocate(t)

    def update_leaders(self, topic: str, leaders: Mapping[int, int]) -> None:
        with self._lock:
            t = self._topics.get(topic)
            if t is not None:
                self._control.apply_leaders(t, leaders)

    def record(self, topic: str, partition: int, delivery: Delivery) -> None:
        """Feed one final delivery report of a non-probe message to the partition's detectors."""
        self._registry.record(topic, partition, delivery)

    def record_many(self, topic: str, partition: int, calls: int, failures: int, slow: int, now: float) -> None:
        """Feed a tick's tally of reports to the partition's detectors (``slow``: over the topic's threshold)."""
        self._registry.record_many(topic, partition, calls, failures, slow, now)

    def probe_result(self, topic: str, partition: int, ok: bool, latency_s: float | None = None) -> None:
        """A granted probe's outcome: ``ok`` False for a failed delivery; a delivered one (``latency_s`` given)
        passes only within the topic's probe limit (the slow threshold, or the outlier rule's bar)."""
        t = self._topics.get(topic)
        part = t.partitions.get(partition) if t is not None else None
        if t is not None and part is not None:
            part.breaker.probe_result(ok and (latency_s is None or latency_s <= t.probe_limit_s))

    def evaluate(
        self,
        load_of: LoadReader,
        stats: StatsSnapshot | None = None,
        busy_of: Callable[[str], frozenset[int] | None] | None = None,
    ) -> list[PartitionKey]:
        """One detection round; returns the partitions that became muted since the last call (to rescue).

        For each closed partition every detector checks the current load; a verdict opens its breaker. Open
        breakers whose retry interval passed turn half-open. Then the broker detector looks at partitions
        muted per leader and at librdkafka's broker statistics and mutes every partition of a bad broker.
        ``busy_of(topic)``: the partitions with anything outstanding, sent or reported since the last round
        (the producer's tracker); idle ones are then looked at once a second (see ``scan.QUIET_REJUDGE_S``).
        """
        now = self._clock()
        with self._lock:
            for t in list(self._topics.values()):
                scan = scan_topic(t, load_of, now, busy_of(t.name) if busy_of is not None else None)
                for topic, part, verdict in scan.trips:
                    self._control.trip(topic, part, verdict)
                for p in scan.failed_probes:  # re-open now, with backoff
                    t.partitions[p].breaker.probe_result(False)
            for topic, part, verdict in self._brokers.judge(self._topics.values(), stats, now):
                self._control.trip(topic, part, verdict)
            for t in list(self._topics.values()):
                self._publisher.publish(t, after_round=True)
            return self._reactions.take_opened()

    def refresh_weights(self, topic: str, queue_sizes: Mapping[int, int]) -> None:
        """Re-weight the topic's writable partitions by their outstanding messages (KIP-794)."""
        t = self._topics.get(topic)
        if t is not None:
            self._publisher.publish(t, queue_sizes)


def _zero(topic: str, partition: int) -> int:
    return 0
