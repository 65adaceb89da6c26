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
(:class:`~mutepro.mute.control.MuteControl`). Three views share them: :attr:`ProducerMuteManager.rounds`
(:class:`~mutepro.mute.rounds.Rounds`, the driver thread's inputs and the detection round, which reads the clock
once), :attr:`ProducerMuteManager.probes` (:class:`~mutepro.mute.probes.ProbeDesk`, half-open partitions' probe
slots) and :attr:`ProducerMuteManager.racks` (:class:`~mutepro.mute.rack.RackView`, rack-aware partitioning).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from mutepro.detect.model import MuteReason, Verdict
from mutepro.mute.answered import answered_meanwhile
from mutepro.mute.breaker import Clock
from mutepro.mute.brokers import BrokerJudge
from mutepro.mute.control import MuteControl
from mutepro.mute.events import EventLog, MuteEvent, MuteEventKind, opened_partitions
from mutepro.mute.factory import DetectorFactory, build_detectors
from mutepro.mute.probes import ProbeDesk
from mutepro.mute.publisher import SnapshotPublisher
from mutepro.mute.rack import RackLocator, RackView
from mutepro.mute.reactions import Reactions
from mutepro.mute.records import TopicRecord
from mutepro.mute.registry import TopicRegistry
from mutepro.mute.rounds import Rounds
from mutepro.mute.scan import LoadReader
from mutepro.mute.store import BreakerStore, MemoryStore
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.schema import TopicPolicy

#: re-exported: these were always importable from here
__all__ = ["DetectorFactory", "LoadReader", "MuteEvent", "MuteEventKind", "ProducerMuteManager", "QueueCounts",
           "opened_partitions"]


class ProducerMuteManager:
    """Mute state of one producer: per-partition breakers and detectors, broker detection, snapshots.

    Read API (any thread): :meth:`snapshot`, :meth:`is_muted`, :meth:`muted_partitions`, :meth:`muted_brokers`,
    :meth:`state`, and KIP-693's counts (:meth:`outstanding`, :meth:`accumulated`, :meth:`in_flight`). Manual
    control (any thread): :meth:`mute`, :meth:`unmute`, :meth:`mute_broker`, :meth:`unmute_broker`. The driver
    thread's inputs and the detection round: :attr:`rounds`; probe slots: :attr:`probes`; rack-aware
    partitioning: :attr:`racks`.

    ``counts``: where KIP-693's per-partition counts come from (the producer's; they read 0 without one).

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
        counts: QueueCounts | None = None,
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
        self._counts = counts if counts is not None else QueueCounts()
        self.rounds = Rounds(
            registry=self._registry, control=self._control, publisher=self._publisher, reactions=self._reactions,
            brokers=self._brokers, locator=self._locator, lock=self._lock, clock=clock,
        )
        self.probes = ProbeDesk(self._registry)
        self.racks = RackView(self._locator, self._topics)

    # -- read side ------------------------------------------------------------------------------------

    def snapshot(self, topic: str) -> TopicSnapshot | None:
        """The topic's current immutable snapshot (``None`` before its metadata is known)."""
        t = self._topics.get(topic)
        return t.snapshot if t is not None else None

    def is_muted(self, topic: str, partition: int) -> bool:
        snap = self.snapshot(topic)
        return snap is not None and partition in snap.muted

    def answered_meanwhile(self, topic: str, exclude: Collection[int], since: float) -> bool:
        """Whether a partition of ``topic`` led by a broker outside ``exclude`` delivered something after ``since``
        (:func:`mutepro.mute.answered.answered_meanwhile`: the evidence that the producer could be served
        elsewhere, which the slow-call verdicts also need)."""
        t = self._topics.get(topic)
        return t is not None and answered_meanwhile(t, exclude, since)

    def muted_partitions(self) -> dict[str, list[int]]:
        """Topic -> muted partitions (open, half-open or forced)."""
        return {name: sorted(t.snapshot.muted) for name, t in self._topics.items() if t.snapshot and t.snapshot.muted}

    def muted_brokers(self) -> dict[int, str]:
        """Broker id -> why the broker is muted (by detection or by hand)."""
        out = {b: v.describe() for b, v in self._brokers.verdicts.items()}
        out.update({b: str(MuteReason.MANUAL) for b in self._control.forced_brokers})
        return out

    def leader(self, topic: str, partition: int) -> int:
        part = self._registry.find(topic, partition)
        return part.leader if part is not None else -1

    # KIP-693's ProducerMuteManager also answers "how much is queued / in flight for this partition"; the counts
    # live in the producer, which hands its readers over at construction.
    def outstanding(self, topic: str, partition: int) -> int:
        """Messages handed to librdkafka for the partition and not yet reported (exact)."""
        return self._counts.outstanding(topic, partition)

    def accumulated(self, topic: str, partition: int) -> int:
        """KIP-693 getAccumulatedBatches, in messages: queued in librdkafka, not yet sent (latest statistics)."""
        return self._counts.accumulated(topic, partition)

    def in_flight(self, topic: str, partition: int) -> int:
        """KIP-693 getInFlightRequestCount, in messages: sent and awaiting the broker (latest statistics)."""
        return self._counts.in_flight(topic, partition)

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


def _zero(topic: str, partition: int) -> int:
    return 0


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """The producer's per-partition counts that KIP-693's manager answers with (``outstanding``...)."""

    outstanding: Callable[[str, int], int] = _zero
    accumulated: Callable[[str, int], int] = _zero
    in_flight: Callable[[str, int], int] = _zero
