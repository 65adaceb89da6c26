"""What follows a partition breaker's transition: the :class:`~mutepro.mute.events.MuteEvent` announced, the
partition queued for rescue when it became muted, its detectors reset when it closed, and the topic's snapshot
republished."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from mutepro.mute.breaker import Clock
from mutepro.mute.events import EventLog, Figure, MuteEvent, MuteEventKind
from mutepro.mute.publisher import SnapshotPublisher
from mutepro.mute.records import TopicRecord
from mutepro.mute.transitions import BreakerState, PartitionKey, Transition


class Reactions:
    """The manager's transition sink (every partition breaker's ``on_transition``) and its rescue queue.

    ``topics``: a read-only view of the manager's records; ``publisher`` republishes a topic after a transition;
    ``events`` is where the events go; ``clock`` stamps them.
    """

    def __init__(
        self, topics: Mapping[str, TopicRecord], publisher: SnapshotPublisher, events: EventLog, clock: Clock,
    ) -> None:
        self._topics = topics
        self._publisher = publisher
        self._events = events
        self._clock = clock
        self._pending_open: list[PartitionKey] = []
        # Breakers being reset (MuteControl: a leader moved, or unmuted by hand): their intermediate transitions
        # (adopting the old shared record, force_open + release) are bookkeeping, not mute decisions: no events.
        self._silenced: set[PartitionKey] = set()

    def queue_open(self, topic: str, partition: int) -> None:
        """Queue a newly muted partition for rescue (once until :meth:`take_opened`)."""
        # A trip queues the partition twice (trip()'s result and the CLOSED -> OPEN transition both report it);
        # a rescue needs it once. The list holds only the partitions opened since the last evaluate: tiny.
        key = PartitionKey(topic, partition)
        if key not in self._pending_open:
            self._pending_open.append(key)

    def take_opened(self) -> list[PartitionKey]:
        """The partitions queued since the last call, in order; the queue starts over."""
        opened, self._pending_open = self._pending_open, []
        return opened

    @contextmanager
    def silenced(self, key: PartitionKey) -> Iterator[None]:
        """No events for ``key``'s transitions inside the block."""
        self._silenced.add(key)
        try:
            yield
        finally:
            self._silenced.discard(key)

    def on_transition(self, tr: Transition) -> None:
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
                self.queue_open(topic, partition)
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
        self.emit(kind, topic, partition, broker, reason, detail)
        if t is not None:
            self._publisher.publish(t)

    def emit(
        self, kind: MuteEventKind, topic: str, partition: int, broker: int | None, reason: str,
        detail: Mapping[str, Figure],
    ) -> None:
        self._events.announce(MuteEvent(kind, topic, partition, broker, reason, dict(detail), self._clock()))
