"""Plug-in points for mute-aware partitioners (KIP-693's ``Partitioner.initialize(muteManager)`` idea).

KIP-693 proposed handing the producer's ``ProducerMuteManager`` to the partitioner so that it can steer around
muted partitions itself. Here the producer hands a read-only :class:`MuteView` to any object satisfying
:class:`MutingPartitioner`; :class:`DefaultMutingPartitioner` is the built-in one.

Division of labour with the producer: a partitioner returns the partition it *wants*. For a keyed message that
is the key's home partition even when it is muted -- the producer then applies the topic's keyed policy
(``reroute`` via :func:`~mutepro.partition.reroute.reroute_partition`, ``hold``, ``fail`` or ``ignore``),
since holding or failing a message is the producer's business, not the partitioner's.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from mutepro.partition.hashing import is_random_for, key_partitioner
from mutepro.partition.reroute import reroute_partition
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.partition.sticky import StickyChooser


@runtime_checkable
class MuteView(Protocol):
    """Read-only view of the producer's mute state that partitioners may consult."""

    def snapshot(self, topic: str) -> TopicSnapshot | None:
        """The topic's current snapshot, or ``None`` before its metadata is known."""
        ...

    def is_muted(self, topic: str, partition: int) -> bool:
        """Whether ``partition`` of ``topic`` is muted right now."""
        ...


@runtime_checkable
class MutingPartitioner(Protocol):
    """A partitioner the muting producer calls for every message without an explicit ``partition=``."""

    def initialize(self, mute_view: MuteView) -> None:
        """Called once by the producer before the first :meth:`partition` call."""
        ...

    def partition(self, topic: str, key: bytes | None, value_size: int, snap: TopicSnapshot) -> int | None:
        """The partition for this message, or ``None`` when no writable partition can take it.

        Keyed messages should return their home partition even if it is muted (the keyed policy applies);
        unkeyed ones must return a partition from ``snap.writable``. Called concurrently from producing
        threads.
        """
        ...


@runtime_checkable
class HomePartitioner(MutingPartitioner, Protocol):
    """A :class:`MutingPartitioner` that can name a key's home partition without a snapshot (the built-in one).
    The producer then places healthy keyed messages with one call and applies the keyed policy itself; a
    partitioner without it is asked :meth:`partition` for every message."""

    def home_partition(self, key: bytes | None, partition_count: int) -> int | None:
        """The key's partition when every partition is writable (None: no key, or no fixed home)."""
        ...


class DefaultMutingPartitioner:
    """The built-in partitioner: keys -> librdkafka's ``partitioner`` (home); the rest -> sticky over
    writable.

    Messages whose key librdkafka would place randomly (NULL keys; empty keys under ``consistent_random``) go
    to the topic's sticky, load-weighted writable partition; under ``partitioner=random`` non-NULL keys get a
    fresh weighted draw per message, as librdkafka gives them a fresh random partition.
    """

    __slots__ = ("_chooser", "_key_partition", "_mute_view", "partitioner")

    def __init__(
        self,
        partitioner: str = "consistent_random",
        *,
        sticky_bytes: int = 16384,
        linger_s: float = 0.01,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._key_partition = key_partitioner(partitioner)  # ConfigError for an unknown name, at construction
        self.partitioner = partitioner
        self._chooser = StickyChooser(sticky_bytes=sticky_bytes, linger_s=linger_s, rng=rng, clock=clock)
        self._mute_view: MuteView | None = None

    @property
    def mute_view(self) -> MuteView | None:
        """The view given to :meth:`initialize` (``None`` before)."""
        return self._mute_view

    @property
    def chooser(self) -> StickyChooser:
        """The sticky chooser used for unkeyed messages."""
        return self._chooser

    def initialize(self, mute_view: MuteView) -> None:
        """Keep the producer's mute view (the default partitioner reads everything from the snapshot)."""
        self._mute_view = mute_view

    def home_partition(self, key: bytes | None, partition_count: int) -> int | None:
        """Where plain librdkafka would put ``key``; ``None`` when it would pick a random partition."""
        if partition_count <= 0:
            return None
        return self._key_partition(key, partition_count)

    def partition(self, topic: str, key: bytes | None, value_size: int, snap: TopicSnapshot) -> int | None:
        """Home partition for deterministic keys (muted or not); sticky writable partition otherwise."""
        if snap.partition_count <= 0:
            return None
        home = self._key_partition(key, snap.partition_count)
        if home is not None:
            return home
        if is_random_for(self.partitioner, key):
            return self._chooser.pick(snap)
        return self._chooser.choose(snap, value_size)

    def reroute(self, key: bytes | None, home: int, snap: TopicSnapshot) -> int | None:
        """The ``reroute`` keyed policy's fallback for ``key`` whose ``home`` is muted."""
        return reroute_partition(key, home, snap)
