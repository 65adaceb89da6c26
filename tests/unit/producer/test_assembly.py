"""How a MuteProducer's parts are built (mutepro.producer.assembly): sharing one fast path and one serving, and the
mute events going one way, to the listener built before the manager (the link cell: test_core.py; the listener
itself: test_listening.py)."""

from __future__ import annotations

from tests.unit._producer_fakes import TOPIC, Harness


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
