"""The topic-wide rules that decide which detector verdicts become mutes (mutepro.mute.verdicts)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from mutepro.detect.model import MuteReason, Verdict
from mutepro.mute.records import PartitionRecord, TopicRecord
from mutepro.mute.states import BreakerState
from mutepro.mute.suspicion import CONFIRM_EPISODES
from mutepro.mute.verdicts import (
    Candidate,
    age_outliers,
    beyond_normal,
    congestion_outliers,
    leader_behind,
    normal_limit,
    oldest_by_leader,
    own_evidence_by_leader,
    probe_limit,
    slow_rates_still_waiting,
    waiting_beyond_normal,
    waits_on,
    without_saturation,
    written_by_leader,
)
from mutepro.policy.schema import SlowCallConfig, TopicPolicy

SLOW = Verdict(MuteReason.SLOW_CALL, {"slow_call_rate": 0.9})
CONGESTED = Verdict(MuteReason.CONGESTION, {"share_pct": 40})
FAILING = Verdict(MuteReason.FAILURE_RATE, {"failure_rate": 0.8})


@dataclass
class StubBreaker:
    """Only what the rules read: the state and the verdict that opened it."""

    state: BreakerState = BreakerState.CLOSED
    reason: Verdict | None = None


def topic(partitions: int = 12, leaders: int = 3, policy: TopicPolicy | None = None) -> TopicRecord:
    t = TopicRecord("t", policy or TopicPolicy())
    for p in range(partitions):
        part = PartitionRecord(p, StubBreaker(), [])  # type: ignore[arg-type]  # the rules read state/reason
        part.leader = p % leaders + 1
        part.reported_ever = True  # warm (see TestAgeOutliers.test_a_cold_partition_waits_out_the_warm_up)
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

    def test_peers_are_the_partitions_taking_traffic(self) -> None:
        """Rack-aware partitioning sends a saturated queue to the 4 local partitions (25 % each); the 8 idle
        partitions are not peers, so none of the 4 is an outlier (against all 12 the median was 0: all muted)."""
        t = topic()
        local = [0, 3, 6, 9]
        outstanding = {p: 25_000 if p in local else 0 for p in range(12)}
        assert congestion_outliers(candidates(t, CONGESTED, local), outstanding, 3.0, local) == []
        assert len(congestion_outliers(candidates(t, CONGESTED, local), outstanding, 3.0)) == 4

    def test_a_stalled_partition_among_active_peers_is_kept(self) -> None:
        """The stalled partition itself need not be active (nothing new goes to it): its peers decide."""
        t = topic()
        outstanding = {0: 30_000, 3: 900, 6: 1_100, 9: 1_000, **{p: 0 for p in (1, 2, 4, 5, 7, 8, 10, 11)}}
        kept = congestion_outliers(candidates(t, CONGESTED, [0]), outstanding, 3.0, [3, 6, 9])
        assert [c[1].partition for c in kept] == [0]

    def test_no_peer_leaves_the_share_to_decide(self) -> None:
        t = topic()
        outstanding = {0: 30_000, **{p: 0 for p in range(1, 12)}}
        assert len(congestion_outliers(candidates(t, CONGESTED, [0]), outstanding, 3.0, [0])) == 1

    def test_a_factor_of_one_disables_the_rule(self) -> None:
        """outlier_factor <= 1 keeps every congestion verdict."""
        t = topic()
        outstanding = dict.fromkeys(range(12), 100)
        assert len(congestion_outliers(candidates(t, CONGESTED, [0]), outstanding, 1.0)) == 1


class TestWithoutSaturation:
    def test_the_partitions_written_to_all_waiting_behind_the_backlog_mute_nothing(self) -> None:
        """Rack-aware saturation: the 4 partitions written to all deliver and all hold 1.5 s old messages; the
        first verdict alone (one of 12) would have muted, but 4 of the 4 written to are queueing."""
        t = topic()
        local = [0, 3, 6, 9]
        for p in local:
            t.partitions[p].delivered_at = 99.8
        kept = without_saturation(t, candidates(t, SLOW, [3]), dict.fromkeys(local, 1.5), 100.0)
        assert kept == [] and t.saturated

    def test_the_partitions_written_to_delivering_nothing_are_stalled_not_saturated(self) -> None:
        """The same 4 partitions with their broker stopped deliver nothing: the verdicts stay."""
        t = topic()
        local = [0, 3, 6, 9]
        for p in local:
            t.partitions[p].delivered_at = 97.0
        kept = without_saturation(t, candidates(t, SLOW, local), dict.fromkeys(local, 3.0), 100.0)
        assert len(kept) == 4 and not t.saturated

    def test_a_minority_waiting_among_the_partitions_written_to_is_muted(self) -> None:
        """A limping broker: 4 of 12 written-to partitions old (they deliver between stops), 8 young."""
        t = topic()
        for p in range(12):
            t.partitions[p].delivered_at = 99.9
        ages = {p: (0.9 if p % 3 == 1 else 0.01) for p in range(12)}
        assert len(without_saturation(t, candidates(t, SLOW, [1, 4]), ages, 100.0)) == 2

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


class TestWrittenByLeader:
    def test_counts_partitions_sent_to_or_muted(self) -> None:
        """Partitions with traffic (active_at set) or not closed count for their leader; idle closed ones do not."""
        t = topic()
        for p in (0, 3, 1):
            t.partitions[p].active_at = 1.0
        t.partitions[4].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        assert written_by_leader([t]) == {1: 2, 2: 2}


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

    def test_oldest_by_leader_takes_each_leaders_maximum(self) -> None:
        """Ages of partitions 0, 3 (leader 1) and 1 (leader 2): the larger per leader."""
        t = topic()
        assert oldest_by_leader(t, {0: 0.2, 3: 0.7, 1: 0.1}) == {1: 0.7, 2: 0.1}
        assert leader_behind(-1, {1: 1.0, 2: 1.0}) and leader_behind(3, {1: 1.0, 2: 1.0})


NOW = 100.0


def outliers(
    t: TopicRecord, ages: dict[int, float], peaks: dict[int, float] | None = None, judged: frozenset[int] = frozenset(),
    *, recurring: bool = True, held: dict[int, float] | None = None,
) -> list[Candidate]:
    """One round of the rule at NOW; ``recurring``: every leader's previous episode was deep and ended 1 s ago."""
    if recurring:
        for leader in {part.leader for part in t.partitions.values()}:
            t.suspicion(leader).last_end = NOW - 1.0
            t.suspicion(leader).last_deep = True
            t.suspicion(leader).chain = CONFIRM_EPISODES - 1
    return age_outliers(t, ages, ages if peaks is None else peaks, set(judged), NOW, held)


