"""Figures: rack locality, cross-rack bytes, balance and moves of an assignment."""

from __future__ import annotations

from mutepro.racks.assign.figures import compute_figures, count_moves, previous_owners
from mutepro.racks.assign.model import ClusterMetadata, Member, Scenario, tps

# 3 brokers on racks a, b, c; t has 3 partitions with RF=1: t-0 on a, t-1 on b, t-2 on c
CLUSTER = ClusterMetadata(
    {1: "a", 2: "b", 3: "c"},
    {"t": ((1,), (2,), (3,))},
    partition_bytes=dict(zip(tps("t-0", "t-1", "t-2"), (100, 200, 300), strict=True)),
)


def scenario(*members: Member) -> Scenario:
    return Scenario(members, CLUSTER)


class TestLocality:
    def test_all_local(self):
        """Each consumer reading the partition on its own rack: no mismatch, no cross-rack bytes."""
        s = scenario(Member("x", ("t",), "a"), Member("y", ("t",), "b"), Member("z", ("t",), "c"))
        f = compute_figures(s, {"x": list(tps("t-0")), "y": list(tps("t-1")), "z": list(tps("t-2"))})
        assert (f.local, f.mismatched, f.cross_rack_bytes, f.leader_cross_rack) == (3, 0, 0, 0)

    def test_cross_rack_bytes_sum_mismatched_partitions(self):
        """A rack-a consumer reading t-1 (b) and t-2 (c) reads 200 + 300 bytes cross-rack."""
        s = scenario(Member("x", ("t",), "a"))
        f = compute_figures(s, {"x": list(tps("t-0", "t-1", "t-2"))})
        assert (f.mismatched, f.cross_rack_bytes, f.bytes) == (2, 500, 600)

    def test_member_without_rack_is_not_a_mismatch(self):
        """No client.rack: locality unknown, counted under no_rack instead."""
        s = scenario(Member("x", ("t",)))
        f = compute_figures(s, {"x": list(tps("t-0", "t-1"))})
        assert (f.mismatched, f.no_rack) == (0, 2)

    def test_leader_cross_rack_with_follower_on_rack(self):
        """RF=2 with the leader on b and a follower on a: local with KIP-392, cross-rack without it."""
        cluster = ClusterMetadata({1: "a", 2: "b"}, {"u": ((2, 1),)})
        s = Scenario((Member("x", ("u",), "a"),), cluster)
        f = compute_figures(s, {"x": list(tps("u-0"))})
        assert (f.mismatched, f.leader_cross_rack, f.leader_cross_rack_bytes) == (0, 1, 1)


class TestBalance:
    def test_spread_and_unassigned(self):
        """Counts 2 and 0 give spread 2; a partition nobody got is unassigned."""
        s = scenario(Member("x", ("t",)), Member("y", ("t",)))
        f = compute_figures(s, {"x": list(tps("t-0", "t-1")), "y": []})
        assert (f.min_per_member, f.max_per_member, f.spread, f.unassigned) == (0, 2, 2, 1)

    def test_not_worse_than(self):
        """A balanced assignment is not worse than an unbalanced one, and not vice versa."""
        s = scenario(Member("x", ("t",)), Member("y", ("t",)))
        good = compute_figures(s, {"x": list(tps("t-0", "t-1")), "y": list(tps("t-2"))})
        bad = compute_figures(s, {"x": list(tps("t-0", "t-1", "t-2")), "y": []})
        assert good.not_worse_than(bad)
        assert not bad.not_worse_than(good)


class TestMoves:
    def test_highest_generation_is_the_previous_owner(self):
        """Two claims on t-0: generation 5 beats generation 4."""
        s = scenario(
            Member("x", ("t",), owned=tps("t-0"), generation=4), Member("y", ("t",), owned=tps("t-0"), generation=5)
        )
        assert previous_owners(s)[tps("t-0")[0]] == {"y"}

    def test_moves_count_partitions_leaving_their_owner(self):
        """x owned t-0 and t-1; giving t-1 to y is one move, t-2 (unowned) is none."""
        s = scenario(Member("x", ("t",), owned=tps("t-0", "t-1"), generation=1), Member("y", ("t",)))
        assert count_moves(s, {"x": list(tps("t-0")), "y": list(tps("t-1", "t-2"))}) == 1

    def test_partitions_of_unsubscribed_topics_are_not_moves(self):
        """An owned partition of a topic nobody subscribes to any more is not counted."""
        cluster = ClusterMetadata({1: "a"}, {"t": ((1,),), "old": ((1,),)})
        s = Scenario((Member("x", ("t",), owned=tps("old-0"), generation=1),), cluster)
        assert count_moves(s, {"x": list(tps("t-0"))}) == 0
