"""Per-partition accounting of messages handed to librdkafka and not yet reported, at a few integer increments per
message: the producer's exact view of KIP-693's "accumulated batches" and "in-flight requests".

Why counters and checkpoints instead of one record per message: on a producer doing 100,000 msg/s, any Python
object kept per message (an envelope, a dict entry) costs more than librdkafka's own produce() does. Instead:

- ``sent[p]`` and ``reported[p]`` count messages handed to librdkafka and messages with a final delivery report
  (librdkafka reports the messages of one partition in order), so ``sent - reported`` is exact;
- every tick (50 ms) the driver thread appends a checkpoint ``(now, sent[p])`` when ``sent`` moved, and drops the
  checkpoints whose messages are all reported. The oldest undelivered message is number ``reported + 1``; the
  first checkpoint counting past it was taken at most one tick after that message was sent, so its age is known
  to within 50 ms — and so is how many messages are older than a threshold, which is all the detectors need.

Example: ticks at t=10.00 (sent 400), 10.05 (sent 420), 10.10 (sent 440); 405 reported. The oldest undelivered
message is #406, counted first by the 10.05 checkpoint: at now=10.70 it is at least 0.65 s old, and the messages
older than 0.62 s are #406..#420, i.e. 15 of them.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from typing import Any, overload

from mutepro.detect.model import PartitionLoad
from mutepro.producer.accel import fastpath

#: The partition of messages librdkafka partitions itself (topic metadata not known yet).
UNASSIGNED = -1
_COMPACT_AT = 256


class _Checkpoints:
    """``(time, sent count)`` pairs of one partition, oldest first, with O(1) amortised removal from the front."""

    __slots__ = ("counts", "head", "times")

    def __init__(self) -> None:
        self.times: list[float] = []
        self.counts: list[int] = []
        self.head = 0

    def add(self, now: float, sent: int) -> None:
        if self.counts and self.counts[-1] == sent and len(self.counts) > self.head:
            return
        self.times.append(now)
        self.counts.append(sent)

    def drop_reported(self, reported: int) -> None:
        counts = self.counts
        head = self.head
        while head < len(counts) and counts[head] <= reported:
            head += 1
        if head >= _COMPACT_AT:
            del self.times[:head]
            del self.counts[:head]
            head = 0
        self.head = head

    def clear(self) -> None:
        self.times.clear()
        self.counts.clear()
        self.head = 0


class _Ages(Sequence[float]):
    """Ages of a partition's outstanding messages, oldest first, computed from its checkpoints on demand."""

    __slots__ = ("_cps", "_n", "_now", "_reported")

    def __init__(self, cps: _Checkpoints, reported: int, outstanding: int, now: float) -> None:
        self._cps = cps
        self._reported = reported
        self._n = outstanding
        self._now = now

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> float: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[float]: ...

    def __getitem__(self, i: int | slice) -> float | Sequence[float]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        cps = self._cps
        # message number reported+1+i is counted first by the first checkpoint whose count reaches it
        j = bisect.bisect_left(cps.counts, self._reported + 1 + i, lo=cps.head)
        if j >= len(cps.counts):
            return 0.0  # sent after the last checkpoint: younger than one tick
        return self._now - cps.times[j]

    def count_older_than(self, age_s: float) -> int:
        """How many of these messages are strictly older than ``age_s``, with one bisection on the checkpoint
        times instead of one per probed age (the detectors ask every tick for every partition).

        A message is older than ``age_s`` when the checkpoint that first counted it was taken before
        ``now - age_s``; those checkpoints are a prefix, and the last of them counts every such message.
        Worked numbers (the module example): checkpoints (10.00, 400), (10.05, 420), (10.10, 440), 405 reported,
        now 10.70, age 0.62 s -> cutoff 10.08 -> the first two checkpoints -> up to #420 -> 15 messages.
        """
        cps = self._cps
        k = bisect.bisect_left(cps.times, self._now - age_s, lo=cps.head)
        if k <= cps.head:
            return 0
        counted = min(cps.counts[k - 1], self._reported + self._n)
        return max(0, counted - self._reported)


class NativeTopicTally(fastpath.Tally):
    """One topic's counters, indexed by partition, in C arrays (``_fastpath.c`` ``Tally``) that the C produce and
    report code update in place (``tally.sent[p] += 1`` works on the live column views as on lists); the driver
    keeps each partition's checkpoints beside them."""

    __slots__ = ("checkpoints",)

    def __init__(self, count: int, slow_s: float) -> None:
        super().__init__(count, slow_s)
        self.checkpoints: list[_Checkpoints] = [_Checkpoints() for _ in range(self.count)]

    def grow(self, count: int) -> None:
        extra = count - self.count
        if extra <= 0:
            return
        super().grow(count)
        self.checkpoints.extend(_Checkpoints() for _ in range(extra))