class TestAgeOutliers:
    def test_a_limping_brokers_partitions_stand_out(self) -> None:
        """Healthy partitions hold 0-3 ms, the limping broker's four 450 ms, a second time: those four are slow."""
        t = topic()
        ages = {p: 0.45 if p % 3 == 1 else 0.003 * (p % 2) for p in range(12)}
        found = outliers(t, ages)
        assert sorted(c[1].partition for c in found) == [1, 4, 7, 10]
        assert all(c[2].reason == MuteReason.SLOW_CALL and c[2].detail["rule"] == "outlier" for c in found)

    def test_a_first_episode_avoids_the_leader_without_muting(self) -> None:
        """The same ages with no earlier episode: nothing muted, every partition of leader 2 avoided."""
        t = topic()
        ages = {p: 0.45 if p % 3 == 1 else 0.003 * (p % 2) for p in range(12)}
        assert outliers(t, ages, recurring=False) == []
        assert t.avoided == frozenset({1, 4, 7, 10})
        assert t.suspicions[2].since == NOW

    def test_the_episode_ends_when_the_leader_holds_nothing_old(self) -> None:
        """Next round every partition of leader 2 is back under the avoid floor: no longer avoided."""
        t = topic()
        outliers(t, {p: 0.45 if p % 3 == 1 else 0.0 for p in range(12)}, recurring=False)
        age_outliers(t, dict.fromkeys(range(12), 0.0), dict.fromkeys(range(12), 0.0), set(), NOW + 0.5)
        assert t.avoided == frozenset()
        assert t.suspicions[2].last_end == NOW + 0.5

    def test_the_episode_end_says_how_old_its_partitions_got(self, caplog: pytest.LogCaptureFixture) -> None:
        """broker_avoid_ended (DEBUG) has peak_age_s: the oldest age the leader's partitions reached, held or not."""
        t = topic()
        with caplog.at_level("DEBUG", logger="mutepro"):
            outliers(t, {p: 0.2 if p % 3 == 1 else 0.0 for p in range(12)}, recurring=False)
            active = {p: 0.0 for p in range(12) if p % 3 != 1}
            age_outliers(t, active, active, set(), NOW + 0.5, active | {1: 0.6})
            age_outliers(t, active, active, set(), NOW + 0.7, active | {1: 0.0})
        ended = [r.getMessage() for r in caplog.records if r.getMessage().startswith("broker_avoid_ended")]
        assert len(ended) == 1 and "peak_age_s=0.6" in ended[0] and "deep=False" in ended[0]

    def test_an_avoided_partition_still_holding_old_messages_stays_avoided(self) -> None:
        """Partition 1 went inactive (avoided) but still holds a 0.6 s message (``held``): still avoided."""
        t = topic()
        outliers(t, {p: 0.45 if p % 3 == 1 else 0.0 for p in range(12)}, recurring=False)
        active = {p: 0.0 for p in range(12) if p % 3 != 1}
        age_outliers(t, active, active, set(), NOW + 0.5, active | {1: 0.6})
        assert 1 in t.avoided and t.suspicions[2].active

    def test_a_cold_partition_is_steered_around_not_muted(self) -> None:
        """Partition 1 has never had a report: 4 s behind may be a new partition's first write, not its leader --
        avoided, not muted; past COLD_START_S it is muted like any other."""
        t = topic()
        t.partitions[1].reported_ever = False
        assert outliers(t, {p: 4.0 if p == 1 else 0.0 for p in range(12)}) == []
        assert 1 in t.avoided
        later = {p: 5.5 if p == 1 else 0.0 for p in range(12)}
        assert len(age_outliers(t, later, later, set(), NOW + 1.5)) == 1  # the same (third) episode, 1.5 s on

    def test_between_the_floors_only_steers(self) -> None:
        """A recurring 300 ms outlier is over avoid_min_ms (150) but under outlier_min_ms (400): avoided only."""
        t = topic()
        ages = {p: 0.3 if p == 1 else 0.0 for p in range(12)}
        assert outliers(t, ages) == []
        assert 1 in t.avoided

    def test_below_the_avoid_floor_nothing_happens(self) -> None:
        """100 ms against a median of 0 stays under avoid_min_ms (150 ms)."""
        t = topic()
        assert outliers(t, {p: 0.1 if p == 1 else 0.0 for p in range(12)}) == []
        assert t.avoided == frozenset()

    def test_a_saturated_producer_is_not_an_outlier(self) -> None:
        """Every partition 300-600 ms deep: a 1.2 s one is 2.4-4x the median, under the factor 5."""
        t = topic()
        ages = {p: 0.3 + 0.3 * (p % 2) for p in range(12)} | {5: 1.2}
        assert outliers(t, ages) == []
        assert t.avoided == frozenset()

    def test_a_leader_no_further_behind_than_the_others_is_not_suspected(self) -> None:
        """A wide topic: most partitions hold nothing, one per leader 0.8-1 s old: no episode, nothing avoided."""
        t = topic(partitions=120)
        ages = dict.fromkeys(range(120), 0.0) | {0: 0.8, 1: 1.0, 2: 0.9}
        assert outliers(t, ages) == []
        assert t.avoided == frozenset()

    def test_most_partitions_standing_out_is_saturation(self) -> None:
        """Seven of twelve partitions far behind a fast five: saturation, no episode, nothing avoided."""
        t = topic()
        ages = {p: 0.6 if p < 7 else 0.0 for p in range(12)}
        assert outliers(t, ages) == []
        assert t.avoided == frozenset() and not any(s.active for s in t.suspicions.values())

    def test_everyone_waiting_is_not_an_outlier(self) -> None:
        """RF=3 acks=all with a stalled follower: all twelve 2 s old, none stands out."""
        t = topic()
        assert outliers(t, dict.fromkeys(range(12), 2.0)) == []

    def test_peers_recent_peaks_are_the_reference(self) -> None:
        """A sticky producer: peers hold nothing right now but each had a 300 ms batch in the last second (the
        whole cluster is slow): a partition 400 ms behind is not an outlier."""
        t = topic()
        ages = {p: 0.4 if p == 1 else 0.0 for p in range(12)}
        peaks = {p: 0.4 if p == 1 else 0.3 for p in range(12)}
        assert outliers(t, ages, peaks) == []

    def test_too_few_active_peers_judge_nothing(self) -> None:
        """A topic whose traffic all goes to one or two partitions has no median to compare with."""
        t = topic()
        assert outliers(t, {0: 5.0, 1: 0.0}) == []
        assert t.avoided == frozenset()

    def test_partitions_with_a_verdict_are_not_judged_twice(self) -> None:
        """A partition another detector already has a verdict for gets no second one."""
        t = topic()
        ages = {p: 0.5 if p == 1 else 0.0 for p in range(12)}
        assert outliers(t, ages, judged=frozenset({1})) == []

    def test_a_factor_of_one_turns_the_rule_off(self) -> None:
        """slow_call.outlier_factor: 1 disables the relative rule (no steering either)."""
        t = topic(policy=TopicPolicy(slow_call=SlowCallConfig(outlier_factor=1.0)))
        ages = {p: 0.5 if p == 1 else 0.0 for p in range(12)}
        assert outliers(t, ages) == []
        assert t.avoided == frozenset()

    def test_an_avoid_floor_above_the_mute_floor_acts_as_the_mute_floor(self) -> None:
        """avoid_min_ms 800 with outlier_min_ms 400: a first 0.5 s episode is avoided (the lower floor wins)."""
        t = topic(policy=TopicPolicy(slow_call=SlowCallConfig(avoid_min_ms=800)))
        assert outliers(t, {p: 0.5 if p == 1 else 0.0 for p in range(12)}, recurring=False) == []
        assert 1 in t.avoided

    def test_an_unknown_leader_is_avoided_alone(self) -> None:
        """A leaderless partition standing out is its own suspect: only it is avoided."""
        t = topic()
        t.partitions[1].leader = -1
        assert outliers(t, {p: 0.5 if p == 1 else 0.0 for p in range(12)}, recurring=False) == []
        assert t.avoided == frozenset({1})


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


