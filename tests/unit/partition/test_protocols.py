"""MutingPartitioner / MuteView protocols and DefaultMutingPartitioner (mutepro.partition.protocols)."""

from __future__ import annotations

import random

import pytest

from mutepro.errors import ConfigError
from mutepro.partition.hashing import key_partitioner
from mutepro.partition.protocols import DefaultMutingPartitioner, MuteView, MutingPartitioner
from mutepro.partition.reroute import reroute_partition
from mutepro.partition.snapshot import TopicSnapshot


class FakeMuteView:
    """A MuteView over a dict of snapshots."""

    def __init__(self, *snaps: TopicSnapshot) -> None:
        self.snaps = {s.topic: s for s in snaps}

    def snapshot(self, topic: str) -> TopicSnapshot | None:
        return self.snaps.get(topic)

    def is_muted(self, topic: str, partition: int) -> bool:
        snap = self.snaps.get(topic)
        return snap is not None and snap.is_muted(partition)


class FakeClock:
    """A frozen clock: stickiness then only ends by bytes or mutes."""

    def __call__(self) -> float:
        return 0.0


class TestProtocols:
    """The built-in classes satisfy the typed plug-in points."""

    def test_default_partitioner_is_a_muting_partitioner(self) -> None:
        """DefaultMutingPartitioner structurally satisfies MutingPartitioner."""
        assert isinstance(DefaultMutingPartitioner(), MutingPartitioner)

    def test_fake_view_is_a_mute_view_and_is_kept(self) -> None:
        """initialize() keeps the producer's mute view (KIP-693's Partitioner.initialize(muteManager))."""
        view = FakeMuteView(TopicSnapshot.build("t", 3, [1], None))
        assert isinstance(view, MuteView)
        partitioner = DefaultMutingPartitioner()
        assert partitioner.mute_view is None
        partitioner.initialize(view)
        assert partitioner.mute_view is view


class TestDefaultMutingPartitioner:
    """Keys go home (librdkafka-identical); everything else goes sticky over writable partitions."""

    def test_keyed_messages_go_home_even_when_muted(self) -> None:
        """A deterministic key returns its librdkafka home, muted or not (the producer applies the policy)."""
        partitioner = DefaultMutingPartitioner("murmur2_random")
        snap = TopicSnapshot.build("t", 17, [9], None)
        assert partitioner.partition("t", b"23456", 5, snap) == 9
        assert partitioner.partition("t", b"hejsan", 6, snap) == 5
        assert partitioner.home_partition(b"23456", 17) == 9

    def test_default_is_consistent_random(self) -> None:
        """Without arguments the partitioner is librdkafka's default, consistent_random."""
        partitioner = DefaultMutingPartitioner()
        assert partitioner.partitioner == "consistent_random"
        assert partitioner.home_partition(b"hejsan", 17) == key_partitioner("consistent_random")(
            b"hejsan", 17
        )
        assert partitioner.home_partition(b"", 17) is None

    def test_unkeyed_messages_stick_to_a_writable_partition(self) -> None:
        """NULL keys (and b"" under consistent_random) share one sticky, writable partition."""
        partitioner = DefaultMutingPartitioner(
            sticky_bytes=10**9, linger_s=10, rng=random.Random(4), clock=FakeClock()
        )
        snap = TopicSnapshot.build("t", 6, [0, 1, 2], None)
        got = {partitioner.partition("t", key, 10, snap) for key in [None, b"", None, b""] * 25}
        assert len(got) == 1 and got <= snap.writable_set

    def test_empty_key_is_hashed_under_murmur2_random(self) -> None:
        """murmur2_random hashes b"" (Java-compatible) instead of going sticky."""
        partitioner = DefaultMutingPartitioner("murmur2_random")
        snap = TopicSnapshot.build("t", 17, (), None)
        assert partitioner.partition("t", b"", 1, snap) == 11

    def test_random_partitioner_spreads_keyed_messages_per_message(self) -> None:
        """Under ``random`` keyed messages get a fresh draw each, while NULL keys stay sticky."""
        partitioner = DefaultMutingPartitioner(
            "random", sticky_bytes=10**9, linger_s=10, rng=random.Random(8), clock=FakeClock()
        )
        snap = TopicSnapshot.build("t", 8, [3], None)
        keyed = {partitioner.partition("t", b"k", 1, snap) for _ in range(400)}
        unkeyed = {partitioner.partition("t", None, 1, snap) for _ in range(400)}
        assert keyed == snap.writable_set
        assert len(unkeyed) == 1 and unkeyed <= snap.writable_set

    def test_nothing_writable_gives_none_for_unkeyed(self) -> None:
        """Unkeyed messages get None when every partition is muted; keyed ones still get their home."""
        partitioner = DefaultMutingPartitioner("murmur2_random")
        snap = TopicSnapshot.build("t", 17, range(17), None)
        assert partitioner.partition("t", None, 1, snap) is None
        assert partitioner.partition("t", b"hejsan", 1, snap) == 5

    def test_no_partitions_gives_none(self) -> None:
        """A topic with no known partitions yields None rather than a hashing error."""
        partitioner = DefaultMutingPartitioner("murmur2")
        assert partitioner.partition("t", b"k", 1, TopicSnapshot.build("t", 0, (), None)) is None
        assert partitioner.home_partition(b"k", 0) is None

    def test_reroute_delegates_to_rendezvous(self) -> None:
        """reroute() is reroute_partition()."""
        partitioner = DefaultMutingPartitioner("murmur2")
        snap = TopicSnapshot.build("t", 17, [9], None)
        assert partitioner.reroute(b"23456", 9, snap) == reroute_partition(b"23456", 9, snap)

    def test_unknown_partitioner_fails_at_construction(self) -> None:
        """A bad ``partitioner`` is a ConfigError when the partitioner is built, not on first produce."""
        with pytest.raises(ConfigError, match="partitioner"):
            DefaultMutingPartitioner("crc32")
