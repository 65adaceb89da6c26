"""The relative slow rule and the probe limit (mutepro.mute.outliers)."""

from __future__ import annotations

import pytest

from mutepro.detect.model import MuteReason
from mutepro.mute.normal import normal_of
from mutepro.mute.outliers import age_outliers, leader_behind, oldest_by_leader, probe_limit
from mutepro.mute.records import Candidate, TopicRecord
from mutepro.mute.suspicion import CONFIRM_EPISODES
from mutepro.policy.schema import SlowCallConfig, TopicPolicy
from tests.unit.mute._rules import topic


class TestLeaders:
    def test_oldest_by_leader_takes_each_leaders_maximum(self) -> None:
        """Ages of partitions 0, 3 (leader 1) and 1 (leader 2): the larger per leader."""
        t = topic()
        assert oldest_by_leader(t, {0: 0.2, 3: 0.7, 1: 0.1}) == {1: 0.7, 2: 0.1}
        assert leader_behind(-1, {1: 1.0, 2: 1.0}) and leader_behind(3, {1: 1.0, 2: 1.0})

    def test_a_leader_is_behind_when_another_holds_nothing_as_old(self) -> None:
        """1.5 s against another leader's 1.0 s: behind; 1.0 s when every other leader holds 1.0-2.0 s: not."""
        assert leader_behind(1, {1: 1.5, 2: 1.0})
        assert not leader_behind(1, {1: 1.0, 2: 1.0, 3: 2.0})


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
        avoided, not muted; past slow_call.cold_start_ms (5 s) it is muted like any other."""
        t = topic()
        t.partitions[1].reported_ever = False
        assert outliers(t, {p: 4.0 if p == 1 else 0.0 for p in range(12)}) == []
        assert 1 in t.avoided
        later = {p: 5.5 if p == 1 else 0.0 for p in range(12)}
        assert len(age_outliers(t, later, later, set(), NOW + 1.5)) == 1  # the same (third) episode, 1.5 s on

    def test_a_shorter_cold_start_mutes_a_cold_partition_sooner(self) -> None:
        """slow_call.cold_start_ms 3000: the same cold partition 4 s behind is muted."""
        t = topic(policy=TopicPolicy.model_validate({"slow_call": {"cold_start_ms": 3000}}))
        t.partitions[1].reported_ever = False
        assert [c[1].partition for c in outliers(t, {p: 4.0 if p == 1 else 0.0 for p in range(12)})] == [1]

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
        peaks = dict.fromkeys(range(11), 0.5)
        assert probe_limit(t, peaks) == 0.4  # the outlier floor alone
        assert probe_limit(t, peaks, normal_of(t, peaks).limit) == 2.5

    def test_without_peers_the_slow_threshold(self) -> None:
        """No active peers (all muted, or one-partition traffic): the slow threshold."""
        t = topic()
        assert probe_limit(t, {}) == 1.0
