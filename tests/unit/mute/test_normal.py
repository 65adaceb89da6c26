"""What counts as a normal wait in a round (mutepro.mute.normal)."""

from __future__ import annotations

from mutepro.detect.model import MuteReason
from mutepro.mute.normal import beyond_normal, normal_limit, waiting_beyond_normal
from tests.unit.mute._rules import FAILING, SLOW, candidates, topic


class TestBeyondNormal:
    """Partition p is led by broker p % 3 + 1; peaks are the active partitions' recent oldest-undelivered ages."""

    def test_a_stall_among_quick_peers_stands(self) -> None:
        """Broker 2's partitions 1.2 s old, the other 8 at ~5 ms: 5 x the lower quartile is ~25 ms: kept."""
        t = topic()
        peaks = {p: (1.2 if p % 3 == 1 else 0.005) for p in range(12)}
        kept = beyond_normal(t, candidates(t, SLOW, [1, 4]), peaks, peaks)
        assert [c[1].partition for c in kept] == [1, 4]
        assert not t.shared_slowness

    def test_everyone_waiting_as_long_is_normal(self) -> None:
        """Every partition 0.9-1.07 s deep (the producer's own queue, or a cluster slow everywhere): slow-call
        verdicts dropped, others kept, said once."""
        t = topic()
        peaks = {p: 0.9 + 0.015 * p for p in range(12)}
        kept = beyond_normal(t, candidates(t, SLOW, [0, 2]) + candidates(t, FAILING, [1]), peaks, peaks)
        assert [(c[1].partition, c[2].reason) for c in kept] == [(1, MuteReason.FAILURE_RATE)]
        assert t.shared_slowness

    def test_two_brokers_of_three_stalled_are_both_kept(self) -> None:
        """The third broker is the better-served quarter: the stalls of the other two stand."""
        t = topic()
        peaks = {p: (0.003 if p % 3 == 0 else 2.0) for p in range(12)}
        assert len(beyond_normal(t, candidates(t, SLOW, [1, 2]), peaks, peaks)) == 2

    def test_the_age_now_decides_not_the_peak(self) -> None:
        """A partition that peaked at 1.5 s but holds nothing old now (held 10 ms) is not waiting beyond normal."""
        t = topic()
        peaks = {p: (1.5 if p == 1 else 0.004) for p in range(12)}
        held = {**peaks, 1: 0.01}
        assert beyond_normal(t, candidates(t, SLOW, [1]), peaks, held) == []

    def test_too_few_active_partitions_keep_every_verdict(self) -> None:
        """Two active partitions: nothing to compare with, the verdict stands."""
        t = topic()
        peaks = {0: 1.0, 1: 1.0}
        assert len(beyond_normal(t, candidates(t, SLOW, [0]), peaks, peaks)) == 1
        assert normal_limit(t, peaks) is None

    def test_only_its_own_leaders_partitions_are_no_reference(self) -> None:
        """A rack-aware producer writes only to broker 1's 4 partitions; broker 1 stalls and all 4 age together:
        its own partitions are no evidence that the wait is normal, so the stall stands."""
        t = topic()
        peaks = {p: 1.5 for p in (0, 3, 6, 9)}  # led by broker 1
        assert normal_limit(t, peaks, leader=1) is None
        assert [c[1].partition for c in beyond_normal(t, candidates(t, SLOW, [0, 3]), peaks, peaks)] == [0, 3]

    def test_waiting_beyond_normal_names_the_partitions(self) -> None:
        """What a broker verdict from statistics may mute: only partitions whose own messages wait."""
        t = topic()
        peaks = {p: (0.002 if p < 9 else 0.8) for p in range(12)}
        held = {**peaks, 5: 0.0}
        assert waiting_beyond_normal(t, peaks, held) == frozenset({9, 10, 11})
