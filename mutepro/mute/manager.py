"""ProducerMuteManager (KIP-693's name): which partitions and brokers are muted, why, and since when.

One :class:`~mutepro.mute.breaker.MuteBreaker` and a set of detectors per partition; a broker-level detector
over them. The manager runs on the producer's driver thread (``evaluate`` every tick, ``record`` for every
delivery report); producing threads only read :meth:`snapshot`, an immutable
:class:`~mutepro.partition.snapshot.TopicSnapshot` swapped whole whenever the writable set or the load weights
change, so the hot path never takes a lock here.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeGuard

from mutepro.detect.broker import BrokerDetector
from mutepro.detect.model import Delivery, MuteReason, Verdict
from mutepro.detect.protocols import BulkPartitionDetector, PartitionDetector
from mutepro.detect.stats import StatsSnapshot
from mutepro.errors import ConfigError
from mutepro.logs import get_logger
from mutepro.mute.breaker import BreakerState, MuteBreaker, PartitionKey, Transition
from mutepro.mute.brokers import own_evidence_by_leader, written_by_leader
from mutepro.mute.events import EventLog, Figure, MuteEvent, MuteEventKind, opened_partitions, plain_fields
from mutepro.mute.factory import build_detectors
from mutepro.mute.records import PartitionRecord, TopicRecord
from mutepro.mute.scan import LoadReader, scan_topic
from mutepro.mute.store import BreakerStore, MemoryStore
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.runtime import runtime_of
from mutepro.policy.schema import TopicPolicy

log = get_logger("mutepro.producer")

#: re-exported: MuteEvent and its kinds were always importable from here
__all__ = ["DetectorFactory", "LoadReader", "MuteEvent", "MuteEventKind", "ProducerMuteManager", "opened_partitions"]

Clock = Callable[[], float]
DetectorFactory = Callable[[str, TopicPolicy], list[PartitionDetector]]


def _bulk(det: PartitionDetector) -> TypeGuard[BulkPartitionDetector]:
    """Whether ``det`` takes reports in bulk, decided once per detector class: ``isinstance`` against a runtime
    Protocol walks the Protocol's attributes on every call (4 ms a tick at 1,200 partitions)."""
    kind = type(det)
    known = _BULK.get(kind)
    if known is None:
        known = _BULK[kind] = isinstance(det, BulkPartitionDetector)
    return known


_BULK: dict[type, bool] = {}


