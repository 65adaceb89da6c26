"""Rack-aware partitioning in the snapshot and the sticky draw (KIP-1123): which partitions unkeyed messages may
take, and that nothing else about the snapshot changes."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from mutepro.errors import ConfigError
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.partition.sticky import StickyChooser

LOCAL = (0, 3, 6, 9)  # 12 partitions, leaders on 3 racks in turn: the producer's rack leads every third


class TestCandidates:
    def test_off_draws_from_every_writable_partition(self) -> None:
        snap = TopicSnapshot.build("t", 12, [5], None)
        assert snap.local is None
        assert snap.candidates == snap.writable == tuple(p for p in range(12) if p != 5)

    def test_on_draws_only_from_the_writable_local_partitions(self) -> None:
        snap = TopicSnapshot.build("t", 12, [3], None, local=LOCAL)
        assert snap.candidates == (0, 6, 9)
        assert snap.writable == tuple(p for p in range(12) if p != 3)  # keyed fallbacks see every writable one
        assert snap.local == frozenset(LOCAL)

    def test_every_local_partition_muted_falls_back_to_every_writable_one(self) -> None:
        snap = TopicSnapshot.build("t", 12, LOCAL, None, local=LOCAL)
        assert snap.candidates == snap.writable == (1, 2, 4, 5, 7, 8, 10, 11)

    def test_avoided_local_partitions_are_not_candidates(self) -> None:
        snap = TopicSnapshot.build("t", 12, [], None, local=LOCAL, avoided=[0, 3])
        assert snap.candidates == (6, 9)

    def test_no_local_leader_is_the_plain_choice(self) -> None:
        snap = TopicSnapshot.build("t", 12, [], None, local=())
        assert snap.candidates == snap.writable == tuple(range(12))

    def test_weights_are_among_the_candidates(self) -> None:
        """KIP-794 inside the local set: queues {0: 0, 3: 3, 6: 1, 9: 0} -> weights 4, 1, 3, 4."""
        snap = TopicSnapshot.build("t", 12, [], {0: 0, 3: 3, 6: 1, 9: 0, 1: 100}, local=LOCAL)
        assert snap.cumulative_weights == (4.0, 5.0, 8.0, 12.0)
        assert snap.probabilities() == {0: 4 / 12, 3: 1 / 12, 6: 3 / 12, 9: 4 / 12}

    def test_out_of_range_local_ids_are_dropped(self) -> None:
        snap = TopicSnapshot.build("t", 4, [], None, local=[1, 7, -1])
        assert snap.local == frozenset({1})
        assert snap.candidates == (1,)

    def test_weights_must_match_the_candidates(self) -> None:
        with pytest.raises(ConfigError, match="cumulative_weights: 1 entries for 2 candidate partitions"):
            TopicSnapshot("t", 3, (0, 1, 2), frozenset(), (1.0,), candidates=(0, 1), local=frozenset({0, 1}))


class TestStickyDraw:
    def test_draws_land_on_candidates_only(self) -> None:
        chooser = StickyChooser(linger_s=0, rng=random.Random(7))
        snap = TopicSnapshot.build("t", 12, [6], None, local=LOCAL)
        drawn = Counter(chooser.choose(snap, 100) for _ in range(3000))
        assert set(drawn) == {0, 3, 9}
        assert min(drawn.values()) > 800  # uniform among the three: each ~1,000

    def test_fallback_draws_spread_over_the_other_racks(self) -> None:
        chooser = StickyChooser(linger_s=0, rng=random.Random(7))
        snap = TopicSnapshot.build("t", 12, LOCAL, None, local=LOCAL)
        drawn = Counter(chooser.choose(snap, 100) for _ in range(3000))
        assert set(drawn) == {1, 2, 4, 5, 7, 8, 10, 11}

    def test_a_sticky_partition_that_stops_being_writable_is_left(self) -> None:
        chooser = StickyChooser(linger_s=60, rng=random.Random(1))
        first = chooser.choose(TopicSnapshot.build("t", 12, [], None, local=LOCAL), 10)
        assert first in LOCAL
        muted = TopicSnapshot.build("t", 12, [first], None, local=LOCAL)
        assert chooser.choose(muted, 10) in set(LOCAL) - {first}
