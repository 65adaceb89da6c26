"""RangeAssignor port: Kafka's own RangeAssignorTest rack-aware scenarios, co-partitioning and static members."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mutepro.racks.assign.figures import compute_figures
from mutepro.racks.assign.model import ClusterMetadata, Member, Scenario, tps
from mutepro.racks.assign.range import RangeAssignor
from tests.unit._assign_fixtures import assignment_strings, java_test_scenario, null_racks, racks

T_6_7_2 = {"t1": 6, "t2": 7, "t3": 2}
ALL3 = ["t1", "t2", "t3"]


def verify(
    topics: Mapping[str, int],
    rf: int,
    broker_racks: Sequence[str | None],
    consumer_racks: Sequence[str | None],
    consumer_topics: Sequence[Sequence[str]],
    expected: Sequence[str],
    mismatches: int,
    *,
    prefer_rack_aware: bool = False,
) -> None:
    scenario = java_test_scenario(topics, rf, broker_racks, consumer_racks, consumer_topics)
    assignment = RangeAssignor(prefer_rack_aware=prefer_rack_aware).assign(scenario)
    assert assignment_strings(assignment, len(consumer_topics)) == list(expected)
    if mismatches >= 0:
        assert compute_figures(scenario, assignment).mismatched == mismatches


def verify_non_rack_aware(
    topics: Mapping[str, int], consumer_topics: Sequence[Sequence[str]], expected: Sequence[str]
) -> None:
    verify(topics, 3, null_racks(3), racks(3), consumer_topics, expected, -1)
    verify(topics, 3, racks(3), null_racks(3), consumer_topics, expected, -1)
    verify(topics, 3, racks(3), racks(3), consumer_topics, expected, 0)
    verify(topics, 4, racks(4), racks(3), consumer_topics, expected, 0)
    verify(topics, 3, racks(3), ["d", "e", "f"], consumer_topics, expected, -1)
    verify(topics, 3, racks(3), [None, "e", "f"], consumer_topics, expected, -1)
    verify(topics, 3, racks(3), racks(3), consumer_topics, expected, 0, prefer_rack_aware=True)


class TestRangeAssignorJavaScenarios:
    def test_rack_aware_uniform_subscription(self):
        """testRackAwareAssignmentWithUniformSubscription."""
        consumer_topics = [ALL3] * 3
        verify_non_rack_aware(
            T_6_7_2,
            consumer_topics,
            ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"],
        )
        verify(
            T_6_7_2,
            1,
            racks(3),
            racks(3),
            consumer_topics,
            ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"],
            0,
        )
        verify(
            T_6_7_2,
            2,
            racks(3),
            racks(3),
            consumer_topics,
            ["t1-0, t1-2, t2-0, t2-2, t2-3, t3-1", "t1-1, t1-3, t2-1, t2-4, t3-0", "t1-4, t1-5, t2-5, t2-6"],
            1,
        )
        verify(
            T_6_7_2,
            3,
            racks(2),
            racks(3),
            consumer_topics,
            ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"],
            4,
        )

    def test_rack_aware_non_equal_subscription(self):
        """testRackAwareAssignmentWithNonEqualSubscription."""
        consumer_topics = [ALL3, ALL3, ["t1", "t3"]]
        verify_non_rack_aware(
            T_6_7_2,
            consumer_topics,
            ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"],
        )
        verify(
            T_6_7_2,
            1,
            racks(3),
            racks(3),
            consumer_topics,
            ["t1-0, t1-3, t2-0, t2-2, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0", "t1-2, t1-5, t3-1"],
            2,
        )
        verify(
            T_6_7_2,
            2,
            racks(3),
            racks(3),
            consumer_topics,
            ["t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1", "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0", "t1-4, t1-5"],
            0,
        )
        verify(
            T_6_7_2,
            3,
            racks(2),
            racks(3),
            consumer_topics,
            ["t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0", "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1", "t1-4, t1-5"],
            2,
        )

    def test_rack_aware_uniform_partitions_prefers_co_partitioning(self):
        """testRackAwareAssignmentWithUniformPartitions: co-partitioning wins over rack alignment."""
        topics = {"t1": 5, "t2": 5, "t3": 5}
        consumer_topics = [ALL3] * 3
        plain = ["t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"]
        verify_non_rack_aware(topics, consumer_topics, plain)
        verify(topics, 1, racks(3), racks(3), consumer_topics, plain, 10)
        verify(topics, 2, racks(3), racks(3), consumer_topics, plain, 5)
        verify(topics, 3, racks(2), racks(3), consumer_topics, plain, 3)

    def test_rack_aware_uniform_partitions_non_equal_subscription(self):
        """testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription."""
        topics = {"t1": 5, "t2": 5, "t3": 5}
        consumer_topics = [ALL3, ALL3, ["t1", "t3"]]
        verify_non_rack_aware(
            topics,
            consumer_topics,
            ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"],
        )
        verify(
            topics,
            1,
            racks(3),
            racks(3),
            consumer_topics,
            ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"],
            9,
        )
        verify(
            topics,
            2,
            racks(3),
            racks(3),
            consumer_topics,
            ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"],
            0,
        )
        verify(
            topics,
            3,
            racks(2),
            racks(3),
            consumer_topics,
            ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1", "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"],
            2,
        )

    def test_rack_aware_co_partitioning(self):
        """testRackAwareAssignmentWithCoPartitioning (racks a,b,b,a; two subscription groups, then one)."""
        topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
        consumer_racks = ["a", "b", "b", "a"]
        consumer_topics = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
        plain = ["t1-0, t1-1, t1-2, t2-0, t2-1, t2-2", "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5", "t3-0, t4-0", "t3-1, t4-1"]
        verify(topics, 3, racks(2), consumer_racks, consumer_topics, plain, -1)
        verify(topics, 2, racks(2), consumer_racks, consumer_topics, plain, 0)
        verify(
            topics,
            1,
            racks(2),
            consumer_racks,
            consumer_topics,
            ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5", "t3-1, t4-1", "t3-0, t4-0"],
            0,
        )
        all4 = ["t1", "t2", "t3", "t4"]
        consumer_topics = [all4] * 4
        plain = ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0", "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1", "t1-4, t2-4", "t1-5, t2-5"]
        verify(topics, 3, racks(2), consumer_racks, consumer_topics, plain, -1)
        verify(topics, 2, racks(2), consumer_racks, consumer_topics, plain, 0)
        verify(
            topics,
            1,
            racks(2),
            consumer_racks,
            consumer_topics,
            ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1", "t1-5, t2-5", "t1-4, t2-4"],
            0,
        )
        verify(
            topics,
            1,
            racks(3),
            consumer_racks,
            consumer_topics,
            ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1", "t1-2, t2-2", "t1-5, t2-5"],
            6,
        )

    def test_co_partitioned_same_subscription(self):
        """testCoPartitionedAssignmentWithSameSubscription (t7..t9 subscribed but absent from metadata)."""
        topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
        topic_list = [f"t{i}" for i in range(1, 10)]
        consumer_topics = [topic_list] * 3
        plain = [
            "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
            "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
            "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
        ]
        verify(topics, 3, null_racks(3), racks(3), consumer_topics, plain, -1)
        verify(topics, 3, racks(3), racks(3), consumer_topics, plain, 0, prefer_rack_aware=True)
        verify(
            topics,
            2,
            racks(3),
            racks(3),
            consumer_topics,
            [
                "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
                "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
                "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3",
            ],
            0,
            prefer_rack_aware=True,
        )


def _static_scenario(member_ids: Sequence[str]) -> Scenario:
    # Java: partitionInfos(topic, 5, RF 2, numBrokerRacks 3, offset 0) -> 6 brokers on racks a,b,c,a,b,c
    brokers = {i: "abc"[i % 3] for i in range(6)}
    layout = tuple(tuple((p + j) % 6 for j in range(2)) for p in range(5))
    cluster = ClusterMetadata(brokers, {"topic1": layout, "topic2": layout})
    members = tuple(
        Member(mid, ("topic1", "topic2"), rack, group_instance_id=f"instance{i + 1}")
        for i, (mid, rack) in enumerate(zip(member_ids, "abc", strict=True))
    )
    return Scenario(members, cluster)


class TestRangeAssignorStaticMembers:
    def test_rack_aware_static_assignment_survives_member_id_change(self):
        """testRackAwareStaticMemberRangeAssignmentPersistentAfterMemberIdChanges."""
        before = RangeAssignor().assign(_static_scenario(["consumer1", "consumer2", "consumer3"]))
        by_instance = {
            "instance1": before["consumer1"],
            "instance2": before["consumer2"],
            "instance3": before["consumer3"],
        }
        assert by_instance == {
            "instance1": list(tps("topic1-0", "topic1-2", "topic2-0", "topic2-2")),
            "instance2": list(tps("topic1-1", "topic1-3", "topic2-1", "topic2-3")),
            "instance3": list(tps("topic1-4", "topic2-4")),
        }
        after = RangeAssignor().assign(_static_scenario(["consumer1", "consumer5", "consumer4"]))
        assert {
            "instance1": after["consumer1"],
            "instance2": after["consumer5"],
            "instance3": after["consumer4"],
        } == by_instance

    def test_static_members_sort_before_dynamic(self):
        """A static member ranks by group.instance.id ahead of dynamic members, whatever its member id."""
        cluster = ClusterMetadata({0: None}, {"t": ((0,),) * 4})
        members = (Member("a-dynamic", ("t",)), Member("z-static", ("t",), group_instance_id="i1"))
        assignment = RangeAssignor().assign(Scenario(members, cluster))
        assert assignment["z-static"] == list(tps("t-0", "t-1"))
        assert assignment["a-dynamic"] == list(tps("t-2", "t-3"))


class TestRangeAssignorRackSkips:
    def test_every_partition_on_every_rack_gives_plain_range(self):
        """RF=3 over 3 racks: rack-awareness is skipped and the assignment is plain range."""
        scenario = java_test_scenario({"t": 4}, 3, racks(3), ["c", "b"], [["t"], ["t"]])
        assert assignment_strings(RangeAssignor().assign(scenario), 2) == ["t-0, t-1", "t-2, t-3"]

    def test_rf1_puts_each_partition_on_its_rack(self):
        """RF=1 over 3 racks with one consumer per rack: every partition is read on its own rack."""
        scenario = java_test_scenario({"t": 6}, 1, racks(3), racks(3), [["t"]] * 3)
        assert compute_figures(scenario, RangeAssignor().assign(scenario)).mismatched == 0
