"""kafka-reassign-partitions --generate as Kafka 4.3.1 does it (striped placer, one generator for all topics)."""

from __future__ import annotations

import pytest

from mutepro.racks.audit import ClusterSnapshot, PartitionState
from mutepro.racks.generate import generate_assignment, generate_plan, tool_brokers
from mutepro.racks.placement import PlacementError, check_placement
from mutepro.racks.reassign import plan_reassignment
from mutepro.racks.striped import UsableBroker, striped_placement

BROKERS = {1: "rack-a", 2: "rack-b", 3: "rack-c", 4: "rack-a", 5: "rack-b", 6: "rack-c"}


def _snapshot(layout: dict[str, list[tuple[int, ...]]]) -> ClusterSnapshot:
    parts = tuple(
        PartitionState(t, p, reps, reps[0], reps) for t, reps_list in layout.items() for p, reps in enumerate(reps_list)
    )
    return ClusterSnapshot(BROKERS, parts)


class TestGenerate:
    def test_single_topic_is_the_seeded_striped_placement(self) -> None:
        """One topic: the proposal is exactly the striped placer's answer for the seed."""
        current = {"t": {p: (1, 2, 3) for p in range(5)}}
        proposed = generate_assignment(current, tool_brokers(BROKERS), seed=9)
        expected = striped_placement(BROKERS, 5, 3, seed=9)
        assert proposed == {"t": {p: tuple(r) for p, r in expected.items()}}

    def test_topics_share_one_generator(self) -> None:
        """The second topic (in HashMap order) draws after the first, so it differs from a fresh placement."""
        current = {"a": {p: (1, 2) for p in range(4)}, "b": {p: (1, 2) for p in range(4)}}
        proposed = generate_assignment(current, tool_brokers(BROKERS), seed=9)
        fresh = {p: tuple(r) for p, r in striped_placement(BROKERS, 4, 2, seed=9).items()}
        assert [t for t in proposed] == ["a", "b"] and proposed["a"] == fresh and proposed["b"] != fresh

    def test_generate_moves_more_than_fewest_moves(self) -> None:
        """A topic already on every rack: the minimal plan moves nothing, --generate re-places it anyway."""
        snapshot = _snapshot({"t": [(1, 2, 3), (2, 3, 4), (3, 4, 5), (4, 5, 6), (5, 6, 1), (6, 1, 2)]})
        generated = generate_plan(snapshot, seed=3)
        assert plan_reassignment(snapshot).empty
        assert generated.replica_moves > 0
        assert check_placement(dict(enumerate(generated.proposed().values())), BROKERS).rack_aware

    def test_partial_racks_refused_like_the_tool(self) -> None:
        """Some brokers without rack: refused unless rack awareness is off."""
        with pytest.raises(PlacementError, match="Not all brokers have rack information"):
            tool_brokers({1: "a", 2: None})
        assert tool_brokers({1: "a", 2: None}, rack_aware=False) == [UsableBroker(1), UsableBroker(2)]
