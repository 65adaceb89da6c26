"""Which partitions are led in the producer's rack (mutepro.mute.rack), and the read-only view of it."""

from __future__ import annotations

from mutepro.mute.rack import RackLocator, RackView
from mutepro.mute.records import PartitionRecord, TopicRecord
from mutepro.policy.schema import PartitionerConfig, TopicPolicy
from tests.unit.mute._rules import StubBreaker

RACK_AWARE = TopicPolicy(partitioner=PartitionerConfig(rack_aware=True))


def topic(policy: TopicPolicy = RACK_AWARE) -> TopicRecord:
    """Six partitions led by brokers 1, 2, 3, 1, 2, 3."""
    t = TopicRecord("t", policy)
    for p in range(6):
        part = PartitionRecord(p, StubBreaker(), [])  # type: ignore[arg-type]
        part.leader = p % 3 + 1
        t.partitions[p] = part
    return t


def test_partitions_led_in_the_producers_rack() -> None:
    """Brokers 1 and 3 in rack a: partitions 0, 2, 3, 5 are local; a second look changes nothing."""
    loc = RackLocator("a", rack_aware_all=False)
    assert loc.update({1: "a", 2: "b", 3: "a"})
    t = topic()
    assert loc.locate(t)
    assert t.local == frozenset({0, 2, 3, 5})
    assert not loc.locate(t)
    assert loc.broker_racks() == {1: "a", 2: "b", 3: "a"}


def test_every_partition_remote_until_the_racks_are_known() -> None:
    t = topic()
    assert RackLocator("a", rack_aware_all=False).locate(t)
    assert t.local == frozenset()


def test_off_without_a_rack_or_a_rack_aware_policy() -> None:
    """No client rack: racks are not even taken. A policy not rack-aware: off unless rack_aware_all."""
    off = RackLocator(None, rack_aware_all=True)
    assert not off.update({1: "a"})
    assert off.broker_racks() == {}
    plain = topic(TopicPolicy())
    assert not RackLocator("a", rack_aware_all=False).locate(plain)
    assert plain.local is None
    assert RackLocator("a", rack_aware_all=True).locate(plain)
    assert plain.local == frozenset()


def test_the_same_racks_again_are_no_change() -> None:
    loc = RackLocator("a", rack_aware_all=False)
    assert loc.update({1: "a"})
    assert not loc.update({1: "a"})


class TestRackView:
    def test_reads_what_the_locator_found(self) -> None:
        """The view answers with the locator's racks and each topic's local set, as they change."""
        loc = RackLocator("a", rack_aware_all=False)
        t = topic()
        view = RackView(loc, {"t": t})
        assert (view.client_rack, view.broker_racks(), view.local_partitions("t")) == ("a", {}, None)
        loc.update({1: "a", 2: "b", 3: "b"})
        loc.locate(t)
        assert view.broker_racks() == {1: "a", 2: "b", 3: "b"}
        assert view.local_partitions("t") == frozenset({0, 3})
        assert view.local_partitions("other") is None

    def test_off_reads_none(self) -> None:
        view = RackView(RackLocator(None, rack_aware_all=False), {"t": topic()})
        assert (view.client_rack, view.local_partitions("t")) == (None, None)
