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


class TestControllerBrokerOrder:
    """The placer sees brokers in the controller's HashMap<Integer, ...> order (BrokerHeartbeatManager.brokers).

    Vectors printed by Kafka 4.3.1's StripedReplicaPlacer over a real BrokerHeartbeatManager (KraftHarness).
    """

    def test_order_is_bucket_order(self) -> None:
        """1014, 1042, 1140 land in buckets 6, 2, 4 of 16; ids below the table size stay ascending."""
        from mutepro.racks.striped import controller_broker_order

        assert controller_broker_order([1014, 1042, 1140]) == [1042, 1140, 1014]
        assert controller_broker_order([3, 1, 2]) == [1, 2, 3]
        assert controller_broker_order(range(1001, 1013)) == [1008, 1009, 1010, 1011, 1012, *range(1001, 1008)]
        # 13 brokers grow the table to 32: 20 (bucket 20) now comes after 1 .. 12
        assert controller_broker_order([20, *range(1, 13)]) == [*range(1, 13), 20]

    def test_bucket_mates_keep_registration_order(self) -> None:
        """1 and 17 share bucket 1 of 16: their order is the order given (registration), and it is reported."""
        from mutepro.racks.striped import controller_broker_order, registration_order_matters

        assert controller_broker_order([17, 1, 2]) == [17, 1, 2]
        assert controller_broker_order([1, 17, 2]) == [1, 17, 2]
        assert registration_order_matters([1, 17, 2]) == [(1, 17)]
        assert registration_order_matters([1014, 1042, 1140]) == []

    def test_minimal_case(self) -> None:
        """Java places [1140, 1042, 1014]; sorted ids gave [1014, 1042, 1140]."""
        from mutepro.racks.striped import controller_broker_order

        brokers = {1014: "C#", 1042: "BB", 1140: "C#"}
        ordered = {b: brokers[b] for b in controller_broker_order(brokers)}
        assert striped_placement(ordered, 1, 3, seed=-7889932286183599930) == {0: [1140, 1042, 1014]}

    # brokers 1001-1010 on rack1-rack10, 1011 on rack6, 1012 on rack10: "rack6" and "rack10" share a bucket of
    # the placer's rack HashMap, so which of them draws its random offset first follows the broker order
    SEED_BROKERS = {**{b: f"rack{b - 1000}" for b in range(1001, 1011)}, 1011: "rack6", 1012: "rack10"}
    JAVA = {
        1: "1009 1001 1010|1001 1012 1002|1010 1002 1003|1002 1003 1004|1003 1004 1005|1004 1005 1006",
        2: "1004 1005 1006|1005 1011 1007|1006 1007 1008|1007 1008 1009|1008 1009 1001|1009 1001 1010",
        4: "1002 1003 1004|1003 1004 1005|1004 1005 1011|1005 1006 1007|1011 1007 1008|1007 1008 1009",
        5: "1010 1002 1003|1002 1003 1004|1003 1004 1005|1004 1005 1006|1005 1011 1007|1006 1007 1008",
        8: "1004 1005 1006|1005 1011 1007|1006 1007 1008|1007 1008 1009|1008 1009 1001|1009 1001 1010",
        11: "1004 1005 1011|1005 1006 1007|1011 1007 1008|1007 1008 1009|1008 1009 1001|1009 1001 1012",
        13: "1001 1012 1002|1010 1002 1003|1002 1003 1004|1003 1004 1005|1004 1005 1011|1005 1006 1007",
        14: "1007 1008 1009|1008 1009 1001|1009 1001 1012|1001 1010 1002|1012 1002 1003|1002 1003 1004",
        19: "1001 1010 1002|1012 1002 1003|1002 1003 1004|1003 1004 1005|1004 1005 1006|1005 1011 1007",
        20: "1011 1007 1008|1007 1008 1009|1008 1009 1001|1009 1001 1012|1001 1010 1002|1012 1002 1003",
    }

    def test_seeds_that_depend_on_the_order(self) -> None:
        """6 partitions, RF 3, seeds 1-20: 10 seeds place differently in the controller's order, as Java does."""
        from mutepro.racks.striped import controller_broker_order

        brokers = self.SEED_BROKERS
        ordered = {b: brokers[b] for b in controller_broker_order(brokers)}
        differing = []
        for seed in range(1, 21):
            placed = striped_placement(ordered, 6, 3, seed=seed)
            if placed != striped_placement(dict(sorted(brokers.items())), 6, 3, seed=seed):
                differing.append(seed)
                expected = [[int(b) for b in p.split()] for p in self.JAVA[seed].split("|")]
                assert [placed[p] for p in range(6)] == expected, seed
        assert differing == sorted(self.JAVA)
