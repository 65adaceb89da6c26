"""Cooperative-sticky port: Kafka's AbstractStickyAssignorTest rack scenarios (cooperative variant), owned
partitions and generations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mutepro.racks.assign.figures import compute_figures
from mutepro.racks.assign.model import ClusterMetadata, Member, Scenario, tps
from mutepro.racks.assign.sticky import CooperativeStickyAssignor, sticky_target
from tests.unit._assign_fixtures import assignment_strings, java_test_scenario, null_racks, racks

T_6_7_2 = {"t1": 6, "t2": 7, "t3": 2}
ALL3 = ["t1", "t2", "t3"]
OWNED_MISALIGNED = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3", "t2-4, t2-5, t2-6, t3-0, t3-1"]


def verify(
    rf: int,
    broker_racks: Sequence[str | None],
    consumer_racks: Sequence[str | None],
    consumer_topics: Sequence[Sequence[str]],
    owned: Sequence[str] | None,
    expected: Sequence[str],
    mismatches: int,
    *,
    prefer_rack_aware: bool = False,
    topics: Mapping[str, int] = T_6_7_2,
) -> None:
    scenario = java_test_scenario(topics, rf, broker_racks, consumer_racks, consumer_topics, owned)
    assignment = CooperativeStickyAssignor(prefer_rack_aware=prefer_rack_aware).assign(scenario)
    assert assignment_strings(assignment, len(consumer_topics)) == list(expected)
    if mismatches >= 0:
        assert compute_figures(scenario, assignment).mismatched == mismatches


def verify_twice(rf, broker_racks, consumer_racks, consumer_topics, expected, mismatches, **kw) -> None:
    """Java's verifyUniformSubscription/verifyNonEqualSubscription: from scratch, then owning the result."""
    verify(rf, broker_racks, consumer_racks, consumer_topics, None, expected, mismatches, **kw)
    verify(rf, broker_racks, consumer_racks, consumer_topics, expected, expected, mismatches, **kw)


class TestCooperativeStickyUniformSubscription:
    EXPECTED = ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"]

    def test_non_rack_aware_combinations(self):
        """Rack-awareness skipped (no broker/consumer racks, all replicas everywhere, disjoint racks)."""
        topics = [ALL3] * 3
        verify_twice(3, null_racks(3), racks(3), topics, self.EXPECTED, -1)
        verify_twice(3, racks(3), null_racks(3), topics, self.EXPECTED, -1)
        verify_twice(3, racks(3), racks(3), topics, self.EXPECTED, 0, prefer_rack_aware=True)
        verify_twice(4, racks(4), racks(3), topics, self.EXPECTED, 0, prefer_rack_aware=True)
        verify_twice(3, racks(3), racks(3), topics, self.EXPECTED, 0)
        verify_twice(3, racks(3), ["d", "e", "f"], topics, self.EXPECTED, -1)
        verify_twice(3, racks(3), [None, "e", "f"], topics, self.EXPECTED, -1)

    def test_rack_aligned_for_low_replication(self):
        """RF 1 and 2 over racks a,b,c: no mismatches; a consumer on a rack without replicas gets 5."""
        verify_twice(1, racks(3), racks(3), [ALL3] * 3, self.EXPECTED, 0)
        verify_twice(2, racks(3), racks(3), [ALL3] * 3, self.EXPECTED, 0)
        verify_twice(3, racks(2), racks(3), [ALL3] * 3, self.EXPECTED, 5)

    def test_misaligned_owned_partitions_are_revoked_first(self):
        """Cooperative: misaligned owned partitions are withheld this round, keeping only aligned ones."""
        verify(1, racks(3), racks(3), [ALL3] * 3, OWNED_MISALIGNED, ["t1-0, t1-3", "t2-1", "t2-5, t3-1"], 0)

    def test_stickiness_retained_when_racks_match(self):
        """Owning the rack-aligned assignment keeps it unchanged."""
        verify(3, racks(3), racks(3), [ALL3] * 3, self.EXPECTED, self.EXPECTED, 0, prefer_rack_aware=True)


