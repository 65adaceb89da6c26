"""The immutable per-topic view the partition logic reads on the hot path.

The mute manager builds a new :class:`TopicSnapshot` whenever a partition is muted or unmuted (or load stats
are refreshed) and swaps the reference whole; producing threads read whichever snapshot they picked up without
any lock. Everything a produce call needs is precomputed here: the writable partitions, a set for O(1)
membership, and the KIP-794 cumulative weight table the sticky chooser bisects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from mutepro.errors import ConfigError


@dataclass(frozen=True, slots=True)
class TopicSnapshot:
    """Which partitions of ``topic`` may take messages right now, and how they should be weighted."""

    topic: str
    partition_count: int
    writable: tuple[int, ...]
    """Partitions unkeyed messages may go to, sorted: neither muted nor avoided; may be empty (all muted)."""
    muted: frozenset[int]
    """Partitions whose breaker is open; keyed messages hashed to one of them follow the keyed policy."""
    cumulative_weights: tuple[float, ...]
    """Aligned with ``candidates``: KIP-794 cumulative frequency table (last entry = total weight)."""
    version: int = 0
    probing: frozenset[int] = frozenset()
    """Muted partitions that are half-open: the next messages may be probes (the producer's Python path)."""
    avoided: frozenset[int] = frozenset()
    """Closed partitions unkeyed messages avoid for now (their leader stands out); keyed ones still go there."""
    candidates: tuple[int, ...] = ()
    """The writable partitions unkeyed messages are drawn from: ``writable`` itself, or under rack-aware
    partitioning (KIP-1123) the writable partitions led in the producer's rack when there is at least one."""
    local: frozenset[int] | None = None
    """Partitions led in the producer's rack, writable or not; ``None`` when rack-aware partitioning is off."""
    writable_set: frozenset[int] = field(init=False, repr=False, compare=False)
    """``writable`` as a set, for O(1) "is my sticky partition still writable?" checks."""
    reroute_memo: dict[Any, int] = field(init=False, repr=False, compare=False)
    """Key -> fallback partition of keys rerouted away from a muted home under *this* snapshot, filled by the
    producer's Python path and read by the C fast path. The only mutable part, and safe: a fallback is a pure
    function of the key, the partition count and the writable partitions
    (:func:`~mutepro.partition.reroute.reroute_partition`); a new snapshot starts with an empty memo unless those
    are unchanged (a weight refresh), when it shares the one before (:meth:`keep_reroute_memo`)."""

    def __post_init__(self) -> None:
        if not self.candidates and self.local is None:
            object.__setattr__(self, "candidates", self.writable)
        if len(self.cumulative_weights) != len(self.candidates):
            raise ConfigError(
                f"cumulative_weights: {len(self.cumulative_weights)} entries for {len(self.candidates)} "
                f"candidate partitions of topic {self.topic!r}; build snapshots with TopicSnapshot.build()"
            )
        object.__setattr__(self, "writable_set", frozenset(self.writable))
        object.__setattr__(self, "reroute_memo", {})

    def keep_reroute_memo(self, before: TopicSnapshot) -> None:
        """Share ``before``'s reroute memo: only for a snapshot with the same partition count and writable
        partitions, under which every key's fallback is the same (the memo is a cache of a pure function)."""
        if (before.partition_count, before.writable) != (self.partition_count, self.writable):
            raise ConfigError(
                f"topic {self.topic!r}: a reroute memo is only valid under the same partition count and writable "
                "partitions; build a snapshot without keep_reroute_memo"
            )
        object.__setattr__(self, "reroute_memo", before.reroute_memo)

    def is_muted(self, partition: int) -> bool:
        """Whether ``partition``'s breaker is open."""
        return partition in self.muted

    def is_writable(self, partition: int) -> bool:
        """Whether unkeyed messages may go to ``partition``."""
        return partition in self.writable_set

    def probabilities(self) -> dict[int, float]:
        """The chance each candidate partition is picked at a sticky switch (for metrics, logs and tests)."""
        total = self.cumulative_weights[-1] if self.cumulative_weights else 0.0
        out: dict[int, float] = {}
        previous = 0.0
        for partition, cumulative in zip(self.candidates, self.cumulative_weights, strict=True):
            out[partition] = (cumulative - previous) / total
            previous = cumulative
        return out

    @staticmethod
    def build(
        topic: str,
        partition_count: int,
        muted: Iterable[int],
        queue_sizes: Mapping[int, int] | None,
        *,
        adaptive: bool = True,
        version: int = 0,
        probing: Iterable[int] = (),
        avoided: Iterable[int] = (),
        local: Iterable[int] | None = None,
    ) -> TopicSnapshot:
        """A snapshot in which every partition of ``range(partition_count)`` not in ``muted`` is writable.

        Weights follow Kafka's ``BuiltInPartitioner.updatePartitionLoadStats`` (KIP-794): over the writable
        partitions, ``weight_p = max_queue + 1 - queue_p``, so an empty queue gets the most traffic and the
        fullest still gets a trickle (weight 1) instead of none. Worked numbers: queues {0: 0, 1: 3, 2: 1} ->
        max 3 -> weights 4, 1, 3 -> cumulative (4, 5, 8) -> partition 0 gets 4/8 = 50 % of the sticky
        switches, partition 1 12.5 %, partition 2 37.5 % (uniform would be 33 % each). A partition missing
        from ``queue_sizes`` counts as an empty queue; negative sizes count as 0. Muted partitions' queues are
        ignored (they take no unkeyed traffic, so their backlog must not flatten everyone else's weights).
        With ``adaptive=False`` or no sizes every weight is 1: cumulative (1, 2, 3, ...), i.e. uniform.

        Muted ids outside ``range(partition_count)`` are dropped (they cannot receive messages anyway).
        ``avoided`` partitions (closed, but their leader stands out: see ``mute.suspicion``) are left out of
        ``writable`` too, unless that would leave nothing writable.

        ``local`` (rack-aware partitioning, KIP-1123; ``None``: off): the partitions whose leader is in the
        producer's rack. Unkeyed messages are then drawn only from the writable local ones, weighted among
        themselves; when none is writable (no local leader, or all of them muted or avoided) from every writable
        partition, so a rack without a healthy leader never stops unkeyed traffic. Keyed messages and their
        fallbacks ignore it: ``writable`` stays the same. Worked numbers: 12 partitions, leaders in 3 racks, 4 led
        in the producer's rack -> candidates are those 4; mute 2 of them -> 2; mute all 4 -> the 8 others.
        """
        if partition_count < 0:
            raise ConfigError(
                f"partition_count: must be >= 0 for topic {topic!r}, got {partition_count}; pass the topic's "
                "partition count from metadata"
            )
        muted_set = frozenset(p for p in muted if 0 <= p < partition_count)
        avoided_set = frozenset(p for p in avoided if 0 <= p < partition_count and p not in muted_set)
        writable = tuple(p for p in range(partition_count) if p not in muted_set and p not in avoided_set)
        if not writable and avoided_set:
            avoided_set = frozenset()  # never steer everything away
            writable = tuple(p for p in range(partition_count) if p not in muted_set)
        local_set = None if local is None else frozenset(p for p in local if 0 <= p < partition_count)
        candidates = writable
        if local_set is not None:
            candidates = tuple(p for p in writable if p in local_set) or writable
        if adaptive and queue_sizes and candidates:
            sizes = [max(0, queue_sizes.get(p, 0)) for p in candidates]
            max_plus_one = max(sizes) + 1
            weights = [float(max_plus_one - size) for size in sizes]
        else:
            weights = [1.0] * len(candidates)
        return TopicSnapshot(
            topic=topic,
            partition_count=partition_count,
            writable=writable,
            muted=muted_set,
            cumulative_weights=tuple(accumulate(weights)),
            version=version,
            probing=frozenset(p for p in probing if p in muted_set),
            avoided=avoided_set,
            candidates=candidates,
            local=local_set,
        )
