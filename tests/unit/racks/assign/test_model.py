"""The assignor's input (mutepro.racks.assign.model): partitions printed and parsed like Java's, members normalised
as Java reads them, the cluster's replica racks, and scenarios checked with the field and the fix named."""

from __future__ import annotations

import pytest

from mutepro.errors import ConfigError
from mutepro.racks.assign.model import (
    ClusterMetadata,
    Member,
    Scenario,
    TopicPartition,
    member_order_key,
    tp_key,
    tps,
)

CLUSTER = ClusterMetadata({1: "a", 2: "b", 3: None}, {"t": ((1, 2), (2, 3), (3,))})


class TestTopicPartition:
    def test_printed_and_parsed_like_java_with_dashes_in_the_topic(self) -> None:
        tp = TopicPartition.parse("my-topic-12")
        assert (tp.topic, tp.partition, str(tp)) == ("my-topic", 12, "my-topic-12")
        assert tps("t-0", "t-3") == (TopicPartition("t", 0), TopicPartition("t", 3))

    @pytest.mark.parametrize("text", ["orders", "-3", "orders-x", "orders-"])
    def test_not_topic_dash_number_is_named(self, text: str) -> None:
        with pytest.raises(ConfigError, match=r"is not of the form 'topic-N'"):
            TopicPartition.parse(text)

    def test_sorted_by_topic_then_number(self) -> None:
        assert sorted(tps("b-0", "a-10", "a-2"), key=tp_key) == list(tps("a-2", "a-10", "b-0"))


class TestMember:
    def test_no_generation_and_no_rack_read_as_none(self) -> None:
        m = Member("m1", ("t",), rack="", generation=-1)
        assert (m.rack, m.generation) == (None, None)

    def test_an_empty_member_id_is_refused(self) -> None:
        with pytest.raises(ConfigError, match="member_id must be a non-empty string"):
            Member("", ("t",))

    def test_static_members_first_then_by_id(self) -> None:
        members = [Member("b", ("t",)), Member("z", ("t",), group_instance_id="i1"), Member("a", ("t",))]
        assert [m.member_id for m in sorted(members, key=member_order_key)] == ["z", "a", "b"]


class TestCluster:
    def test_replicas_racks_and_leader_rack(self) -> None:
        tp0, tp2 = TopicPartition("t", 0), TopicPartition("t", 2)
        assert CLUSTER.replicas(tp0) == (1, 2) and CLUSTER.replica_racks(tp0) == frozenset({"a", "b"})
        assert CLUSTER.replica_racks(tp2) == frozenset() and CLUSTER.leader_rack(tp2) is None
        assert CLUSTER.replicas(TopicPartition("t", 9)) == () and CLUSTER.leader_rack(TopicPartition("u", 0)) is None
        assert CLUSTER.partitions("t") == list(tps("t-0", "t-1", "t-2")) and CLUSTER.partitions("u") == []
        assert CLUSTER.bytes_of(tp0) == 1

    def test_an_unknown_broker_is_named_with_its_partition(self) -> None:
        with pytest.raises(ConfigError, match=r"topics\.t\[0\] names broker\(s\) \[9\]"):
            ClusterMetadata({1: "a"}, {"t": ((1, 9),)})


class TestScenario:
    def test_duplicate_member_ids_are_refused(self) -> None:
        with pytest.raises(ConfigError, match=r"member_id \['m'\] appears more than once"):
            Scenario((Member("m", ("t",)), Member("m", ("t",))), CLUSTER)

    def test_the_joining_member_must_be_listed_last(self) -> None:
        members = (Member("a", ("t",)), Member("b", ("t",)))
        assert Scenario(members, CLUSTER, joining="b").member("a").member_id == "a"
        with pytest.raises(ConfigError, match="joining: member 'a' is listed before 'b'"):
            Scenario(members, CLUSTER, joining="a")
        with pytest.raises(ConfigError, match="joining: member 'x' is not a member"):
            Scenario(members, CLUSTER, joining="x")
