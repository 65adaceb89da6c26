"""The mute manager's events in the producer (mutepro.producer.listening): counted, recorded into the trace, and a
parked driver woken; nothing calls back into the manager."""

from __future__ import annotations

from typing import Any

import pytest

from mutepro.mute.events import MuteEvent, MuteEventKind
from mutepro.producer.listening import MuteEventListener
from mutepro.producer.metrics import ProducerCounters
from mutepro.producer.pacing import Pacer


class Recorder:
    def __init__(self) -> None:
        self.decisions: list[MuteEvent] = []

    def decision(self, event: MuteEvent) -> None:
        self.decisions.append(event)


def event(kind: MuteEventKind) -> MuteEvent:
    return MuteEvent(kind=kind, topic="t", partition=1, broker=2, reason=str(kind), detail={}, at=0.0)


@pytest.mark.parametrize(("kind", "mutes", "unmutes"), [
    (MuteEventKind.MUTE, 1, 0), (MuteEventKind.REMUTE, 1, 0), (MuteEventKind.UNMUTE, 0, 1), (MuteEventKind.PROBE, 0, 0),
])
def test_each_kind_is_counted_as_what_it_announces(kind: MuteEventKind, mutes: int, unmutes: int) -> None:
    counters = ProducerCounters()
    MuteEventListener(counters, Pacer(), None)(event(kind))
    assert (counters.mutes, counters.unmutes) == (mutes, unmutes)


def test_every_event_goes_into_the_trace_when_recording() -> None:
    recorder = Recorder()
    listener = MuteEventListener(ProducerCounters(), Pacer(), recorder)  # type: ignore[arg-type]
    events = [event(MuteEventKind.MUTE), event(MuteEventKind.PROBE)]
    for e in events:
        listener(e)
    assert recorder.decisions == events


def test_a_parked_driver_is_woken_and_a_running_one_left_alone() -> None:
    pacer: Any = Pacer()
    pacer.park()
    MuteEventListener(ProducerCounters(), pacer, None)(event(MuteEventKind.MUTE))
    assert not pacer.parked
    MuteEventListener(ProducerCounters(), pacer, None)(event(MuteEventKind.UNMUTE))
    assert not pacer.parked