class ProducerMuteManager:
    """Mute state of one producer: per-partition breakers and detectors, broker detection, snapshots.

    Read API (any thread): :meth:`snapshot`, :meth:`is_muted`, :meth:`muted_partitions`, :meth:`muted_brokers`,
    :meth:`state`. Manual control (any thread): :meth:`mute`, :meth:`unmute`, :meth:`mute_broker`,
    :meth:`unmute_broker`. Driver-thread API: :meth:`ensure_topic`, :meth:`update_leaders`, :meth:`record`,
    :meth:`evaluate`.
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
    ) -> None:
        self._policy_for = policy_for
        self._clock = clock
        self._wall_clock = wall_clock
        self._store = store if store is not None else MemoryStore()
        self._detector_factory = detector_factory
        self._events = EventLog(on_event)
        self._topics: dict[str, TopicRecord] = {}
        #: topic -> current immutable snapshot, swapped whole (read lock-free by producing threads)
        self.snapshots: dict[str, TopicSnapshot] = {}
        self._lock = threading.RLock()
        self._version = 0
        bp = (broker_policy or policy_for("")).broker
        self._broker_detector = (
            BrokerDetector(
                bp.min_bad_partitions, bp.latency_factor, bp.min_latency_ms, latency_snapshots=bp.latency_snapshots,
                min_bad_pct=bp.min_bad_pct,
            )
            if bp.enabled
            else None
        )
        self._broker_verdicts: dict[int, Verdict] = {}
        self._forced_brokers: set[int] = set()
        #: rack-aware partitioning (KIP-1123): the producer's rack (None: off) and each broker's, from the cluster
        self._client_rack = client_rack
        self._rack_aware_all = rack_aware_all
        self._broker_racks: dict[int, str] = {}
        self._pending_open: list[PartitionKey] = []
        self._outstanding: Callable[[str, int], int] = _zero
        self._accumulated: Callable[[str, int], int] = _zero
        self._in_flight: Callable[[str, int], int] = _zero
        # Breakers being reset by _replace_breaker: their intermediate transitions (adopting the old shared
        # record, force_open + release) are bookkeeping, not mute decisions, so they emit no events.
        self._silenced: set[PartitionKey] = set()
        self.events: list[MuteEvent] = self._events.history  # bounded history for inspection (last 1,000)

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

    def try_probe(self, topic: str, partition: int) -> bool:
        """Reserve one probe slot on a half-open partition."""
        part = self._find(topic, partition)
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
        part = self._find(topic, partition)
        if part is not None:
            part.breaker.probe_unsent()

    def _find(self, topic: str, partition: int) -> PartitionRecord | None:
        t = self._topics.get(topic)
        return t.partitions.get(partition) if t is not None else None

    def muted_partitions(self) -> dict[str, list[int]]:
        """Topic -> muted partitions (open, half-open or forced)."""
        return {name: sorted(t.snapshot.muted) for name, t in self._topics.items() if t.snapshot and t.snapshot.muted}

    @property
    def client_rack(self) -> str | None:
        """The producer's rack when rack-aware partitioning is on, else ``None``."""
        return self._client_rack

    def broker_racks(self) -> dict[int, str]:
        """Each broker's rack as last described by the cluster (empty until then, or when rack-aware is off)."""
        return dict(self._broker_racks)

    def local_partitions(self, topic: str) -> frozenset[int] | None:
        """The topic's partitions led in the producer's rack (``None`` when rack-aware partitioning is off)."""
        t = self._topics.get(topic)
        return t.local if t is not None else None

    def muted_brokers(self) -> dict[int, str]:
        """Broker id -> why the broker is muted (by detection or by hand)."""
        out = {b: v.describe() for b, v in self._broker_verdicts.items()}
        out.update({b: str(MuteReason.MANUAL) for b in self._forced_brokers})
        return out

    def leader(self, topic: str, partition: int) -> int:
        t = self._topics.get(topic)
        part = t.partitions.get(partition) if t is not None else None
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
        t = self._topics.get(topic)
        return t.policy if t is not None else self._policy_for(topic)

    def state(self) -> dict[str, Any]:
        """A JSON-ready snapshot of every partition's breaker, for metrics and ``repr``."""
        out: dict[str, Any] = {"topics": {}, "brokers": self.muted_brokers()}
        for name, t in list(self._topics.items()):
            parts = {}
            for p, part in sorted(t.partitions.items()):
                snap = part.breaker.snapshot()
                parts[p] = {
                    "state": snap.state.value,
                    "leader": part.leader,
                    "reason": snap.reason.describe() if snap.reason else None,
                    "opens": snap.opens,
                }
            out["topics"][name] = parts
            if t.avoided:
                out.setdefault("avoided", {})[name] = sorted(t.avoided)
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
            part = self._require(topic, partition)
            part.muted_leader = part.leader
            part.forced_by = None
            part.breaker.force_open(reason)
            self._queue_open(topic, partition)
            self._rebuild(topic)

    def trip(self, topic: str, partition: int, verdict: Verdict) -> None:
        """Mute a partition as a detector would (unlike :meth:`mute`): its breaker opens with ``verdict``, and
        after the backoff probes test it and unmute it when they are delivered."""
        with self._lock:
            part = self._require(topic, partition)
            self._trip(self._topics[topic], part, verdict)
            self._rebuild(topic)

    def unmute(self, topic: str, partition: int) -> None:
        """Lift a mute: a manual one is released, a detected one is closed at once (fresh windows)."""
        with self._lock:
            part = self._require(topic, partition)
            part.forced_by = None
            if part.breaker.state is BreakerState.FORCED_OPEN:
                part.breaker.release()
            elif part.breaker.state is not BreakerState.CLOSED:
                self._replace_breaker(topic, part, "manual_unmute")
            self._rebuild(topic)

    def mute_broker(self, broker_id: int) -> None:
        """Mute every partition led by ``broker_id`` until :meth:`unmute_broker`.

        Raises :class:`ConfigError` for an id that leads nothing this manager knows while it knows some leaders
        (a typo would otherwise be listed as a muted broker that mutes nothing)."""
        with self._lock:
            known = {part.leader for t in self._topics.values() for part in t.partitions.values() if part.leader >= 0}
            if known and broker_id not in known:
                raise ConfigError(
                    f"broker_id: {broker_id} leads no partition of the known topics; known leaders: {sorted(known)}"
                )
            self._forced_brokers.add(broker_id)
            for name, t in list(self._topics.items()):
                for part in t.partitions.values():
                    if part.leader == broker_id:
                        self._force_for_broker(t, part, broker_id)
                self._rebuild(name)

    def unmute_broker(self, broker_id: int) -> None:
        """Lift :meth:`mute_broker`; partitions muted by hand one by one (:meth:`mute`) stay muted."""
        with self._lock:
            self._forced_brokers.discard(broker_id)
            for name, t in list(self._topics.items()):
                for part in t.partitions.values():
                    if part.forced_by == broker_id and part.breaker.state is BreakerState.FORCED_OPEN:
                        part.forced_by = None
                        part.breaker.release()
                self._rebuild(name)

    # -- driver-thread API ------------------------------------------------------------------------------

    def ensure_topic(
        self, topic: str, partition_count: int, leaders: Mapping[int, int],
        replicas: Mapping[int, Sequence[int]] | None = None,
    ) -> None:
        """Create (or grow) the topic's partitions and publish its first snapshot. ``replicas``: each partition's
        replica brokers (what a mute event names as the broker its messages wait on)."""
        with self._lock:
            t = self._topics.get(topic)
            if t is None:
                t = TopicRecord(topic, self._policy_for(topic))
                self._topics[topic] = t
            for p in range(partition_count):
                if p not in t.partitions:
                    t.partitions[p] = self._new_partition(topic, p, t.policy)
            if replicas is not None:
                t.replicas = {p: tuple(r) for p, r in replicas.items()}
            self._apply_leaders(t, leaders)
            self._rebuild(topic)

    def update_broker_racks(self, racks: Mapping[int, str]) -> None:
        """Each broker's ``broker.rack`` (rack-aware partitioning): republish the topics whose local set moved."""
        with self._lock:
            if self._client_rack is None or dict(racks) == self._broker_racks:
                return
            self._broker_racks = dict(racks)
            for t in self._topics.values():
                self._locate(t)

    def update_leaders(self, topic: str, leaders: Mapping[int, int]) -> None:
        with self._lock:
            t = self._topics.get(topic)
            if t is not None:
                self._apply_leaders(t, leaders)

    def record(self, topic: str, partition: int, delivery: Delivery) -> None:
        """Feed one final delivery report of a non-probe message to the partition's detectors."""
        t = self._topics.get(topic)
        part = t.partitions.get(partition) if t is not None else None
        if part is None:
            return
        part.reports += 1
        part.reported_ever = True
        for det in part.detectors:
            det.record(delivery)

    def record_many(self, topic: str, partition: int, calls: int, failures: int, slow: int, now: float) -> None:
        """Feed a tick's tally of reports to the partition's detectors (``slow``: over the topic's threshold)."""
        t = self._topics.get(topic)
        part = t.partitions.get(partition) if t is not None else None
        if part is None:
            return
        part.reports += calls
        part.reported_ever = part.reported_ever or calls > 0
        for det in part.detectors:
            if _bulk(det):
                det.record_many(calls, failures, slow, now)
                continue
            # a custom detector without record_many: one synthetic report per call
            threshold = t.runtime.slow_threshold_s if t is not None and t.runtime.slow_call_enabled else 0.0
            for i in range(calls):
                failed = i < failures
                is_slow = i >= calls - slow
                det.record(Delivery(not failed, threshold * 2 if is_slow else 0.0, now))

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
                    self._trip(topic, part, verdict)
                for p in scan.failed_probes:  # re-open now, with backoff
                    t.partitions[p].breaker.probe_result(False)
            self._evaluate_brokers(stats, now)
            for name in list(self._topics):
                self._rebuild(name, after_round=True)
            opened, self._pending_open = self._pending_open, []
            return opened

    def refresh_weights(self, topic: str, queue_sizes: Mapping[int, int]) -> None:
        """Re-weight the topic's writable partitions by their outstanding messages (KIP-794)."""
        self._rebuild(topic, queue_sizes)

    # -- internals -------------------------------------------------------------------------------------

    def _require(self, topic: str, partition: int) -> PartitionRecord:
        t = self._topics.get(topic)
        part = t.partitions.get(partition) if t is not None else None
        if part is None:
            known = sorted(t.partitions) if t is not None else []
            raise ConfigError(
                f"partition: {topic}[{partition}] is not known to this producer (known partitions: {known}); "
                "produce to the topic first so its metadata is loaded"
            )
        return part

    def _new_partition(self, topic: str, partition: int, policy: TopicPolicy) -> PartitionRecord:
        br = policy.breaker
        rt = runtime_of(policy)
        breaker = MuteBreaker(
            PartitionKey(topic, partition),
            retry_interval_s=rt.retry_interval_s,
            max_retry_interval_s=rt.max_retry_interval_s,
            backoff_multiplier=br.backoff_multiplier,
            half_open_probes=br.half_open_probes,
            probe_spacing_s=rt.probe_spacing_s,
            clock=self._clock,
            store=self._store,
            on_transition=self._on_transition,
            wall_clock=self._wall_clock,
            sync_interval_s=1.0,
        )
        breaker.tick()  # adopt a state other processes already published (shared store)
        return PartitionRecord(partition, breaker, self._detector_factory(topic, policy))

    def _replace_breaker(self, topic: str, part: PartitionRecord, why: str) -> None:
        """A fresh CLOSED breaker and fresh windows (leadership moved, or unmuted by hand)."""
        old = part.breaker.snapshot()
        t = self._topics[topic]
        key = PartitionKey(topic, part.partition)
        self._silenced.add(key)
        try:
            fresh = self._new_partition(topic, part.partition, t.policy)
            # The fresh breaker adopts the old shared record on its first tick (still open); force + release
            # publishes "closed" with a newer version, so this and every other process sharing the store close.
            fresh.breaker.force_open("reset")
            fresh.breaker.release()
        finally:
            self._silenced.discard(key)
        part.forced_by = None
        part.fresh_since = self._clock()
        part.breaker = fresh.breaker
        part.detectors = fresh.detectors
        self._emit(MuteEventKind.UNMUTE, topic, part.partition, part.leader, why, {"previous_state": old.state.value})

    def _trip(self, t: TopicRecord, part: PartitionRecord, verdict: Verdict) -> None:
        if t.not_closed is not None:
            t.not_closed.add(part.partition)
        part.muted_leader = part.leader
        part.fresh_since = None
        if part.breaker.trip(verdict):
            self._queue_open(t.name, part.partition)

    def _queue_open(self, topic: str, partition: int) -> None:
        # A trip queues the partition twice (trip()'s result and the CLOSED -> OPEN transition both report it);
        # a rescue needs it once. The list holds only the partitions opened since the last evaluate: tiny.
        key = PartitionKey(topic, partition)
        if key not in self._pending_open:
            self._pending_open.append(key)

    def _apply_leaders(self, t: TopicRecord, leaders: Mapping[int, int]) -> None:
        moved = False
        for p, leader in leaders.items():
            part = t.partitions.get(p)
            # A leaderless partition (-1: its only replica's broker is down, or an election is under way) keeps
            # its last known leader: its messages still wait on that broker, so a mute or a broker verdict is
            # blamed on it, and a later move 2 -> -1 -> 3 is still seen as leaving broker 2. The statistics
            # path already drops -1; the periodic metadata refresh passes it on.
            if part is None or leader < 0 or leader == part.leader:
                continue
            moved = True
            previous, part.leader = part.leader, leader
            if leader in self._forced_brokers:
                # Leadership moved onto (or a new topic is led by) a broker muted by hand: mute it too.
                self._force_for_broker(t, part, leader)
                continue
            # Leadership moved off the broker this partition was muted for, to a broker nobody suspects:
            # the new leader gets a fresh chance at once instead of waiting out the retry interval.
            if (
                previous >= 0
                and leader >= 0
                and part.breaker.state in (BreakerState.OPEN, BreakerState.HALF_OPEN)
                and part.muted_leader == previous
                and leader not in self._broker_verdicts
                and leader not in self._forced_brokers
            ):
                self._replace_breaker(t.name, part, f"leader_moved {previous}->{leader}")
        if moved or (t.local is None and self._client_rack is not None):
            self._locate(t)
        self._rebuild(t.name)

    def _locate(self, t: TopicRecord) -> None:
        """Recompute which of the topic's partitions are led in the producer's rack, and republish if that moved.

        Off (``local`` stays None) unless the producer has a rack and the topic's policy is rack-aware. Until the
        brokers' racks are known every partition counts as remote, which is the plain sticky choice."""
        if self._client_rack is None or not (self._rack_aware_all or t.policy.partitioner.rack_aware):
            return
        racks, mine = self._broker_racks, self._client_rack
        local = frozenset(p for p, part in t.partitions.items() if racks.get(part.leader) == mine)
        if local != t.local:
            t.local = local
            self._rebuild(t.name, force=True)

    def _force_for_broker(self, t: TopicRecord, part: PartitionRecord, broker_id: int) -> None:
        if part.breaker.state is BreakerState.FORCED_OPEN:
            return  # already muted by hand (for this broker or on its own): keep who asked for it
        part.muted_leader = broker_id
        part.forced_by = broker_id
        part.breaker.force_open(f"broker {broker_id} muted by hand")
        self._queue_open(t.name, part.partition)

    def _evaluate_brokers(self, stats: StatsSnapshot | None, now: float) -> None:
        if self._broker_detector is None:
            return
        bad = own_evidence_by_leader(self._topics.values())
        written = written_by_leader(self._topics.values()) if bad else None  # only the bad ones' share needs it
        verdicts = self._broker_detector.evaluate(stats, bad, now, written)
        for broker, verdict in verdicts.items():
            if broker not in self._broker_verdicts:
                log.warning("broker_muted", broker=broker, reason=verdict.describe(), **plain_fields(verdict.detail))
            only_counts = str(verdict.detail.get("cause", "")) == "bad_partitions"
            for t in self._topics.values():
                grace = t.runtime.retry_interval_s
                for part in t.partitions.values():
                    if part.leader != broker or part.breaker.state is not BreakerState.CLOSED:
                        continue
                    if only_counts and part.closed_at is not None and now - part.closed_at < grace:
                        continue  # it just passed its probes: direct evidence beats its neighbours' state
                    if not only_counts and t.waiting is not None and part.partition not in t.waiting:
                        # a broker slow or down by its statistics: only the partitions whose own messages wait
                        # beyond normal are its doing (an overloaded cluster's slow rtt mutes nothing)
                        continue
                    self._trip(t, part, verdict)
        for broker in set(self._broker_verdicts) - set(verdicts):
            log.info("broker_unmuted", broker=broker)
        self._broker_verdicts = verdicts

    def _rebuild(
        self, topic: str, queue_sizes: Mapping[int, int] | None = None, *, after_round: bool = False,
        force: bool = False,
    ) -> None:
        """Publish the topic's snapshot if its muted, probing or avoided partitions changed (or for new weights).

        ``after_round``: right after a detection round, whose scan left the partitions not closed (a superset:
        states are re-read) and half-open -- every partition outside them is closed -- so that 1,200 partitions
        are not read twice a tick. Other callers (manual mutes, leader moves) read every partition."""
        t = self._topics.get(topic)
        if t is None:
            return
        muted: list[int] = []
        half_open: list[int] = []
        # t.partitions is in partition order already (grown 0..n-1); the round's set is not
        seen = sorted(t.not_closed) if after_round and t.not_closed is not None else t.partitions
        for p in seen:
            part = t.partitions.get(p)
            if part is None:
                continue
            state = part.breaker.state
            if state is not BreakerState.CLOSED:
                muted.append(p)
                if state is BreakerState.HALF_OPEN:
                    half_open.append(p)
        probing = frozenset(half_open)
        old = t.snapshot
        if (
            old is not None
            and queue_sizes is None
            and not force
            and old.partition_count == len(t.partitions)
            and old.muted == frozenset(muted)
            and t.probing == probing
            and old.avoided == t.avoided
        ):
            return
        self._version += 1
        snap = TopicSnapshot.build(
            topic, len(t.partitions), muted, queue_sizes, adaptive=t.policy.partitioner.adaptive,
            version=self._version, probing=probing, avoided=t.avoided, local=t.local,
        )
        if old is not None and old.partition_count == snap.partition_count and old.writable == snap.writable:
            # A key's fallback depends on the partition count and the writable partitions only
            # (reroute.reroute_partition), so the memo of the snapshot before stays true: the weight refresh
            # (every 0.1 s) would otherwise empty it, and each rerouted key would take the producer's Python path
            # again (a saturated keyed loop over a stalled broker, 1,000 keys: ~3,400 such calls a second)
            snap.keep_reroute_memo(old)
        t.snapshot = snap
        self.snapshots[topic] = snap  # the producer hot path reads this dict directly
        t.probing = probing

    def _on_transition(self, tr: Transition) -> None:
        if tr.key is None or tr.key in self._silenced:
            return  # every breaker here is built with its PartitionKey; None would be someone else's
        topic, partition = tr.key
        t = self._topics.get(topic)
        part = t.partitions.get(partition) if t is not None else None
        broker = part.leader if part is not None else None
        target = tr.target
        if target in (BreakerState.OPEN, BreakerState.FORCED_OPEN):
            kind = MuteEventKind.REMUTE if tr.source is BreakerState.HALF_OPEN else MuteEventKind.MUTE
            if tr.source is BreakerState.CLOSED and part is not None:
                # a mute adopted from the shared store also needs its queued messages rescued
                self._queue_open(topic, partition)
        elif target is BreakerState.HALF_OPEN:
            kind = MuteEventKind.PROBE
        else:
            kind = MuteEventKind.UNMUTE
            if part is not None:
                part.closed_at = self._clock()
                for det in part.detectors:
                    det.reset()
        reason = tr.reason.reason if tr.reason is not None and kind is not MuteEventKind.UNMUTE else kind.value
        detail = dict(tr.reason.detail) if tr.reason is not None and kind is not MuteEventKind.UNMUTE else {}
        self._emit(kind, topic, partition, broker, reason, detail)
        if t is not None:
            self._rebuild(topic)

    def _emit(
        self, kind: MuteEventKind, topic: str, partition: int, broker: int | None, reason: str,
        detail: Mapping[str, Figure],
    ) -> None:
        self._events.announce(MuteEvent(kind, topic, partition, broker, reason, dict(detail), self._clock()))


def _zero(topic: str, partition: int) -> int:
    return 0
