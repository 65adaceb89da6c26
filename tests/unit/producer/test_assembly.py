"""How a MuteProducer's parts are built (mutepro.producer.assembly): each once, linked once, and the mute events
going one way, to a listener built before the manager."""

from __future__ import annotations

from typing import Any

import pytest

from mutepro.mute.events import MuteEvent, MuteEventKind
from mutepro.producer.core import Later
from mutepro.producer.listening import MuteEventListener
from mutepro.producer.metrics import ProducerCounters
from mutepro.producer.pacing import Pacer
from tests.unit._producer_fakes import TOPIC, Harness


def _event(kind: MuteEventKind) -> MuteEvent:
    return MuteEvent(kind, TOPIC, 1, 1, str(kind), {}, 0.0)


class _Recorder:
    def __init__(self) -> None:
        self.decisions: list[MuteEvent] = []

    def decision(self, event: MuteEvent) -> None:
        self.decisions.append(event)


class TestLater:
    def test_set_once(self) -> None:
        """A link is made once: a second set raises instead of re-pointing the part that holds it."""
        link: Later[int] = Later("the part")
        assert link.value is None
        link.set(7)
        assert link.get() == 7
        with pytest.raises(RuntimeError, match="already set"):
            link.set(8)
        assert link.get() == 7

    def test_get_before_set_raises(self) -> None:
        """Reaching a part before it is built is an error naming it, not a None passed along."""
        with pytest.raises(RuntimeError, match="the report handler is not built yet"):
            Later[Any]("the report handler").get()


class TestAssembled:
    def test_the_parts_share_one_fast_path_and_one_serving(self) -> None:
        """Every part that reaches the C fast path reaches the producer's own, and the rescue quiesces the
        producer's report serving."""
        h = Harness()
        p = h.producer
        assert p._core.fast is p._fast and p._pacer.fast is p._fast and p._core.pacer is p._pacer
        assert p._rescuer.serving is p._serving  # type: ignore[attr-defined]
        assert p._core.lock is p._lock and p._core.callbacks is p._callbacks
        h.close()

    def test_a_mute_by_hand_is_counted_once(self) -> None:
        """The manager's events reach the producer's counters through the listener it was built with."""
        h = Harness()
        h.producer.mute_manager.mute(TOPIC, 2)
        h.producer.mute_manager.unmute(TOPIC, 2)
        assert (h.producer.counters.mutes, h.producer.counters.unmutes) == (1, 1)
        h.close()


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