class TestCooperativeStickyNonEqualSubscription:
    TOPICS = [ALL3, ALL3, ["t1", "t3"]]
    PLAIN = ["t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-4, t3-1"]

    def test_non_rack_aware_combinations(self):
        """The general (unequal subscription) builder without rack-awareness."""
        verify_twice(3, null_racks(3), racks(3), self.TOPICS, self.PLAIN, -1)
        verify_twice(3, racks(3), null_racks(3), self.TOPICS, self.PLAIN, -1)
        verify_twice(3, racks(3), racks(3), self.TOPICS, self.PLAIN, 0, prefer_rack_aware=True)
        verify_twice(4, racks(4), racks(3), self.TOPICS, self.PLAIN, 0, prefer_rack_aware=True)
        verify_twice(3, racks(3), ["d", "e", "f"], self.TOPICS, self.PLAIN, -1)
        verify_twice(3, racks(3), [None, "e", "f"], self.TOPICS, self.PLAIN, -1)

    def test_best_effort_rack_alignment(self):
        """RF 1: 4 mismatches are unavoidable; RF 2: none; a replica-less rack gets 5 mismatches."""
        verify_twice(
            1,
            racks(3),
            racks(3),
            self.TOPICS,
            ["t1-3, t2-0, t2-2, t2-3, t2-6", "t1-4, t2-1, t2-4, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-5, t3-1"],
            4,
        )
        verify_twice(
            2,
            racks(3),
            racks(3),
            self.TOPICS,
            ["t1-3, t2-0, t2-2, t2-5, t2-6", "t1-0, t2-1, t2-3, t2-4, t3-0", "t1-1, t1-2, t1-4, t1-5, t3-1"],
            0,
        )
        verify_twice(3, racks(2), racks(3), self.TOPICS, self.PLAIN, 5)

    def test_misaligned_owned_two_rebalances(self):
        """Owned misaligned partitions: an intermediate round, then the rack-aligned target."""
        intermediate = ["t1-3", "t2-1", "t3-1"]
        final = ["t1-3, t2-0, t2-2, t2-3, t2-6", "t1-4, t2-1, t2-4, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-5, t3-1"]
        verify(1, racks(3), racks(3), self.TOPICS, OWNED_MISALIGNED, intermediate, 0)
        verify(1, racks(3), racks(3), self.TOPICS, intermediate, final, 4)

    def test_all_racks_match_behaves_like_non_rack_aware(self):
        """With every replica on every rack the result matches the non-rack-aware one, in two rounds."""
        intermediate = ["t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"]
        final = ["t1-2, t1-3, t1-4, t2-4, t2-5", "t2-0, t2-1, t2-2, t2-3, t2-6", "t1-0, t1-1, t1-5, t3-0, t3-1"]
        for prefer in (False, True):
            verify(3, racks(3), racks(3), self.TOPICS, OWNED_MISALIGNED, intermediate, 0, prefer_rack_aware=prefer)
            verify(3, racks(3), racks(3), self.TOPICS, intermediate, final, 0, prefer_rack_aware=prefer)


def _generation_scenario(gen_a: int | None, gen_b: int | None) -> Scenario:
    cluster = ClusterMetadata({0: None}, {"t": ((0,),) * 4})
    members = (
        Member("a", ("t",), owned=tps("t-0", "t-1"), generation=gen_a),
        Member("b", ("t",), owned=tps("t-1", "t-2", "t-3"), generation=gen_b),
    )
    return Scenario(members, cluster)


class TestStickyGenerations:
    def test_higher_generation_keeps_conflicting_partition(self):
        """Two claims on t-1: the member with the newer generation keeps it."""
        target = sticky_target(_generation_scenario(5, 4)).assignment
        assert "t-1" in {str(tp) for tp in target["a"]}

    def test_same_generation_claims_are_transferred(self):
        """Same-generation double claims are invalidated, so the cooperative round withholds t-1."""
        now, target, moving = CooperativeStickyAssignor().plan(_generation_scenario(5, 5))
        owner = next(m for m, ps in target.items() if any(str(tp) == "t-1" for tp in ps))
        assert {str(tp) for tp in moving} == {"t-1"}
        assert all(str(tp) != "t-1" for tp in now[owner])

    def test_moves_never_exceed_one_partition_for_a_joining_member(self):
        """A third member joining a balanced 2-member group of 4 partitions takes exactly one partition."""
        cluster = ClusterMetadata({0: None}, {"t": ((0,),) * 4})
        members = (
            Member("a", ("t",), owned=tps("t-0", "t-1"), generation=3),
            Member("b", ("t",), owned=tps("t-2", "t-3"), generation=3),
            Member("c", ("t",)),
        )
        scenario = Scenario(members, cluster)
        target = sticky_target(scenario).assignment
        assert compute_figures(scenario, target).moves == 1
        assert len(target["c"]) == 1
