"""The breaker's vocabulary: its states, the events that move it, the ``(state, event) -> state`` table
(:data:`TRANSITIONS`), and the values it hands out (:class:`Transition`, :class:`BreakerSnapshot`, the
:class:`PartitionKey` a partition's breaker is named by). The states' data and reactions are
:mod:`mutepro.mute.states`; the machine as a whole is :class:`~mutepro.mute.breaker.MuteBreaker`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import NamedTuple

from mutepro.detect.model import Verdict


class BreakerState(StrEnum):
    """Where a breaker stands; only CLOSED lets messages through."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"
    FORCED_OPEN = "forced_open"


class BreakerEvent(StrEnum):
    """What can happen to a breaker; :data:`TRANSITIONS` says where each leads from each state."""

    TRIP = "trip"  # a detector verdict
    RETRY_DUE = "retry_due"  # the open wait elapsed
    PROBES_PASSED = "probes_passed"  # half_open_probes probes succeeded
    PROBE_FAILED = "probe_failed"
    FORCE = "force"  # manual mute
    RELEASE = "release"  # manual unmute
    ADOPT_CLOSED = "adopt_closed"  # another process's newer record, by its state
    ADOPT_OPEN = "adopt_open"
    ADOPT_HALF_OPEN = "adopt_half_open"
    ADOPT_FORCED_OPEN = "adopt_forced_open"


_ADOPT = {
    BreakerState.CLOSED: BreakerEvent.ADOPT_CLOSED,
    BreakerState.OPEN: BreakerEvent.ADOPT_OPEN,
    BreakerState.HALF_OPEN: BreakerEvent.ADOPT_HALF_OPEN,
    BreakerState.FORCED_OPEN: BreakerEvent.ADOPT_FORCED_OPEN,
}


def _table() -> Mapping[tuple[BreakerState, BreakerEvent], BreakerState]:
    s, e = BreakerState, BreakerEvent
    table = {
        (s.CLOSED, e.TRIP): s.OPEN,
        (s.HALF_OPEN, e.TRIP): s.OPEN,
        (s.OPEN, e.RETRY_DUE): s.HALF_OPEN,
        (s.HALF_OPEN, e.PROBES_PASSED): s.CLOSED,
        (s.HALF_OPEN, e.PROBE_FAILED): s.OPEN,
        (s.CLOSED, e.FORCE): s.FORCED_OPEN,
        (s.OPEN, e.FORCE): s.FORCED_OPEN,
        (s.HALF_OPEN, e.FORCE): s.FORCED_OPEN,
        (s.FORCED_OPEN, e.RELEASE): s.CLOSED,
    }
    # Another process's record can move a breaker from any state to any other.
    for source in BreakerState:
        for target, event in _ADOPT.items():
            if source is not target:
                table[(source, event)] = target
    return MappingProxyType(table)


TRANSITIONS: Mapping[tuple[BreakerState, BreakerEvent], BreakerState] = _table()


class PartitionKey(NamedTuple):
    """The partition a breaker guards, as a value: ``key.topic``, ``key.partition``, or unpacked as a pair.

    ``str(key)`` (``"orders/3"``) is the breaker's name and its key in the shared store; it is written, never
    parsed back.
    """

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}/{self.partition}"


@dataclass(frozen=True)
class Transition:
    """One state change, as passed to ``on_transition``. ``at`` is on the breaker's monotonic clock; ``key`` is the
    breaker's partition when it was built for one (``None`` for a breaker built with a plain name)."""

    name: str
    source: BreakerState
    target: BreakerState
    at: float
    reason: Verdict | None
    remote: bool = False  # adopted from another process's record
    key: PartitionKey | None = None


@dataclass(frozen=True)
class BreakerSnapshot:
    """An immutable view of one breaker. ``opens`` counts consecutive opens since it was last closed."""

    name: str
    state: BreakerState
    reason: Verdict | None
    opened_at: float | None
    retry_at: float | None
    opens: int

    @property
    def writable(self) -> bool:
        """Only a closed breaker lets messages through."""
        return self.state is BreakerState.CLOSED
