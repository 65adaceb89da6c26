"""KIP-36 placement: Kafka's AdminUtils vectors and the properties its javadoc promises."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from mutepro.errors import ConfigError
from mutepro.racks.placement import (
    PARTIAL_RACKS_MESSAGE,
    BrokerMetadata,
    PlacementError,
    assign_replicas_to_brokers,
    check_placement,
    rack_alternated_broker_list,
    replica_index,
)

KIP36_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
EVEN_RACKS = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


class TestRackAlternatedList:
    def test_kip36_vector(self) -> None:
        """Racks visited in sorted order, lowest id first: Java's [0, 3, 1, 5, 4, 2]."""
        assert rack_alternated_broker_list(KIP36_RACKS) == [0, 3, 1, 5, 4, 2]

    def test_uneven_racks_skip_exhausted_rack(self) -> None:
        """Without broker 5, rack1 runs out first and is skipped: Java's [0, 3, 1, 4, 2]."""
        racks = {b: r for b, r in KIP36_RACKS.items() if b != 5}
        assert rack_alternated_broker_list(racks) == [0, 3, 1, 4, 2]


class TestReplicaIndex:
    def test_follower_never_lands_on_leader(self) -> None:
        """shift is 1 + (s + j) % (n - 1), never 0, so no follower index equals the leader's."""
        for n in range(2, 8):
            for first in range(n):
                for s in range(n):
                    assert all(replica_index(first, s, j, n) != first for j in range(n - 1))


class TestJavaVectors:
    def test_kip36_rack_aware_vector(self) -> None:
        """AdminRackAwareTest: 7 partitions, RF 3, start 0 → partition 6 shifts to [0, 4, 2]."""
        assert assign_replicas_to_brokers(KIP36_RACKS, 7, 3, 0, 0) == {
            0: [0, 3, 1],
            1: [3, 1, 5],
            2: [1, 5, 4],
            3: [5, 4, 2],
            4: [4, 2, 0],
            5: [2, 0, 3],
            6: [0, 4, 2],
        }

    def test_rack_unaware_vector(self) -> None:
        """AdminTest.testReplicaAssignment: brokers 0-4 without racks, 10 partitions, RF 3, start 0."""
        brokers = [BrokerMetadata(b) for b in range(5)]
        assert assign_replicas_to_brokers(brokers, 10, 3, 0) == {
            0: [0, 1, 2],
            1: [1, 2, 3],
            2: [2, 3, 4],
            3: [3, 4, 0],
            4: [4, 0, 1],
            5: [0, 2, 3],
            6: [1, 3, 4],
            7: [2, 4, 0],
            8: [3, 0, 1],
            9: [4, 1, 2],
        }

    def test_same_start_index_same_result(self) -> None:
        """A fixed start index is deterministic whatever the rng."""
        first = assign_replicas_to_brokers(EVEN_RACKS, 13, 3, 2, rng=random.Random(1))
        second = assign_replicas_to_brokers(EVEN_RACKS, 13, 3, 2, rng=random.Random(99))
        assert first == second

    def test_random_start_comes_from_injected_rng(self) -> None:
        """Without a fixed start, the same seed gives the same assignment."""
        a = assign_replicas_to_brokers(EVEN_RACKS, 6, 3, rng=random.Random(7))
        b = assign_replicas_to_brokers(EVEN_RACKS, 6, 3, rng=random.Random(7))
        assert a == b

    def test_start_partition_id_numbers_new_partitions(self) -> None:
        """Expansion from partition 12 yields ids 12..23."""
        assignment = assign_replicas_to_brokers(EVEN_RACKS, 12, 2, 0, 12)
        assert sorted(assignment) == list(range(12, 24))


class TestErrors:
    def test_partial_racks_raise_java_message(self) -> None:
        """Only some brokers with racks → Java's message, naming the brokers without one."""
        with pytest.raises(PlacementError) as info:
            assign_replicas_to_brokers({0: "rack1", 1: "rack2", 2: None}, 3, 2, 0)
        assert str(info.value).startswith(PARTIAL_RACKS_MESSAGE)
        assert "[2]" in str(info.value)

    def test_placement_error_is_config_error(self) -> None:
        """PlacementError is caught by `except ConfigError`."""
        with pytest.raises(ConfigError):
            assign_replicas_to_brokers(EVEN_RACKS, 3, 7, 0)

    @pytest.mark.parametrize(("partitions", "rf", "needle"), [(0, 1, "partitions"), (3, 0, "Replication factor")])
    def test_non_positive_sizes_rejected(self, partitions: int, rf: int, needle: str) -> None:
        """Zero partitions or replication factor name the field."""
        with pytest.raises(PlacementError, match=needle):
            assign_replicas_to_brokers(EVEN_RACKS, partitions, rf, 0)


def _distinct_racks(replicas: list[int], racks: dict[int, str]) -> int:
    return len({racks[b] for b in replicas})


class TestProperties:
    @pytest.mark.parametrize("start", range(6))
    @pytest.mark.parametrize("partitions", [6, 12, 13])
    def test_one_replica_per_rack_when_rf_le_racks(self, start: int, partitions: int) -> None:
        """RF 2 and 3 on 3 racks: every partition has RF distinct racks."""
        for rf in (2, 3):
            assignment = assign_replicas_to_brokers(EVEN_RACKS, partitions, rf, start)
            assert all(_distinct_racks(r, EVEN_RACKS) == rf for r in assignment.values())
            assert all(len(set(r)) == rf for r in assignment.values())

    @pytest.mark.parametrize("start", range(4))
    def test_every_rack_covered_when_rf_ge_racks(self, start: int) -> None:
        """RF 3 on 2 racks (3+1 brokers): every partition touches both racks."""
        racks = {0: "a", 1: "a", 2: "a", 3: "b"}
        assignment = assign_replicas_to_brokers(racks, 8, 3, start)
        assert all(_distinct_racks(r, racks) == 2 for r in assignment.values())

    @pytest.mark.parametrize("start", range(6))
    def test_leaders_and_replicas_even(self, start: int) -> None:
        """Equal racks of equal size, partitions a multiple of brokers: 2 leaders and 6 replicas per broker."""
        check = check_placement(assign_replicas_to_brokers(EVEN_RACKS, 12, 3, start), EVEN_RACKS)
        assert set(check.leaders_per_broker.values()) == {2}
        assert set(check.replicas_per_broker.values()) == {6}
        assert check.rack_aware and check.rack_leader_skew == 0

    def test_random_starts_stay_rack_aware(self) -> None:
        """Fifty random starts: never a rack violation, leaders within one per broker."""
        rng = random.Random(2024)
        for _ in range(50):
            assignment = assign_replicas_to_brokers(KIP36_RACKS, 6, 3, rng=rng)
            check = check_placement(assignment, KIP36_RACKS)
            assert check.rack_aware
            assert check.leader_skew == 0


class TestCheckPlacement:
    def test_counts_and_violation(self) -> None:
        """A partition with two replicas on rack1 is a violation; idle brokers count as zero."""
        check = check_placement({0: [0, 5, 1], 1: [3, 1, 0]}, KIP36_RACKS)
        assert check.rack_violations == (0,)
        assert check.leaders_per_broker[2] == 0
        assert check.leaders_per_rack == dict(Counter({"rack1": 1, "rack2": 1, "rack3": 0}))
        assert check.leader_skew == 1