class TestProbeLimit:
    def test_the_outlier_bar_when_peers_are_fast(self) -> None:
        """Peers near 0 ms: a probe must answer within half of outlier_min_ms (0.2 s), not the 1 s threshold."""
        t = topic()
        assert probe_limit(t, dict.fromkeys(range(11), 0.002)) == 0.2

    def test_scaled_by_the_median(self) -> None:
        """Peers 60 ms deep: 5 x 0.06 = 0.3 s."""
        t = topic()
        assert abs(probe_limit(t, dict.fromkeys(range(11), 0.06)) - 0.3) < 1e-9

    def test_never_above_the_outlier_floor(self) -> None:
        """Peers 120 ms deep (a third of them at 2 ms) would give 0.6 s, at which five spaced probes can all pass
        in a 0.8 s-per-second limp: capped at outlier_min_ms (0.4 s)."""
        t = topic()
        peaks = {p: (0.002 if p < 4 else 0.12) for p in range(12)}
        assert probe_limit(t, peaks) == 0.4

    def test_never_above_the_slow_threshold(self) -> None:
        """A slow threshold below the outlier floor caps the bar too."""
        t = topic(policy=TopicPolicy.model_validate({"slow_call": {"threshold_ms": 300}}))
        peaks = {p: (0.002 if p < 4 else 0.5) for p in range(12)}
        assert probe_limit(t, peaks) == 0.3

    def test_never_below_normal(self) -> None:
        """Every peer 0.5 s deep (an overloaded cluster): a probe answered within 5 x 0.5 s is as good as any."""
        t = topic()
        assert probe_limit(t, dict.fromkeys(range(11), 0.5)) == 2.5

    def test_without_peers_the_slow_threshold(self) -> None:
        """No active peers (all muted, or one-partition traffic): the slow threshold."""
        t = topic()
        assert probe_limit(t, {}) == 1.0


