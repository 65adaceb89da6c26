"""What the mute manager's events do in the producer (mutepro.producer.listening): counted by kind, recorded into
the trace when one is recorded, and a parked driver woken."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.mute.events import MuteEvent, MuteEventKind
from mutepro.producer.listening import MuteEventListener
from mutepro.producer.metrics import ProducerCounters
from mutepro.producer.pacing import Pacer
from mutepro.trace.format import open_trace
from mutepro.trace.record import TraceRecorder


class _Recorder:
    def __init__(self) -> None:
        self.decisions: list[MuteEvent] = []

    def decision(self, event: MuteEvent) -> None:
        self.decisions.append(event)


def _event(kind: MuteEventKind) -> MuteEvent:
    return MuteEvent(kind, "orders", 2, 1, str(kind), {}, 10.0)


class TestEachEvent:
    @pytest.mark.parametrize(("kind", "mutes", "unmutes"), [
        (MuteEventKind.MUTE, 1, 0), (MuteEventKind.REMUTE, 1, 0), (MuteEventKind.UNMUTE, 0, 1),
        (MuteEventKind.PROBE, 0, 0),
    ])
    def test_each_kind_is_counted_where_it_belongs(self, kind: MuteEventKind, mutes: int, unmutes: int) -> None:
        counters = ProducerCounters()
        MuteEventListener(counters, Pacer(), None)(_event(kind))
        assert (counters.mutes, counters.unmutes) == (mutes, unmutes)

    def test_a_parked_driver_is_woken_and_its_gate_opened(self) -> None:
        pacer = Pacer()
        pacer.park()
        MuteEventListener(ProducerCounters(), pacer, None)(_event(MuteEventKind.MUTE))
        assert pacer.parked is False
        assert pacer.gate.acquire(blocking=False)  # open: the driver's next round is due now

    def test_a_running_driver_is_left_alone(self) -> None:
        pacer = Pacer()
        MuteEventListener(ProducerCounters(), pacer, None)(_event(MuteEventKind.MUTE))
        assert not pacer.gate.acquire(blocking=False)

    def test_recorded_into_the_trace(self, tmp_path: Path) -> None:
        recorder = TraceRecorder(tmp_path / "t.jsonl", {}, clock=lambda: 3.0)
        listener = MuteEventListener(ProducerCounters(), Pacer(), recorder)
        listener(_event(MuteEventKind.MUTE))
        listener(_event(MuteEventKind.UNMUTE))
        recorder.close()
        decisions = [r for r in open_trace(recorder.path) if r["kind"] == "decision"]
        assert [(d["event"], d["topic"], d["partition"]) for d in decisions] == [
            ("mute", "orders", 2), ("unmute", "orders", 2)
        ]


class TestListener:
    def test_counts_records_and_wakes(self) -> None:
        """A mute is counted, recorded, and wakes a parked driver; a probe is recorded only; an unmute counted."""
        counters, pacer, recorder = ProducerCounters(), Pacer(), _Recorder()
        listener = MuteEventListener(counters, pacer, recorder)  # type: ignore[arg-type]
        pacer.park()
        listener(_event(MuteEventKind.MUTE))
        assert not pacer.parked and counters.mutes == 1
        assert pacer.gate.acquire(blocking=False)  # the wake opened the driver's gate
        listener(_event(MuteEventKind.PROBE))
        listener(_event(MuteEventKind.UNMUTE))
        assert (counters.mutes, counters.unmutes) == (1, 1)
        assert [e.kind for e in recorder.decisions] == ["mute", "probe", "unmute"]

    def test_without_a_recorder(self) -> None:
        """No trace: events are still counted."""
        counters = ProducerCounters()
        MuteEventListener(counters, Pacer(), None)(_event(MuteEventKind.REMUTE))
        assert counters.mutes == 1
