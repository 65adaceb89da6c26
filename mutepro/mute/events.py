"""What the mute manager announces: one :class:`MuteEvent` per mute, re-mute, probe or unmute decision."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from mutepro.mute.states import PartitionKey

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