class OutstandingTracker:
    """Messages produced to librdkafka without a final delivery report, per (topic, partition); the counters are
    the C extension's (``Tally``, ``Counts``), written by its produce and report code."""

    def __init__(self, buffer_max_messages: int, buffer_max_bytes: int) -> None:
        self.buffer_max_messages = buffer_max_messages
        self.buffer_max_bytes = buffer_max_bytes
        # topic -> NativeTopicTally. An entry, once made, is grown in place and never replaced: the C
        # fast path keeps the last topic's tally by identity instead of looking it up per message.
        self.topics: dict[str, Any] = {}
        self.totals: Any = fastpath.Counts()
        self.busy_now: dict[str, list[int]] = {}  # topic -> the busy partitions at the last checkpoint

    @property
    def sent_total(self) -> int:
        return int(self.totals.sent_total)

    @sent_total.setter
    def sent_total(self, value: int) -> None:
        self.totals.sent_total = value

    @property
    def reported_total(self) -> int:
        return int(self.totals.reported_total)

    @reported_total.setter
    def reported_total(self, value: int) -> None:
        self.totals.reported_total = value

    @property
    def total(self) -> int:
        """Messages handed to librdkafka and not yet reported, over every topic (exact)."""
        return self.sent_total - self.reported_total

    def ensure(self, topic: str, partition_count: int, slow_s: float) -> Any:
        tally = self.topics.get(topic)
        if tally is None:
            tally = self.topics[topic] = NativeTopicTally(partition_count, slow_s)
        else:
            tally.grow(partition_count)
        return tally

    def count(self, topic: str, partition: int) -> int:
        tally = self.topics.get(topic)
        if tally is None or not 0 <= partition < tally.count:
            return 0
        return tally.sent[partition] - tally.reported[partition]

    def counts(self, topic: str) -> dict[int, int]:
        """Outstanding messages per partition of ``topic``."""
        tally = self.topics.get(topic)
        if tally is None:
            return {}
        return {p: tally.sent[p] - tally.reported[p] for p in range(tally.count)}

    def checkpoint(self, now: float) -> None:
        """Record where every busy partition's send count stands now (the driver thread, once per tick); the
        busy partitions (:meth:`busy`) are kept for :meth:`drain` and the mute manager's round."""
        self.busy_now = busy = {}
        for topic, tally in self.topics.items():
            busy[topic] = parts = tally.busy()
            checkpoints, sent, reported = tally.checkpoints, tally.sent, tally.reported
            for p in parts:
                cps = checkpoints[p]
                cps.drop_reported(reported[p])
                if sent[p] > reported[p]:
                    cps.add(now, sent[p])

    def busy(self, topic: str) -> frozenset[int] | None:
        """The partitions of ``topic`` the last :meth:`checkpoint` found busy: messages outstanding, or sent or
        reported since the checkpoint before. ``None`` before the first checkpoint (then every one may be)."""
        parts = self.busy_now.get(topic)
        return None if parts is None else frozenset(parts)

    def drain(self) -> Iterator[tuple[str, int, int, int, int]]:
        """Yield and zero each partition's tally since the last call: (topic, partition, calls, failures, slow).

        After a :meth:`checkpoint` only its busy partitions can have any (a report moves ``reported``)."""
        for topic, tally in self.topics.items():
            ok, slow, failed = tally.ok, tally.slow, tally.failed
            parts = self.busy_now.get(topic)
            for p in range(tally.count) if parts is None else parts:
                if ok[p] or failed[p]:
                    calls, failures, slows = ok[p] + failed[p], failed[p], slow[p]
                    ok[p] = failed[p] = slow[p] = 0
                    yield topic, p, calls, failures, slows

    def load(self, topic: str, partition: int, now: float) -> PartitionLoad:
        """The partition's load: outstanding messages and bytes, the oldest one's age and (lazily) every age."""
        tally = self.topics.get(topic)
        if tally is None or not 0 <= partition < tally.count:
            return PartitionLoad(0, 0, None, self.buffer_max_messages, self.buffer_max_bytes)
        sent = tally.sent[partition]
        reported = tally.reported[partition]
        outstanding = sent - reported
        warm = tally.warm[partition] >= 0
        if outstanding <= 0:
            return PartitionLoad(0, 0, None, self.buffer_max_messages, self.buffer_max_bytes, sent=sent, warm=warm)
        avg = tally.sent_bytes[partition] / sent if sent else 0.0
        ages = _Ages(tally.checkpoints[partition], reported, outstanding, now)
        return PartitionLoad(
            outstanding=outstanding,
            outstanding_bytes=int(outstanding * avg),
            oldest_age_s=ages[0],
            buffer_max_messages=self.buffer_max_messages,
            buffer_max_bytes=self.buffer_max_bytes,
            ages_s=ages,
            sent=sent,
            warm=warm,
        )
