"""KIP-848 server-side assignor ports: vectors printed by Kafka 4.3.1's UniformAssignor/RangeAssignor (via
KraftHarness), plus the properties the README quotes (the full differential test is in
tests/integration/test_kraft_vs_java.py)."""

from __future__ import annotations

import pytest

from mutepro.errors import ConfigError
from mutepro.racks.assign.server import GroupMember, GroupState, GroupTopic, JavaUuid, server_assign

TOPICS = {
    "orders": GroupTopic("orders", JavaUuid.parse("AAAAAAAAAAEAAAAAAAAAAg"), 7),
    "clicks": GroupTopic("clicks", JavaUuid(-5, 123456789012345), 3),
}
BOTH = ("orders", "clicks")


def _group(*members: GroupMember) -> GroupState:
    return GroupState(members, TOPICS)


class TestJavaUuid:
    def test_hash_and_text(self) -> None:
        """Uuid.hashCode and toString as Java prints them."""
        assert JavaUuid.parse("AAAAAAAAAAEAAAAAAAAAAg").java_hash() == 3
        assert JavaUuid(-5, 123456789012345).java_hash() == -2045923531
        assert str(JavaUuid(-5, 123456789012345)) == "__________sAAHBIhg3feQ"

    def test_bad_text(self) -> None:
        """A topic id that is not 16 bytes of base64 is refused by name."""
        with pytest.raises(ConfigError, match="topic id"):
            JavaUuid.parse("not-an-id")


class TestUniform:
    def test_homogeneous_fills_topic_by_topic(self) -> None:
        """3 members, 10 partitions: Java gives m-b all of clicks plus orders-6 (no per-topic spread)."""
        group = _group(GroupMember("m-b", BOTH, rack="a"), GroupMember("m-a", BOTH, rack="b"),
                       GroupMember("m-c", BOTH, "i-0", "c"))  # fmt: skip
        assert server_assign(group, "uniform") == {
            "m-b": {"orders": {6}, "clicks": {0, 1, 2}},
            "m-a": {"orders": {0, 1, 2}},
            "m-c": {"orders": {3, 4, 5}},
        }

    def test_homogeneous_is_sticky(self) -> None:
        """m-b owned everything: it keeps 5 (its quota, in HashSet order) and m-a gets the rest."""
        owned = (("orders", (0, 1, 2, 3, 4, 5, 6)), ("clicks", (0, 1, 2)))
        group = _group(GroupMember("m-b", BOTH, rack="a", assignment=owned), GroupMember("m-a", BOTH, rack="b"))
        assert server_assign(group, "uniform") == {
            "m-b": {"orders": {0, 1, 2, 3, 4}},
            "m-a": {"orders": {5, 6}, "clicks": {0, 1, 2}},
        }

    def test_heterogeneous(self) -> None:
        """Different subscriptions: orders split 3/4 between its two subscribers, clicks kept by m-c."""
        group = _group(GroupMember("m-b", ("orders",)), GroupMember("m-a", BOTH),
                       GroupMember("m-c", ("clicks",), assignment=(("clicks", (0, 1, 2)),)))  # fmt: skip
        assert server_assign(group, "uniform") == {
            "m-b": {"orders": {1, 3, 5}},
            "m-a": {"orders": {0, 2, 4, 6}},
            "m-c": {"clicks": {0, 1, 2}},
        }

    def test_racks_are_ignored(self) -> None:
        """The same group with other racks gets the same assignment: 4.3.1's assignors read no rack."""
        a = _group(GroupMember("m-b", BOTH, rack="a"), GroupMember("m-a", BOTH, rack="b"))
        b = _group(GroupMember("m-b", BOTH, rack="z"), GroupMember("m-a", BOTH, rack=None))
        assert server_assign(a, "uniform") == server_assign(b, "uniform")

    def test_partition_owned_twice_is_refused(self) -> None:
        """A current assignment giving one partition to two members is a named error."""
        group = _group(GroupMember("m-b", BOTH, assignment=(("orders", (0,)),)),
                       GroupMember("m-a", BOTH, assignment=(("orders", (0,)),)))  # fmt: skip
        with pytest.raises(ConfigError, match="owned by both"):
            server_assign(group, "uniform")


class TestRange:
    def test_static_members_first(self) -> None:
        """m-c has a group.instance.id so it sorts first and takes the first range of each topic."""
        group = _group(GroupMember("m-b", BOTH), GroupMember("m-a", BOTH), GroupMember("m-c", BOTH, "i-0"))
        assert server_assign(group, "range") == {
            "m-b": {"orders": {5, 6}, "clicks": {2}},
            "m-a": {"orders": {3, 4}, "clicks": {1}},
            "m-c": {"orders": {0, 1, 2}, "clicks": {0}},
        }

    def test_unknown_assignor(self) -> None:
        """Only uniform and range exist server-side."""
        with pytest.raises(ConfigError, match="uniform, range"):
            server_assign(_group(GroupMember("m", BOTH)), "cooperative-sticky")