class TestSlowRatesStillWaiting:
    def test_a_rate_verdict_with_nothing_waiting_now_is_dropped(self) -> None:
        """One slow sticky batch, delivered: 1,954 of 1,954 calls slow, nothing stuck now -> no verdict."""
        t = topic()
        history = Verdict(MuteReason.SLOW_CALL, {"slow_call_rate": 1.0, "calls": 1954, "stuck": 0})
        assert slow_rates_still_waiting(candidates(t, history, [0])) == []

    def test_a_rate_verdict_with_messages_still_waiting_stands(self) -> None:
        """A partition slow now (messages past the threshold still undelivered) keeps its rate verdict."""
        t = topic()
        now_slow = Verdict(MuteReason.SLOW_CALL, {"slow_call_rate": 0.9, "calls": 40, "stuck": 3})
        assert len(slow_rates_still_waiting(candidates(t, now_slow, [0]))) == 1

    def test_stall_outlier_and_other_verdicts_pass_untouched(self) -> None:
        """Only the rate rule is filtered: stalls, outliers, failures and congestion keep their verdicts."""
        t = topic()
        stall = Verdict(MuteReason.SLOW_CALL, {"stalled": 1, "stuck": 4})
        outlier = Verdict(MuteReason.SLOW_CALL, {"rule": "outlier", "oldest_age_s": 0.6})
        kept = slow_rates_still_waiting(
            candidates(t, stall, [0]) + candidates(t, outlier, [1]) + candidates(t, FAILING, [2])
            + candidates(t, CONGESTED, [3])
        )
        assert [c[1].partition for c in kept] == [0, 1, 2, 3]


