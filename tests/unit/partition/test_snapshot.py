"""TopicSnapshot: writable set and KIP-794 weights (mutepro.partition.snapshot)."""

from __future__ import annotations

import dataclasses

import pytest

from mutepro.errors import ConfigError
from mutepro.partition.snapshot import TopicSnapshot


class TestTopicSnapshotBuild:
    """``TopicSnapshot.build`` derives writable partitions and cumulative weights."""

    def test_kip794_worked_example(self) -> None:
        """Queues 0, 3, 1 -> weights 4, 1, 3 -> cumulative (4, 5, 8) -> 50 %, 12.5 %, 37.5 %."""
        snap = TopicSnapshot.build("t", 3, (), {0: 0, 1: 3, 2: 1})
        assert snap.cumulative_weights == (4.0, 5.0, 8.0)
        assert snap.probabilities() == {0: 0.5, 1: 0.125, 2: 0.375}

    def test_muted_partitions_are_not_writable_and_their_queues_ignored(self) -> None:
        """A muted partition leaves ``writable``; its (huge) queue does not flatten the others' weights."""
        snap = TopicSnapshot.build("t", 4, [1], {0: 2, 1: 1000, 2: 0, 3: 2})
        assert snap.writable == (0, 2, 3)
        assert snap.muted == frozenset({1})
        # max over writable = 2 -> weights 1, 3, 1
        assert snap.cumulative_weights == (1.0, 4.0, 5.0)

    def test_missing_and_negative_sizes_count_as_empty(self) -> None:
        """Partitions without a size and negative sizes weigh like an empty queue."""
        snap = TopicSnapshot.build("t", 3, (), {1: 4, 2: -5})
        assert snap.cumulative_weights == (5.0, 6.0, 11.0)

    def test_uniform_without_sizes_or_when_not_adaptive(self) -> None:
        """No sizes, empty sizes or ``adaptive=False`` give weight 1 each."""
        sizes = {0: 9, 1: 0, 2: 4}
        for snap in (
            TopicSnapshot.build("t", 3, (), None),
            TopicSnapshot.build("t", 3, (), {}),
            TopicSnapshot.build("t", 3, (), sizes, adaptive=False),
        ):
            assert snap.cumulative_weights == (1.0, 2.0, 3.0)

    def test_equal_queues_are_uniform(self) -> None:
        """Equal queue sizes give equal weights (Java drops the stats then; same distribution)."""
        snap = TopicSnapshot.build("t", 4, (), {p: 7 for p in range(4)})
        assert set(snap.probabilities().values()) == {0.25}

    def test_everything_muted_leaves_nothing_writable(self) -> None:
        """With every partition muted, ``writable`` and the weights are empty."""
        snap = TopicSnapshot.build("t", 3, [0, 1, 2], {0: 1})
        assert snap.writable == ()
        assert snap.cumulative_weights == ()
        assert snap.probabilities() == {}

    def test_avoided_partitions_are_not_writable_but_not_muted(self) -> None:
        """Avoided partitions leave ``writable`` and stay out of ``muted`` (keyed messages still go there)."""
        snap = TopicSnapshot.build("t", 4, [0], None, avoided=[0, 2])
        assert snap.writable == (1, 3) and snap.muted == frozenset({0}) and snap.avoided == frozenset({2})
        assert not snap.is_muted(2) and not snap.is_writable(2)

    def test_avoiding_everything_avoids_nothing(self) -> None:
        """When avoiding would leave no writable partition, nothing is avoided."""
        snap = TopicSnapshot.build("t", 3, [0], None, avoided=[1, 2])
        assert snap.writable == (1, 2) and snap.avoided == frozenset()

    def test_out_of_range_muted_ids_are_dropped(self) -> None:
        """Muted ids outside the topic's partitions are ignored."""
        snap = TopicSnapshot.build("t", 3, [-1, 2, 5], None)
        assert snap.muted == frozenset({2})
        assert snap.writable == (0, 1)

    def test_negative_partition_count_is_a_config_error(self) -> None:
        """A negative partition count names the field."""
        with pytest.raises(ConfigError, match="partition_count"):
            TopicSnapshot.build("t", -1, (), None)

    def test_version_is_kept(self) -> None:
        """The version given to build is on the snapshot."""
        assert TopicSnapshot.build("t", 2, (), None, version=42).version == 42


class TestTopicSnapshot:
    """The snapshot itself: immutable, with O(1) membership helpers."""

    def test_is_muted_and_is_writable(self) -> None:
        """``is_muted`` and ``is_writable`` answer from the precomputed sets."""
        snap = TopicSnapshot.build("t", 3, [1], None)
        assert snap.is_muted(1) and not snap.is_muted(0)
        assert snap.is_writable(0) and not snap.is_writable(1) and not snap.is_writable(3)
        assert snap.writable_set == frozenset({0, 2})

    def test_is_frozen(self) -> None:
        """Fields cannot be reassigned: snapshots are swapped whole, never edited."""
        snap = TopicSnapshot.build("t", 3, (), None)
        with pytest.raises(dataclasses.FrozenInstanceError):
            snap.writable = (0,)  # type: ignore[misc]

    def test_direct_construction_checks_alignment(self) -> None:
        """Weights not aligned with ``writable`` are a ConfigError naming the field."""
        with pytest.raises(ConfigError, match="cumulative_weights"):
            TopicSnapshot("t", 3, (0, 1), frozenset({2}), (1.0,))

    def test_direct_construction_fills_writable_set(self) -> None:
        """A hand-built snapshot gets its membership set too, and equals an identical one."""
        snap = TopicSnapshot("t", 3, (0, 2), frozenset({1}), (1.0, 2.0))
        assert snap.writable_set == frozenset({0, 2})
        assert snap == TopicSnapshot.build("t", 3, [1], None)

    def test_a_snapshot_with_the_same_writable_partitions_shares_the_reroute_memo(self) -> None:
        """New weights, same writable partitions: the memo carries over (a fallback depends on nothing else)."""
        before = TopicSnapshot.build("t", 4, [1], None)
        before.reroute_memo[b"k"] = 3
        after = TopicSnapshot.build("t", 4, [1], {0: 9, 2: 0, 3: 0})
        assert after.reroute_memo == {}
        after.keep_reroute_memo(before)
        assert after.reroute_memo is before.reroute_memo and after.reroute_memo == {b"k": 3}

    def test_a_snapshot_with_other_writable_partitions_refuses_the_memo(self) -> None:
        """Another partition muted (or the topic grown): the memo would name stale fallbacks, so it is refused."""
        before = TopicSnapshot.build("t", 4, [1], None)
        for after in (TopicSnapshot.build("t", 4, [1, 2], None), TopicSnapshot.build("t", 5, [1], None)):
            with pytest.raises(ConfigError, match="reroute memo"):
                after.keep_reroute_memo(before)
            assert after.reroute_memo == {}
