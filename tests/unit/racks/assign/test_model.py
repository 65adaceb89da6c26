"""The assignor input (mutepro.racks.assign.model): partitions printed and parsed like Java's, members normalised
as Java reads a subscription, cluster metadata checked and queried, scenarios refusing duplicate or misplaced
members, and Java's orderings of partitions and members."""

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

CLUSTER = ClusterMetadata({1: "a", 2: "b", 3: None}, {"t": ((1, 2), (3,), (2, 3))},
                          partition_bytes={TopicPartition("t", 0): 500})


class TestTopicPartition:
    def test_printed_and_parsed_like_java(self) -> None:
        tp = TopicPartition.parse(" my-topic-12 ")
        assert tp == TopicPartition("my-topic", 12) and str(tp) == "my-topic-12"
        assert tps("t-0", "t-3") == (TopicPartition("t", 0), TopicPartition("t", 3))

    @pytest.mark.parametrize("text", ["orders", "-3", "orders-x", "orders-"])
    def test_not_topic_dash_number(self, text: str) -> None:
        with pytest.raises(ConfigError, match="not of the form 'topic-N'"):
            TopicPartition.parse(text)

    def test_java_hash_code(self) -> None:
        """Java's TopicPartition.hashCode: 31 * (31 * 1 + partition) + topic.hashCode() = 31 * 31 + 116 ("t")
        = 1077 for t-0, and 31 more for t-1."""
        assert (TopicPartition("t", 0).java_hash(), TopicPartition("t", 1).java_hash()) == (1077, 1108)

    def test_ordered_by_topic_then_number(self) -> None:
        parts = [TopicPartition("b", 0), TopicPartition("a", 10), TopicPartition("a", 2)]
        assert [str(tp) for tp in sorted(parts, key=tp_key)] == ["a-2", "a-10", "b-0"]


class TestMember:
    def test_a_negative_generation_and_an_empty_rack_are_none(self) -> None:
        m = Member("c0", ("t",), rack="", generation=-1)
        assert (m.rack, m.generation) == (None, None)

    def test_member_id_is_required(self) -> None:
        with pytest.raises(ConfigError, match="member_id"):
            Member("", ("t",))

    def test_static_members_first_then_by_id(self) -> None:
        members = [Member("b", ()), Member("z", (), group_instance_id="i2"), Member("a", ()),
                   Member("y", (), group_instance_id="i1")]
        assert [m.member_id for m in sorted(members, key=member_order_key)] == ["y", "z", "a", "b"]


class TestClusterMetadata:
    def test_replicas_racks_leader_and_bytes(self) -> None:
        t0, t1, t9 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 9)
        assert CLUSTER.partitions("t") == [t0, t1, TopicPartition("t", 2)] and CLUSTER.partitions("x") == []
        assert CLUSTER.replicas(t0) == (1, 2) and CLUSTER.replicas(t9) == ()
        assert CLUSTER.replica_racks(t0) == {"a", "b"}
        assert CLUSTER.replica_racks(t1) == frozenset()  # broker 3 has no rack: ignored, as in Java
        assert (CLUSTER.leader_rack(t0), CLUSTER.leader_rack(t1), CLUSTER.leader_rack(t9)) == ("a", None, None)
        assert (CLUSTER.bytes_of(t0), CLUSTER.bytes_of(t1)) == (500, 1)

    def test_a_replica_on_an_unknown_broker_is_named(self) -> None:
        with pytest.raises(ConfigError, match=r"topics.t\[1\] names broker\(s\) \[7\]"):
            ClusterMetadata({1: "a"}, {"t": ((1,), (1, 7))})

    def test_frozen_against_the_callers_dicts(self) -> None:
        racks: dict[int, str | None] = {1: "a"}
        cluster = ClusterMetadata(racks, {"t": ((1,),)})
        racks[2] = "b"
        assert dict(cluster.broker_racks) == {1: "a"}


class TestScenario:
    def test_duplicate_member_ids_are_named(self) -> None:
        with pytest.raises(ConfigError, match=r"member_id \['c0'\] appears more than once"):
            Scenario((Member("c0", ("t",)), Member("c0", ("t",))), CLUSTER)

    def test_the_joining_member_must_be_listed_last(self) -> None:
        members = (Member("c0", ("t",)), Member("c1", ("t",)))
        assert Scenario(members, CLUSTER, joining="c1").member("c1") is members[1]
        with pytest.raises(ConfigError, match="is listed before 'c1'"):
            Scenario(members, CLUSTER, joining="c0")
        with pytest.raises(ConfigError, match="is not a member"):
            Scenario(members, CLUSTER, joining="c9")

    def test_unknown_member_is_a_key_error(self) -> None:
        with pytest.raises(KeyError):
            Scenario((Member("c0", ("t",)),), CLUSTER).member("c9")