class TestWaitsOn:
    def _five_brokers(self) -> TopicRecord:
        """20 partitions on brokers 1-5, RF 3: partition p on (p % 5 + 1, (p + 1) % 5 + 1, (p + 2) % 5 + 1)."""
        t = topic(partitions=20, leaders=5)
        t.replicas = {p: (p % 5 + 1, (p + 1) % 5 + 1, (p + 2) % 5 + 1) for p in range(20)}
        return t

    def test_a_stopped_follower_is_named_as_a_replica(self) -> None:
        """Broker 4 stopped: the 12 partitions with a replica on it wait; partition 1 (led by 2) waits on 4."""
        t = self._five_brokers()
        waiting = {p for p, reps in t.replicas.items() if 4 in reps}
        assert len(waiting) == 12
        assert waits_on(t, 1, waiting, range(20)) == ("replica", 4)

    def test_a_stopped_leader_is_named_as_the_leader(self) -> None:
        """With acks=1 only broker 4's own partitions wait: they wait on their leader."""
        t = self._five_brokers()
        waiting = {p for p in range(20) if t.partitions[p].leader == 4}
        assert waits_on(t, 3, waiting, range(20)) == ("leader", 4)

    def test_without_replicas_it_is_the_leader(self) -> None:
        t = topic()
        assert waits_on(t, 2, {2}, range(12)) == ("leader", 3)
