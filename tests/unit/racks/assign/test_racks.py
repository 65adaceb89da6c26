"""KIP-881's switch (mutepro.racks.assign.racks.use_rack_aware_assignment): rack-aware assignment only when some
consumer has a rack that holds replicas and not every partition is on every rack."""

from __future__ import annotations

from mutepro.racks.assign.racks import use_rack_aware_assignment

ABC = frozenset({"a", "b", "c"})


class TestUseRackAwareAssignment:
    def test_no_consumer_rack(self) -> None:
        assert not use_rack_aware_assignment([], ["a", "b"], {0: frozenset({"a"})})

    def test_consumer_and_replica_racks_do_not_overlap(self) -> None:
        """Consumers on d, e, f and replicas on a, b, c: no consumer is local to anything."""
        assert not use_rack_aware_assignment(["d", "e", "f"], ABC, {0: frozenset({"a"}), 1: frozenset({"b"})})

    def test_every_partition_on_every_rack_is_already_optimal(self) -> None:
        """RF 3 over 3 racks: any consumer is local to any partition; Java's test switch keeps the rack path."""
        every = {0: ABC, 1: ABC}
        assert not use_rack_aware_assignment(["a"], ABC, every)
        assert use_rack_aware_assignment(["a"], ABC, every, prefer_rack_aware=True)

    def test_some_partition_missing_a_rack(self) -> None:
        """RF 1 over 3 racks with a consumer on one of them: worth doing."""
        assert use_rack_aware_assignment(["a", "x"], ABC, {0: frozenset({"a"}), 1: frozenset({"b"}), 2: ABC})
