"""The mute decisions applied to the records: a verdict's trip, manual mutes of partitions and brokers, and what a
leadership move changes. Every change republishes the topic's snapshot; the caller holds the manager's lock."""

from __future__ import annotations

from collections.abc import Mapping

from mutepro.detect.model import MuteReason, Verdict
from mutepro.errors import ConfigError
from mutepro.logs import get_logger
from mutepro.mute.breaker import Clock
from mutepro.mute.brokers import BrokerJudge
from mutepro.mute.events import MuteEventKind
from mutepro.mute.publisher import SnapshotPublisher
from mutepro.mute.rack import RackLocator
from mutepro.mute.reactions import Reactions
from mutepro.mute.records import PartitionRecord, TopicRecord
from mutepro.mute.registry import TopicRegistry
from mutepro.mute.transitions import BreakerState, PartitionKey

log = get_logger("mutepro.producer")


class MuteControl:
    """Applies mute decisions to the ``registry``'s records. ``brokers`` says which brokers the last round found
    bad (a leader moving onto one keeps its mute); ``locator`` which partitions are led in the producer's rack."""

    def __init__(
        self,
        registry: TopicRegistry,
        publisher: SnapshotPublisher,
        reactions: Reactions,
        brokers: BrokerJudge,
        locator: RackLocator,
        clock: Clock,
    ) -> None:
        self._registry = registry
        self._publisher = publisher
        self._reactions = reactions
        self._brokers = brokers
        self._locator = locator
        self._clock = clock
        self._forced_brokers: set[int] = set()

    @property
    def forced_brokers(self) -> frozenset[int]:
        """The brokers muted by hand (:meth:`mute_broker`)."""
        return frozenset(self._forced_brokers)

    def trip(self, t: TopicRecord, part: PartitionRecord, verdict: Verdict) -> None:
        """Open the partition's breaker with ``verdict`` (queued for rescue if it was closed)."""
        if t.not_closed is not None:
            t.not_closed.add(part.partition)
        part.muted_leader = part.leader
        part.fresh_since = None
        if part.breaker.trip(verdict):
            self._reactions.queue_open(t.name, part.partition)

    def mute(self, t: TopicRecord, part: PartitionRecord, reason: str = MuteReason.MANUAL) -> None:
        part.muted_leader = part.leader
        part.forced_by = None
        part.breaker.force_open(reason)
        self._reactions.queue_open(t.name, part.partition)
        self._publisher.publish(t)

    def unmute(self, t: TopicRecord, part: PartitionRecord) -> None:
        part.forced_by = None
        if part.breaker.state is BreakerState.FORCED_OPEN:
            part.breaker.release()
        elif part.breaker.state is not BreakerState.CLOSED:
            self._replace_breaker(t, part, "manual_unmute")
        self._publisher.publish(t)

    def mute_broker(self, broker_id: int) -> None:
        known = self._registry.leaders()
        if known and broker_id not in known:
            raise ConfigError(
                f"broker_id: {broker_id} leads no partition of the known topics; known leaders: {sorted(known)}"
            )
        self._forced_brokers.add(broker_id)
        for t in list(self._registry.topics.values()):
            for part in t.partitions.values():
                if part.leader == broker_id:
                    self._force_for_broker(t, part, broker_id)
            self._publisher.publish(t)

    def unmute_broker(self, broker_id: int) -> None:
        self._forced_brokers.discard(broker_id)
        for t in list(self._registry.topics.values()):
            for part in t.partitions.values():
                if part.forced_by == broker_id and part.breaker.state is BreakerState.FORCED_OPEN:
                    part.forced_by = None
                    part.breaker.release()
            self._publisher.publish(t)

    def apply_leaders(self, t: TopicRecord, leaders: Mapping[int, int]) -> None:
        """Take the partitions' current leaders: a move onto a broker muted by hand mutes the partition, a move off
        the broker it was muted for gives the new leader a fresh chance."""
        moved = False
        for p, leader in leaders.items():
            part = t.partitions.get(p)
            # A leaderless partition (-1: its only replica's broker is down, or an election is under way) keeps
            # its last known leader: its messages still wait on that broker, so a mute or a broker verdict is
            # blamed on it, and a later move 2 -> -1 -> 3 is still seen as leaving broker 2. The statistics
            # path already drops -1; the periodic metadata refresh passes it on.
            if part is None:
                continue
            if leader < 0:
                part.leaderless = True
                continue
            if leader == part.leader:
                if part.leaderless:
                    part.leaderless = False
                    self._reelected(t, part)
                continue
            part.leaderless = False
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
                and leader not in self._brokers.verdicts
                and leader not in self._forced_brokers
            ):
                self._replace_breaker(t, part, f"leader_moved {previous}->{leader}")
            elif previous >= 0 and part.breaker.state is BreakerState.CLOSED:
                self._judge_afresh(part)
        if moved or (t.local is None and self._locator.client_rack is not None):
            self.relocate(t)
        self._publisher.publish(t)

    def relocate(self, t: TopicRecord) -> None:
        """Republish the topic if the partitions led in the producer's rack moved."""
        if self._locator.locate(t):
            self._publisher.publish(t, force=True)

    def _reelected(self, t: TopicRecord, part: PartitionRecord) -> None:
        """A muted partition whose leader was elected again after it had none (2 -> -1 -> 2) waits one
        ``breaker.retry_interval_ms`` from now, its backoff started over, instead of the rest of its backed-off wait.

        Why: a broker's partitions go leaderless when the controller fences it (a stopped or stalled broker misses
        its heartbeats) and are led by it again only once it heartbeats again -- the cluster's own word that the
        fault is over. Its messages held since the fault are re-sent by librdkafka once its metadata names the
        leader, and a probe round that began before they were answered failed, so the last partitions waited out a
        whole 4 s backoff more: a 20 s stall of broker 2 (RF 1, keyed, 20,000 msg/s) was over at 30.6 s, the
        producer's metadata named broker 2 again at 33.1 s, its partitions were probed at 31.8 s (failed: their
        messages still held) and 36.1 s, and let go 6.5 s after the fault (trace ``stall_rf1_keyed_fenced``, the fault
        matrix's). One retry interval after the election is the time librdkafka has to answer what was held.
        A limping broker is not fenced (it heartbeats between its stops), so this does not shorten a limp's
        backoff.
        """
        if part.breaker.rearm():
            log.info("partition_reelected", topic=t.name, partition=part.partition, leader=part.leader,
                     action=f"probed in {t.runtime.retry_interval_s:g} s, the backoff started over, its probes held "
                     "to the slow threshold")

    def _judge_afresh(self, part: PartitionRecord) -> None:
        """A closed partition whose leadership moved is judged on what its new leader does: its detectors forget
        their reports, and messages sent before the move stop counting (``fresh_since``, see
        :func:`~mutepro.mute.records.since_reset`) until they are delivered.

        Why: what it held and what its window saw were the old leader's doing -- with RF 3 and acks=all, a
        stalled broker's partitions wait for it 10 s and more, and whoever takes them over inherits messages that
        old and a window of slow reports. Judged on them, the heirs were muted the moment they took over: at
        60,000 msg/s, broker 2 stalled, its partitions 0, 6 and 11 moved to brokers 3 and 1 15.4 s into the stall,
        were muted within 0.5 s for their inherited wait, and broker 3 with them by the broker rule (trace
        ``stall_rf3_acks_all_60k``).
        """
        part.fresh_since = self._clock()
        for det in part.detectors:
            det.reset()

    def _force_for_broker(self, t: TopicRecord, part: PartitionRecord, broker_id: int) -> None:
        if part.breaker.state is BreakerState.FORCED_OPEN:
            return  # already muted by hand (for this broker or on its own): keep who asked for it
        part.muted_leader = broker_id
        part.forced_by = broker_id
        part.breaker.force_open(f"broker {broker_id} muted by hand")
        self._reactions.queue_open(t.name, part.partition)

    def _replace_breaker(self, t: TopicRecord, part: PartitionRecord, why: str) -> None:
        """A fresh CLOSED breaker and fresh windows (leadership moved, or unmuted by hand)."""
        old = part.breaker.snapshot()
        with self._reactions.silenced(PartitionKey(t.name, part.partition)):
            fresh = self._registry.fresh(t.name, part.partition, t.policy)
            # The fresh breaker adopts the old shared record on its first tick (still open); force + release
            # publishes "closed" with a newer version, so this and every other process sharing the store close.
            fresh.breaker.force_open("reset")
            fresh.breaker.release()
        part.forced_by = None
        part.fresh_since = self._clock()
        part.breaker = fresh.breaker
        part.detectors = fresh.detectors
        self._reactions.emit(
            MuteEventKind.UNMUTE, t.name, part.partition, part.leader, why, {"previous_state": old.state.value}
        )
