"""What counts as a normal wait in a round (mutepro.mute.normal)."""

from __future__ import annotations

from mutepro.detect.model import MuteReason
from mutepro.mute.normal import beyond_normal, normal_of, waiting_beyond_normal
from mutepro.mute.records import TopicRecord
from mutepro.policy.schema import TopicPolicy
from tests.unit.mute._rules import FAILING, SLOW, candidates, topic


class TestBeyondNormal:
    """Partition p is led by broker p % 3 + 1; peaks are the active partitions' recent oldest-undelivered ages."""

    def test_a_stall_among_quick_peers_stands(self) -> None:
        """Broker 2's partitions 1.2 s old, the other 8 at ~5 ms: 5 x the lower quartile is ~25 ms: kept."""
        t = topic()
        peaks = {p: (1.2 if p % 3 == 1 else 0.005) for p in range(12)}
        kept = beyond_normal(t, candidates(t, SLOW, [1, 4]), normal_of(t, peaks), peaks)
        assert [c[1].partition for c in kept] == [1, 4]
        assert not t.shared_slowness

    def test_everyone_waiting_as_long_is_normal(self) -> None:
        """Every partition 0.9-1.07 s deep (the producer's own queue, or a cluster slow everywhere): slow-call
        verdicts dropped, others kept, said once."""
        t = topic()
        peaks = {p: 0.9 + 0.015 * p for p in range(12)}
        found = candidates(t, SLOW, [0, 2]) + candidates(t, FAILING, [1])
        kept = beyond_normal(t, found, normal_of(t, peaks), peaks)
        assert [(c[1].partition, c[2].reason) for c in kept] == [(1, MuteReason.FAILURE_RATE)]
        assert t.shared_slowness

    def test_two_brokers_of_three_stalled_are_both_kept(self) -> None:
        """The third broker is the better-served quarter: the stalls of the other two stand."""
        t = topic()
        peaks = {p: (0.003 if p % 3 == 0 else 2.0) for p in range(12)}
        assert len(beyond_normal(t, candidates(t, SLOW, [1, 2]), normal_of(t, peaks), peaks)) == 2

    def test_the_age_now_decides_not_the_peak(self) -> None:
        """A partition that peaked at 1.5 s but holds nothing old now (held 10 ms) is not waiting beyond normal."""
        t = topic()
        peaks = {p: (1.5 if p == 1 else 0.004) for p in range(12)}
        held = {**peaks, 1: 0.01}
        assert beyond_normal(t, candidates(t, SLOW, [1]), normal_of(t, peaks), held) == []

    def test_too_few_active_partitions_keep_every_verdict(self) -> None:
        """Two active partitions: nothing to compare with, the verdict stands."""
        t = topic()
        peaks = {0: 1.0, 1: 1.0}
        assert len(beyond_normal(t, candidates(t, SLOW, [0]), normal_of(t, peaks), peaks)) == 1
        assert normal_of(t, peaks).limit is None

    def test_only_its_own_leaders_partitions_are_no_reference(self) -> None:
        """A rack-aware producer writes only to broker 1's 4 partitions; broker 1 stalls and all 4 age together:
        its own partitions are no evidence that the wait is normal, so the stall stands."""
        t = topic()
        peaks = {p: 1.5 for p in (0, 3, 6, 9)}  # led by broker 1
        assert normal_of(t, peaks).limit_for(1) is None
        kept = beyond_normal(t, candidates(t, SLOW, [0, 3]), normal_of(t, peaks), peaks)
        assert [c[1].partition for c in kept] == [0, 3]

    def test_waiting_beyond_normal_names_the_partitions(self) -> None:
        """What a broker verdict from statistics may mute: only partitions whose own messages wait."""
        t = topic()
        peaks = {p: (0.002 if p < 9 else 0.8) for p in range(12)}
        held = {**peaks, 5: 0.0}
        assert waiting_beyond_normal(t, normal_of(t, peaks), held) == frozenset({9, 10, 11})


def _waited_together_then_drained(t: TopicRecord, slow: set[int]) -> dict[int, float]:
    """Every partition's oldest message ages to 9 s over 9 s (noted every 0.1 s); then all but ``slow`` drain and
    hold 5 ms for 2 s while ``slow`` keeps aging. Returns the recent peaks at 11 s."""
    peaks: dict[int, float] = {}
    for i in range(111):
        now = 0.1 * i
        for p, part in t.partitions.items():
            age = now if now <= 9.0 or p in slow else 0.005
            peaks[p] = part.note_age(age, now)
    return peaks


class TestLookBack:
    """What the better-served partitions waited while the message waited (slow_call.normal_window_ms)."""

    def test_a_partition_that_waited_no_longer_than_the_rest_is_normal(self) -> None:
        """All 12 waited 9 s together (an overload, or RF 3 and acks=all with a stalled follower); 8 drained 2 s
        ago, 4 still hold a message 11 s old. The last second alone says 5 ms is normal (limit 25 ms); while those
        messages waited the better-served quarter waited 9 s (limit 45 s): the verdicts are dropped."""
        t = topic()
        slow = {1, 4, 7, 10}
        peaks = _waited_together_then_drained(t, slow)
        held = {p: (11.0 if p in slow else 0.005) for p in range(12)}
        assert beyond_normal(t, candidates(t, SLOW, [1, 4]), normal_of(t, peaks), held) != []  # no look back: kept
        assert beyond_normal(t, candidates(t, SLOW, [1, 4]), normal_of(t, peaks, 11.0), held) == []
        assert waiting_beyond_normal(t, normal_of(t, peaks, 11.0), held) == frozenset()

    def test_the_window_bounds_how_far_back(self) -> None:
        """The same with normal_window_ms 1000: only the last second counts, and the verdicts stand."""
        t = topic(policy=TopicPolicy.model_validate({"slow_call": {"normal_window_ms": 1000}}))
        slow = {1, 4, 7, 10}
        peaks = _waited_together_then_drained(t, slow)
        held = {p: (11.0 if p in slow else 0.005) for p in range(12)}
        assert len(beyond_normal(t, candidates(t, SLOW, [1, 4]), normal_of(t, peaks, 11.0), held)) == 2

    def test_a_stall_among_partitions_quick_all_along_stands(self) -> None:
        """Broker 2's partitions stall 2 s while the others peak at 5 ms the whole time: the look back changes
        nothing (the limit over 2 s is 25 ms, as over the last second)."""
        t = topic()
        peaks: dict[int, float] = {}
        for i in range(21):
            now = 10.0 + 0.1 * i
            for p, part in t.partitions.items():
                peaks[p] = part.note_age(0.1 * i if p % 3 == 1 else 0.005, now)
        held = {p: (2.0 if p % 3 == 1 else 0.005) for p in range(12)}
        normal = normal_of(t, peaks, 12.0)
        assert normal.limit is not None and normal.limit_for(2, 2.0) == normal.limit
        assert len(beyond_normal(t, candidates(t, SLOW, [1, 4]), normal_of(t, peaks, 12.0), held)) == 2