class TestReadmeFigures:
    """The README's table: 3 consumers on rack-a/b/c, 12 partitions of 1 MB/s striped over one broker per rack."""

    @staticmethod
    def _figures(rf: int, protocol: str, assignor: str) -> tuple[int, int, int]:
        from mutepro.racks.assign.planner import plan, scenario_from_dict

        scenario = scenario_from_dict({
            "brokers": {1: "rack-a", 2: "rack-b", 3: "rack-c"},
            "topics": {"orders": {"partitions": 12, "replication_factor": rf, "bytes_per_partition": 1_000_000}},
            "members": [{"id": "c0", "rack": "rack-a"}, {"id": "c1", "rack": "rack-b"}, {"id": "c2", "rack": "rack-c"}],
        })  # fmt: skip
        f = plan(scenario, assignor, protocol).target_figures
        return f.mismatched, f.cross_rack_bytes, f.leader_cross_rack

    @pytest.mark.parametrize(
        ("rf", "protocol", "assignor", "expected"),
        [
            (1, "classic", "range", (0, 0, 0)), (1, "classic", "cooperative-sticky", (0, 0, 0)),
            (1, "consumer", "range", (6, 6_000_000, 6)), (1, "consumer", "uniform", (6, 6_000_000, 6)),
            (2, "classic", "range", (1, 1_000_000, 5)), (2, "classic", "cooperative-sticky", (0, 0, 0)),
            (2, "consumer", "range", (3, 3_000_000, 6)), (2, "consumer", "uniform", (3, 3_000_000, 6)),
            (3, "classic", "range", (0, 0, 6)), (3, "classic", "cooperative-sticky", (0, 0, 0)),
            (3, "consumer", "range", (0, 0, 6)), (3, "consumer", "uniform", (0, 0, 6)),
        ],
    )  # fmt: skip
    def test_table(self, rf: int, protocol: str, assignor: str, expected: tuple[int, int, int]) -> None:
        """Cross-rack partitions, bytes and leaders-on-another-rack as the README's table states them."""
        assert self._figures(rf, protocol, assignor) == expected


class TestSubscriptionOrder:
    """Members in the group have their topic names sorted (rebuilt from records); only a joiner keeps its order.

    ``payments.v1`` and ``BB`` share bucket 0 of a 16-bucket HashSet, so the name inserted first is walked first.
    Vectors printed by Kafka 4.3.1 through KraftHarness (record helper + ConsumerGroupMember.Builder.updateWith).
    """

    TOPICS = {
        "payments.v1": GroupTopic("payments.v1", JavaUuid.parse("9x_j_dBjjCYzvO4SWaQ2eQ"), 1),
        "BB": GroupTopic("BB", JavaUuid.parse("YM5kJtF5INTjHA5pJNXxwQ"), 1),
    }
    FIRST = "gBy5eZkHnburVOXBKwaQkg"
    SECOND = "1yKDgIdrVTy_xqq_WZTEuQ"

    def test_sorted_for_members_in_the_group(self) -> None:
        """The brief's case: in join order FIRST [payments.v1, BB], SECOND [BB, payments.v1]; Java gives FIRST BB-0."""
        members = (GroupMember(self.FIRST, ("payments.v1", "BB")), GroupMember(self.SECOND, ("BB", "payments.v1")))
        expected = {self.FIRST: {"BB": {0}}, self.SECOND: {"payments.v1": {0}}}
        assert server_assign(GroupState(members, self.TOPICS), "uniform") == expected
        assert server_assign(GroupState(members, self.TOPICS, joined_last=True), "uniform") == expected

    def test_the_joiner_keeps_the_order_it_sent(self) -> None:
        """FIRST joins last sending [payments.v1, BB]: it takes payments.v1-0; once in the group, BB-0."""
        members = (GroupMember(self.SECOND, ("BB", "payments.v1")), GroupMember(self.FIRST, ("payments.v1", "BB")))
        joining = server_assign(GroupState(members, self.TOPICS, joined_last=True), "uniform")
        assert joining == {self.SECOND: {"BB": {0}}, self.FIRST: {"payments.v1": {0}}}
        in_group = server_assign(GroupState(members, self.TOPICS), "uniform")
        assert in_group == {self.SECOND: {"payments.v1": {0}}, self.FIRST: {"BB": {0}}}

    def test_coordinator_subscription(self) -> None:
        """String.compareTo order in the group ('B' < 'p'), as sent for the joiner."""
        from mutepro.racks.assign.server import coordinator_subscription

        member = GroupMember(self.FIRST, ("payments.v1", "BB"))
        assert coordinator_subscription(member, joining=False) == ["BB", "payments.v1"]
        assert coordinator_subscription(member, joining=True) == ["payments.v1", "BB"]
