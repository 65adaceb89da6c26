"""One detection round over a topic (mutepro.mute.scan.scan_topic), through the manager's round: idle partitions
looked at once a quiet interval, and a half-open partition judged by the messages that wait since probing began.
Fake clocks throughout (see _rig.py)."""

from __future__ import annotations

from mutepro.mute.scan import QUIET_REJUDGE_S
from tests.unit.mute._rig import LEADERS, FakeClock, FakeDetectors, Rig, T, to_half_open


class TestQuietPartitions:
    def test_idle_partitions_wait_for_their_quiet_round(self, clock: FakeClock) -> None:
        """With the tracker's busy partitions given, an idle one is judged once a second, a busy one every round."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)

        def round_() -> None:
            rig.tracker.checkpoint(clock())
            rig.mgr.rounds.evaluate(rig.tracker.load, None, rig.tracker.busy)

        round_()  # every partition judged once
        assert [len(d.checks) for d in dets.made] == [1] * 6
        rig.send(3)
        clock.advance(0.05)
        round_()
        assert [len(d.checks) for d in dets.made] == [1, 1, 1, 2, 1, 1]  # only 3 (busy) looked at
        clock.advance(QUIET_REJUDGE_S)
        round_()
        assert [len(d.checks) for d in dets.made] == [2, 2, 2, 3, 2, 2]  # the quiet round


class TestHalfOpen:
    def test_half_open_with_old_outstanding_message_reopens(self, rig: Rig) -> None:
        """Half-open with a message still outstanding a slow threshold after probing began re-opens with backoff;
        its wait counts from then, not from its send: what it waited before is what muted the partition."""
        assert rig.stall(2) == [(T, 2)]
        rig.clock.advance(5.0)  # the stuck message is now 6.5 s old; it never settled
        assert rig.evaluate() == []
        assert rig.kinds(2) == ["mute", "probe"]  # probing began just now: nothing to hold against it yet
        rig.clock.advance(1.1)  # past the 1 s threshold since probing began
        assert rig.evaluate() == []
        assert rig.kinds(2) == ["mute", "probe", "remute"]
        assert rig.state_of(2) == "open"
        assert rig.mgr.probes.probing(T) == frozenset()
        assert rig.mgr.state()["topics"][T][2]["opens"] == 2

    def test_half_open_with_young_message_stays(self, rig: Rig) -> None:
        """A probe in flight for less than the slow threshold does not re-open the partition."""
        to_half_open(rig, 2)
        assert rig.mgr.probes.try_probe(T, 2)
        rig.send(2)
        rig.clock.advance(0.5)
        rig.evaluate()
        assert rig.state_of(2) == "half_open"
