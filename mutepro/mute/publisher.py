"""The routing snapshots the partitioner reads: one immutable :class:`~mutepro.partition.snapshot.TopicSnapshot`
per topic, swapped whole whenever the writable set or the load weights change, so the producing threads read it
without a lock."""

from __future__ import annotations

from collections.abc import Mapping

from mutepro.mute.records import TopicRecord
from mutepro.mute.transitions import BreakerState
from mutepro.partition.snapshot import TopicSnapshot


class SnapshotPublisher:
    """Builds and publishes each topic's snapshot from its records; :attr:`snapshots` is what the hot path reads."""

    def __init__(self) -> None:
        #: topic -> current immutable snapshot, swapped whole (read lock-free by producing threads)
        self.snapshots: dict[str, TopicSnapshot] = {}
        self._version = 0  # one sequence over every topic's snapshots

    def publish(
        self, t: TopicRecord, queue_sizes: Mapping[int, int] | None = None, *, after_round: bool = False,
        force: bool = False,
    ) -> None:
        """Publish the topic's snapshot if its muted, probing or avoided partitions changed (or for new weights).

        ``after_round``: right after a detection round, whose scan left the partitions not closed (a superset:
        states are re-read) and half-open -- every partition outside them is closed -- so that 1,200 partitions
        are not read twice a tick. Other callers (manual mutes, leader moves) read every partition."""
        muted: list[int] = []
        half_open: list[int] = []
        # t.partitions is in partition order already (grown 0..n-1); the round's set is not
        seen = sorted(t.not_closed) if after_round and t.not_closed is not None else t.partitions
        for p in seen:
            part = t.partitions.get(p)
            if part is None:
                continue
            state = part.breaker.state
            if state is not BreakerState.CLOSED:
                muted.append(p)
                if state is BreakerState.HALF_OPEN and not part.awaiting:
                    half_open.append(p)  # offers probes (not while older messages await answers: PartitionRecord)
        probing = frozenset(half_open)
        old = t.snapshot
        if (
            old is not None
            and queue_sizes is None
            and not force
            and old.partition_count == len(t.partitions)
            and old.muted == frozenset(muted)
            and t.probing == probing
            and old.avoided == t.avoided
        ):
            return
        self._version += 1
        snap = TopicSnapshot.build(
            t.name, len(t.partitions), muted, queue_sizes, adaptive=t.policy.partitioner.adaptive,
            version=self._version, probing=probing, avoided=t.avoided, local=t.local,
        )
        if old is not None and old.partition_count == snap.partition_count and old.writable == snap.writable:
            # A key's fallback depends on the partition count and the writable partitions only
            # (reroute.reroute_partition), so the memo of the snapshot before stays true: the weight refresh
            # (every 0.1 s) would otherwise empty it, and each rerouted key would take the producer's Python path
            # again (a saturated keyed loop over a stalled broker, 1,000 keys: ~3,400 such calls a second)
            snap.keep_reroute_memo(old)
        t.snapshot = snap
        self.snapshots[t.name] = snap  # the producer hot path reads this dict directly
        t.probing = probing
