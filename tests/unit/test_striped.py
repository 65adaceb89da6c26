"""KRaft StripedReplicaPlacer port: Java vectors, guarantees and errors (the full differential test is in
tests/integration/test_kraft_vs_java.py)."""

from __future__ import annotations

import pytest

from mutepro.racks.javarandom import JavaRandom
from mutepro.racks.placement import PlacementError, check_placement
from mutepro.racks.striped import StripedReplicaPlacer, UsableBroker, reachable_placements, striped_placement

# racks a (1, 2), b (3, 4 fenced), c (5) and a broker without rack (6): printed by Kafka 4.3.1's placer
BROKERS = [
    UsableBroker(1, "a"), UsableBroker(2, "a"), UsableBroker(3, "b"), UsableBroker(4, "b", fenced=True),
    UsableBroker(5, "c"), UsableBroker(6, None),
]  # fmt: skip


class TestJavaVectors:
    def test_create_then_grow_with_one_placer(self) -> None:
        """Seed 42: 7 partitions, then 3 more from partition 7, exactly as Java's placer answers."""
        placer = StripedReplicaPlacer(JavaRandom(42))
        created = placer.place(7, 3, BROKERS)
        assert list(created.values()) == [
            [5, 6, 1], [6, 2, 3], [1, 3, 5], [3, 5, 6], [5, 6, 2], [6, 5, 3], [5, 3, 2],
        ]  # fmt: skip
        assert placer.place(3, 3, BROKERS, start_partition=7) == {7: [3, 5, 6], 8: [5, 6, 2], 9: [6, 1, 3]}


class TestGuarantees:
    def test_one_replica_per_rack_and_even_leaders_per_rack(self) -> None:
        """3 racks x 3 brokers, RF 3, 9 partitions: every partition on 3 racks, 3 leaders and 9 replicas per rack."""
        brokers = {b: "abc"[b // 3] for b in range(9)}
        for seed in range(50):
            check = check_placement(striped_placement(brokers, 9, 3, seed=seed), brokers)
            assert check.rack_aware and check.rack_leader_skew == 0 and check.replica_skew == 0

    def test_leaders_repeat_within_a_rack_until_the_reshuffle(self) -> None:
        """Java's quirk, kept: with RF = racks = brokers per rack, one broker per rack leads all of its rack's
        partitions in the first round (each rack's offset advances once per partition, 3 per lap)."""
        brokers = {b: "abc"[b // 3] for b in range(9)}
        for seed in range(50):
            leaders = check_placement(striped_placement(brokers, 9, 3, seed=seed), brokers).leaders_per_broker
            assert sorted(leaders.values()) == [0, 0, 0, 0, 0, 0, 3, 3, 3]

    def test_fenced_broker_never_leads(self) -> None:
        """A fenced broker may hold followers but never the first replica."""
        for seed in range(50):
            placed = striped_placement({1: "a", 2: "b", 3: "c"}, 6, 3, seed=seed, fenced=[2])
            assert all(replicas[0] != 2 for replicas in placed.values())

    def test_reachable_placements_cover_the_rack_rotation(self) -> None:
        """One broker per rack: the seed only picks which rack leads partition 0, so 3 outcomes exist."""
        outcomes = reachable_placements({1: "a", 2: "b", 3: "c"}, 3, 3, range(200))
        assert outcomes == {
            ((1, 2, 3), (2, 3, 1), (3, 1, 2)), ((2, 3, 1), (3, 1, 2), (1, 2, 3)), ((3, 1, 2), (1, 2, 3), (2, 3, 1)),
        }  # fmt: skip


class TestErrors:
    @pytest.mark.parametrize(
        ("rf", "fenced", "message"),
        [(0, [], "must be positive"), (4, [], "cannot be reached"), (1, [1, 2, 3], "All brokers are currently fenced")],
    )
    def test_java_messages(self, rf: int, fenced: list[int], message: str) -> None:
        """Impossible placements fail with Java's message."""
        with pytest.raises(PlacementError, match=message):
            striped_placement({1: "a", 2: "b", 3: "c"}, 3, rf, seed=1, fenced=fenced)


class TestReadmeFigures:
    def test_rf1_leaders_uneven_for_77_percent_of_seeds(self) -> None:
        """RF 1, 9 partitions, 3 one-broker racks: leaders per rack uneven for 2,320 of seeds 0..2999 (77%)."""
        brokers = {1: "rack-a", 2: "rack-b", 3: "rack-c"}
        uneven = sum(
            check_placement(striped_placement(brokers, 9, 1, seed=s), brokers).rack_leader_skew > 0 for s in range(3000)
        )
        assert uneven == 2320

    def test_nine_brokers_leader_skew(self) -> None:
        """9 brokers in 3 racks, 30 partitions RF 3: broker leader skew 5..10 for 989 of seeds 0..999."""
        brokers = {b: "abc"[b % 3] for b in range(9)}
        skews = [check_placement(striped_placement(brokers, 30, 3, seed=s), brokers).leader_skew for s in range(1000)]
        assert sum(5 <= k <= 10 for k in skews) == 989 and max(skews) == 10
