"""What the mute manager's events do in the producer: count them, record them into the trace, and wake a parked
driver (a mute by hand while the producer is idle: its rescue is due at the next round).

Events flow one way, out of the manager; nothing here calls back into it. Built before the manager, from parts
that need nothing of it (the counters, the pacer, the trace recorder), so the manager is handed a complete
listener at construction.
"""

from __future__ import annotations

from mutepro.mute.events import MuteEvent
from mutepro.producer.metrics import ProducerCounters
from mutepro.producer.pacing import Pacer
from mutepro.trace.record import TraceRecorder


class MuteEventListener:
    """The producer's ``on_event`` for its :class:`~mutepro.mute.manager.ProducerMuteManager`."""

    __slots__ = ("_counters", "_pacer", "_recorder")

    def __init__(self, counters: ProducerCounters, pacer: Pacer, recorder: TraceRecorder | None) -> None:
        self._counters = counters
        self._pacer = pacer
        self._recorder = recorder

    def __call__(self, event: MuteEvent) -> None:
        """One mute or unmute ``event``: into the trace (when recording), the counters, and a parked driver's wake."""
        if self._recorder is not None:
            self._recorder.decision(event)
        if self._pacer.parked:
            self._pacer.wake()
        if event.kind.muted:
            self._counters.mutes += 1
        elif event.kind == "unmute":
            self._counters.unmutes += 1
