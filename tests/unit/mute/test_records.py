"""The mute manager's per-partition records (mutepro.mute.records)."""

from __future__ import annotations

from mutepro.detect.model import PartitionLoad
from mutepro.mute.records import PartitionRecord, TopicRecord
from mutepro.policy.schema import TopicPolicy
from tests.unit.mute._rules import StubBreaker


class TestRecentPeak:
    def test_the_peak_covers_the_previous_bucket(self) -> None:
        """A 0.3 s age seen 0.6 s ago is still the peak (previous 0.5 s bucket); 1.1 s later it is gone."""
        part = PartitionRecord(0, StubBreaker(), [])  # type: ignore[arg-type]
        assert part.note_age(0.3, 10.0) == 0.3
        assert part.note_age(0.0, 10.6) == 0.3
        assert part.note_age(0.0, 11.1) == 0.0

    def test_a_long_gap_forgets_the_old_peak(self) -> None:
        """Nothing noted for over two buckets: the old peak does not carry over."""
        part = PartitionRecord(0, StubBreaker(), [])  # type: ignore[arg-type]
        part.note_age(0.9, 10.0)
        assert part.note_age(0.01, 12.0) == 0.01


class TestPeakSince:
    def test_the_largest_age_since_a_moment_to_the_bucket(self) -> None:
        """Ages 8 s (at 10 s), then 0.01 s from 11 s on: since 9.9 s the peak is 8 s; since 11 s, 0.01 s."""
        part = PartitionRecord(0, StubBreaker(), [])  # type: ignore[arg-type]
        part.note_age(8.0, 10.0)
        for i in range(20):
            part.note_age(0.01, 11.0 + 0.1 * i)
        assert part.peak_since(9.9) == 8.0
        assert part.peak_since(11.0) == 0.01

    def test_no_further_back_than_its_history(self) -> None:
        """A 2 s history: an 8 s age seen 5 s ago has dropped out, even when asked for 10 s back."""
        part = PartitionRecord(0, StubBreaker(), [], history_s=2.0)  # type: ignore[arg-type]
        part.note_age(8.0, 10.0)
        for i in range(50):
            part.note_age(0.01, 10.5 + 0.1 * i)
        assert part.peak_since(5.0) == 0.01

    def test_a_partition_not_looked_at_lately_counts_nothing(self) -> None:
        """Last noted 3 s before the moment asked about: nothing it saw is since then."""
        part = PartitionRecord(0, StubBreaker(), [])  # type: ignore[arg-type]
        part.note_age(4.0, 10.0)
        assert part.peak_since(13.0) == 0.0


class TestWarmLeaders:
    """A partition is warm when its leader delivered any of the topic's messages (TopicRecord.warm)."""

    @staticmethod
    def _topic() -> tuple[TopicRecord, PartitionRecord, PartitionRecord]:
        t = TopicRecord("t", TopicPolicy())
        delivered, cold = (PartitionRecord(p, StubBreaker(), []) for p in (0, 1))  # type: ignore[arg-type]
        delivered.leader = cold.leader = 2
        t.partitions.update({0: delivered, 1: cold})
        return t, delivered, cold

    @staticmethod
    def _never_delivered() -> PartitionLoad:
        return PartitionLoad(600, 600 * 512, 1.2, 100_000, 10**8, sent=600, warm=False)

    def test_a_partition_never_delivered_is_warm_once_its_leader_delivered_another(self) -> None:
        t, delivered, cold = self._topic()
        assert t.warm(cold, self._never_delivered()).warm is False
        t.delivered(delivered, 10.0, judged=False)
        assert delivered.delivered_at == 10.0 and not delivered.judged_delivery
        assert t.warm(cold, self._never_delivered()).warm is True

    def test_another_leaders_deliveries_do_not_warm_it(self) -> None:
        t, delivered, cold = self._topic()
        delivered.leader = 3
        t.delivered(delivered, 10.0, judged=True)
        assert delivered.judged_delivery
        assert t.warm(cold, self._never_delivered()).warm is False

    def test_a_leaderless_partitions_delivery_warms_no_broker(self) -> None:
        t, delivered, _ = self._topic()
        delivered.leader = -1
        t.delivered(delivered, 10.0, judged=True)
        assert t.warm_leaders == set()

    def test_a_warm_load_is_returned_as_it_is(self) -> None:
        t, _, cold = self._topic()
        load = PartitionLoad(1, 512, 0.1, 100_000, 10**8, sent=5, warm=True)
        assert t.warm(cold, load) is load


class TestProbeLimit:
    def test_a_rejoined_partition_is_held_to_the_slow_threshold(self) -> None:
        """The topic's probe limit 0.2 s (the outlier rule's bar); a partition whose leader was just elected again
        is held to the slow threshold (1 s) instead, the others to 0.2 s."""
        t = TopicRecord("t", TopicPolicy())
        t.probe_limit_s = 0.2
        rejoined, other = StubBreaker(), StubBreaker()
        rejoined.rejoined = True
        assert t.probe_limit_of(PartitionRecord(0, rejoined, [])) == 1.0  # type: ignore[arg-type]
        assert t.probe_limit_of(PartitionRecord(1, other, [])) == 0.2  # type: ignore[arg-type]
