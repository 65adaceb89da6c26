"""The records: delivery reports fed to the partitions' detectors (mutepro.mute.registry)."""

from __future__ import annotations

from mutepro.detect.model import Delivery
from tests.unit.mute._rig import LEADERS, FakeClock, FakeDetectors, Rig, T


class TestRecord:
    def test_record_feeds_the_partitions_detectors(self, clock: FakeClock) -> None:
        """record() hands the delivery to that partition's detectors only; unknown partitions are ignored."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        d = Delivery(True, 0.01, clock())
        rig.mgr.rounds.record(T, 4, d)
        rig.mgr.rounds.record(T, 99, d)
        rig.mgr.rounds.record("other", 0, d)
        assert dets.made[4].records == [d]
        assert [len(x.records) for x in dets.made] == [0, 0, 0, 0, 1, 0]

    def test_failure_rate_by_records(self, rig: Rig, clock: FakeClock) -> None:
        """20 failed reports (failure_rate minimum_calls, 50 %) mute the partition at the next evaluate."""
        for _ in range(20):
            rig.mgr.rounds.record(T, 0, Delivery(False, 0.01, clock(), error_code=7))
        assert rig.evaluate() == [(T, 0)]
        assert rig.events[-1].reason == "failure_rate"
