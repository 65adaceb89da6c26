"""What the mute manager announces: one :class:`MuteEvent` per mute, re-mute, probe or unmute decision."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from mutepro.logs import get_logger
from mutepro.mute.transitions import PartitionKey

log = get_logger("mutepro.producer")

Figure = float | int | str


class MuteEventKind(StrEnum):
    """What a :class:`MuteEvent` announces (a ``str`` enum: ``event.kind == "mute"`` keeps working)."""

    MUTE = "mute"  # closed -> open (or forced open)
    REMUTE = "remute"  # a probe failed: half-open -> open, with a longer wait
    PROBE = "probe"  # the wait is over: open -> half-open, probe messages may go
    UNMUTE = "unmute"  # -> closed (probes passed, released, or the leader moved)

    @property
    def muted(self) -> bool:
        """True for the kinds after which the partition takes no traffic."""
        return self in (MuteEventKind.MUTE, MuteEventKind.REMUTE)


@dataclass(frozen=True)
class MuteEvent:
    """One mute/unmute/probe decision, as logged and counted. ``reason`` is the verdict's (a
    :class:`~mutepro.detect.model.MuteReason` or a custom detector's name), or the kind itself for unmute/probe."""

    kind: MuteEventKind
    topic: str
    partition: int
    broker: int | None
    reason: str
    detail: Mapping[str, Figure]
    at: float


def opened_partitions(events: Iterable[MuteEvent]) -> list[PartitionKey]:
    """The (topic, partition) pairs an event list says were muted, in order (a test and metrics helper)."""
    return [PartitionKey(e.topic, e.partition) for e in events if e.kind.muted]


class EventLog:
    """Where a manager's events go: a bounded history (:attr:`history`, the last 1,000, for inspection), the
    ``mutepro.producer`` logger (mutes at WARNING, the rest at INFO) and the application's ``on_event``."""

    LIMIT = 1000

    def __init__(self, on_event: Callable[[MuteEvent], None] | None = None) -> None:
        self.history: list[MuteEvent] = []
        self._listeners: list[Callable[[MuteEvent], None]] = [on_event] if on_event is not None else []

    def add_listener(self, listener: Callable[[MuteEvent], None]) -> None:
        """Call ``listener`` with every event from now on, after the ones already there."""
        self._listeners.append(listener)

    def announce(self, event: MuteEvent) -> None:
        self.history.append(event)
        if len(self.history) > self.LIMIT:
            del self.history[: self.LIMIT // 10]  # in place: readers hold this list
        level = log.warning if event.kind.muted else log.info
        # plain strings in the log fields: the console format shows repr(), and a str enum's repr is not its name
        level(f"partition_{event.kind.value}", topic=event.topic, partition=event.partition, broker=event.broker,
              reason=str(event.reason), **plain_fields(event.detail))
        for listener in self._listeners:
            listener(event)


def plain_fields(detail: Mapping[str, Figure]) -> dict[str, Figure]:
    """A verdict's figures as log fields, renamed where they would clash with the event's own fields."""
    reserved = {"event", "topic", "partition", "broker", "reason", "level", "timestamp"}
    return {(f"detail_{k}" if k in reserved else k): v for k, v in detail.items()}
