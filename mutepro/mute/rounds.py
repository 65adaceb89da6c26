"""The driver thread's side of the mute manager: what the cluster and the delivery reports tell it, and the
detection round that judges them.

Every call here comes from one thread, the producer's driver (metadata every refresh, report tallies and
:meth:`Rounds.evaluate` every tick). Manual control (:class:`~mutepro.mute.manager.ProducerMuteManager`'s
``mute``/``unmute``) may come from any thread, so both take the manager's lock; producing threads never do,
they read the published snapshots.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from mutepro.detect.model import Delivery
from mutepro.detect.stats import StatsSnapshot
from mutepro.mute.breaker import Clock, PartitionKey
from mutepro.mute.brokers import BrokerJudge
from mutepro.mute.control import MuteControl
from mutepro.mute.publisher import SnapshotPublisher
from mutepro.mute.rack import RackLocator
from mutepro.mute.reactions import Reactions
from mutepro.mute.registry import TopicRegistry
from mutepro.mute.scan import LoadReader, scan_topic


class Rounds:
    """The manager's parts this side drives, each built once by the manager and shared with it."""

    def __init__(
        self,
        *,
        registry: TopicRegistry,
        control: MuteControl,
        publisher: SnapshotPublisher,
        reactions: Reactions,
        brokers: BrokerJudge,
        locator: RackLocator,
        lock: threading.RLock,
        clock: Clock,
    ) -> None:
        self._registry = registry
        self._topics = registry.topics
        self._control = control
        self._publisher = publisher
        self._reactions = reactions
        self._brokers = brokers
        self._locator = locator
        self._lock = lock
        self._clock = clock

    # -- what the cluster says ----------------------------------------------------------------------------

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

    def update_leaders(self, topic: str, leaders: Mapping[int, int]) -> None:
        with self._lock:
            t = self._topics.get(topic)
            if t is not None:
                self._control.apply_leaders(t, leaders)

    def update_broker_racks(self, racks: Mapping[int, str]) -> None:
        """Each broker's ``broker.rack`` (rack-aware partitioning): republish the topics whose local set moved."""
        with self._lock:
            if self._locator.update(racks):
                for t in self._topics.values():
                    self._control.relocate(t)

    # -- what the reports say -----------------------------------------------------------------------------

    def record(self, topic: str, partition: int, delivery: Delivery) -> None:
        """Feed one final delivery report of a non-probe message to the partition's detectors."""
        self._registry.record(topic, partition, delivery)

    def record_many(self, topic: str, partition: int, calls: int, failures: int, slow: int, now: float) -> None:
        """Feed a tick's tally of reports to the partition's detectors (``slow``: over the topic's threshold)."""
        self._registry.record_many(topic, partition, calls, failures, slow, now)

    def refresh_weights(self, topic: str, queue_sizes: Mapping[int, int]) -> None:
        """Re-weight the topic's writable partitions by their outstanding messages (KIP-794)."""
        t = self._topics.get(topic)
        if t is not None:
            self._publisher.publish(t, queue_sizes)

    # -- the round ----------------------------------------------------------------------------------------

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
        (the producer's tracker); idle ones are then looked at once per ``slow_call.threshold_ms`` (see
        :mod:`mutepro.mute.scan`).
        The clock is read once: every judgement of the round sees the same ``now``.
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
