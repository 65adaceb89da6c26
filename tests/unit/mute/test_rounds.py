"""Rounds, the driver thread's side of the manager: a detection round over the producer's own tracker mutes what
the detectors find (and only that), skips open partitions, and looks at idle partitions once a quiet interval.
Fake clocks throughout (see _rig.py)."""

from __future__ import annotations

from mutepro.detect.model import Verdict
from tests.unit.mute._rig import LEADERS, FakeClock, FakeDetectors, Rig, T


class TestDetection:
    def test_no_load_no_mute(self, rig: Rig) -> None:
        """With nothing outstanding no detector trips and evaluate returns nothing."""
        rig.clock.advance(10.0)
        assert rig.evaluate() == []
        assert rig.mgr.muted_partitions() == {}

    def test_fresh_message_not_slow(self, rig: Rig) -> None:
        """A message outstanding for less than the slow threshold mutes nothing."""
        rig.send(2)
        rig.clock.advance(0.9)
        assert rig.evaluate() == []

    def test_stall_mutes_exactly_that_partition(self, rig: Rig) -> None:
        """A real SlowCallDetector (default factory) mutes only the stalled partition; evaluate returns it once."""
        assert rig.stall(2) == [(T, 2)]
        snap = rig.mgr.snapshot(T)
        assert snap is not None
        assert snap.muted == frozenset({2})
        assert snap.writable == (0, 1, 3, 4, 5)
        assert rig.mgr.is_muted(T, 2) and not rig.mgr.is_muted(T, 0)
        assert rig.mgr.muted_partitions() == {T: [2]}
        assert rig.evaluate() == []  # reported once, for the rescue

    def test_mute_event(self, rig: Rig, clock: FakeClock) -> None:
        """The mute is one MuteEvent naming topic, partition, leader, the detector and its figures."""
        rig.stall(2)
        assert len(rig.events) == 1
        e = rig.events[0]
        assert (e.kind, e.topic, e.partition, e.broker, e.reason, e.at) == ("mute", T, 2, 3, "slow_call", clock())
        assert e.detail["stalled"] == 1
        assert e.detail["stuck"] == 1

    def test_fake_detector_via_factory(self, clock: FakeClock) -> None:
        """A custom detector's verdict mutes its partition; it is checked with the partition's load and time."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        assert len(dets.made) == 6
        rig.send(3)
        dets.made[3].verdict = Verdict("fake", {"score": 7})
        assert rig.evaluate() == [(T, 3)]
        assert rig.mgr.muted_partitions() == {T: [3]}
        load, now = dets.made[3].checks[-1]
        assert (load.outstanding, now) == (1, clock())
        assert (rig.events[0].reason, dict(rig.events[0].detail)) == ("fake", {"score": 7})

    def test_open_partition_not_checked(self, clock: FakeClock) -> None:
        """While muted, a partition's detectors are not consulted."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        dets.made[0].verdict = Verdict("fake")
        rig.evaluate()
        checks = len(dets.made[0].checks)
        rig.clock.advance(1.0)
        rig.evaluate()
        assert len(dets.made[0].checks) == checks

