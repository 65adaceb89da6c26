"""KIP-881's switch (mutepro.racks.assign.racks.use_rack_aware_assignment): rack-aware assignment only where some
consumer could be local to some partitions and not to all."""

from __future__ import annotations

from mutepro.racks.assign.racks import use_rack_aware_assignment

ALL = frozenset({"a", "b", "c"})


class TestSwitch:
    def test_on_when_consumers_share_racks_with_partitions_that_do_not_span_them_all(self) -> None:
        assert use_rack_aware_assignment(["a"], ["a", "b", "c"], {0: frozenset({"a"}), 1: frozenset({"b"})})

    def test_off_without_a_consumer_rack(self) -> None:
        assert not use_rack_aware_assignment([], ["a"], {0: frozenset({"a"})})

    def test_off_when_consumer_and_replica_racks_are_disjoint(self) -> None:
        assert not use_rack_aware_assignment(["d", "e"], ["a", "b"], {0: frozenset({"a"})})

    def test_off_when_every_partition_is_on_every_rack_unless_preferred(self) -> None:
        """RF 3 over 3 racks: any consumer is local to any partition; Java's test-only switch keeps it on."""
        racks = {0: ALL, 1: ALL}
        assert not use_rack_aware_assignment(["a"], ALL, racks)
        assert use_rack_aware_assignment(["a"], ALL, racks, prefer_rack_aware=True)
