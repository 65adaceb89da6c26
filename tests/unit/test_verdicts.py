"""The topic-wide rules that decide which detector verdicts become mutes (mutepro.mute.verdicts)."""

from __future__ import annotations

from dataclasses import dataclass

from mutepro.detect.model import MuteReason, Verdict
from mutepro.mute.records import PartitionRecord, TopicRecord
from mutepro.mute.states import BreakerState
from mutepro.mute.verdicts import Candidate, congestion_outliers, own_evidence_by_leader, without_saturation
from mutepro.policy.schema import TopicPolicy

SLOW = Verdict(MuteReason.SLOW_CALL, {"slow_call_rate": 0.9})
CONGESTED = Verdict(MuteReason.CONGESTION, {"share_pct": 40})
FAILING = Verdict(MuteReason.FAILURE_RATE, {"failure_rate": 0.8})


@dataclass
class StubBreaker:
    """Only what the rules read: the state and the verdict that opened it."""

    state: BreakerState = BreakerState.CLOSED
    reason: Verdict | None = None


def topic(partitions: int = 12, leaders: int = 3) -> TopicRecord:
    t = TopicRecord("t", TopicPolicy())
    for p in range(partitions):
        part = PartitionRecord(p, StubBreaker(), [])  # type: ignore[arg-type]  # the rules read state/reason
        part.leader = p % leaders + 1
        t.partitions[p] = part
    return t


def candidates(t: TopicRecord, verdict: Verdict, partitions: list[int]) -> list[Candidate]:
    return [(t, t.partitions[p], verdict) for p in partitions]


class TestCongestionOutliers:
    def test_a_partition_far_above_the_median_is_kept(self) -> None:
        """A stalled broker's partition holding 100x the others' median stays a verdict."""
        t = topic()
        outstanding = {p: 10_000 if p % 3 == 1 else 100 for p in range(12)}
        kept = congestion_outliers(candidates(t, CONGESTED, [1]), outstanding, 3.0)
        assert [c[1].partition for c in kept] == [1]

    def test_an_evenly_full_buffer_mutes_nothing(self) -> None:
        """A closed loop filling the buffer evenly (1.3x the median) is not congestion."""
        t = topic()
        outstanding = {p: 5_200 if p == 0 else 4_100 for p in range(12)}
        assert congestion_outliers(candidates(t, CONGESTED, [0]), outstanding, 3.0) == []

    def test_other_reasons_pass_untouched(self) -> None:
        """Only congestion verdicts are compared with the median."""
        t = topic()
        outstanding = dict.fromkeys(range(12), 100)
        kept = congestion_outliers(candidates(t, FAILING, [0]) + candidates(t, SLOW, [1]), outstanding, 3.0)
        assert len(kept) == 2

    def test_a_factor_of_one_disables_the_rule(self) -> None:
        """outlier_factor <= 1 keeps every congestion verdict."""
        t = topic()
        outstanding = dict.fromkeys(range(12), 100)
        assert len(congestion_outliers(candidates(t, CONGESTED, [0]), outstanding, 1.0)) == 1


class TestWithoutSaturation:
    def test_a_third_slow_is_muted(self) -> None:
        """One broker of three slow (4 of 12 partitions): every slow verdict stays."""
        t = topic()
        kept = without_saturation(t, candidates(t, SLOW, [0, 3, 6, 9]))
        assert len(kept) == 4 and not t.saturated

    def test_slow_everywhere_mutes_nothing_and_says_so(self) -> None:
        """All 12 slow at once (saturation, or RF=3 acks=all with a stalled ISR member): none muted."""
        t = topic()
        kept = without_saturation(t, candidates(t, SLOW, list(range(12))) + candidates(t, FAILING, [0]))
        assert [c[2] for c in kept] == [FAILING] and t.saturated

    def test_partitions_already_slow_muted_count(self) -> None:
        """4 already muted for slow calls plus 3 new ones make 7 of 12: over half, the new ones are dropped."""
        t = topic()
        for p in (0, 3, 6, 9):
            t.partitions[p].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        assert without_saturation(t, candidates(t, SLOW, [1, 4, 7])) == []

    def test_exactly_half_is_still_muted(self) -> None:
        """6 of 12 is not more than half: muted."""
        t = topic()
        assert len(without_saturation(t, candidates(t, SLOW, list(range(6))))) == 6

    def test_the_flag_clears_when_the_burst_ends(self) -> None:
        """After a saturated round, a round with few slow partitions clears t.saturated."""
        t = topic()
        without_saturation(t, candidates(t, SLOW, list(range(12))))
        without_saturation(t, candidates(t, SLOW, [0]))
        assert not t.saturated

    def test_a_single_partition_topic_is_never_saturated(self) -> None:
        """With one partition, its slow verdict is kept (there is nothing to compare it with)."""
        t = topic(partitions=1)
        assert len(without_saturation(t, candidates(t, SLOW, [0]))) == 1


class TestOwnEvidenceByLeader:
    def test_counts_open_partitions_per_leader(self) -> None:
        """Open breakers with their own verdict count against their leader."""
        t = topic()
        for p in (0, 3, 1):
            t.partitions[p].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        assert own_evidence_by_leader([t]) == {1: 2, 2: 1}

    def test_broker_verdicts_half_open_and_unknown_leaders_do_not_count(self) -> None:
        """Muted by the broker rule itself, on probation, or leaderless: no evidence."""
        t = topic()
        t.partitions[0].breaker = StubBreaker(BreakerState.OPEN, Verdict(MuteReason.BROKER))  # type: ignore[assignment]
        t.partitions[3].breaker = StubBreaker(BreakerState.HALF_OPEN, SLOW)  # type: ignore[assignment]
        t.partitions[6].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        t.partitions[6].leader = -1
        assert own_evidence_by_leader([t]) == {}
