"""Per-partition accounting of messages handed to librdkafka and not yet reported: the producer's own view of
KIP-693's "accumulated batches" and "in-flight requests", kept exactly (not sampled from statistics).

Each partition keeps an ``OrderedDict`` seq -> (send time, size) in send order: adding, removing any entry and
reading the oldest are O(1) (a plain dict degrades when entries keep leaving from the front), and the messages
older than a threshold form a prefix, so counting them costs only as many steps as there are stuck messages.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator

from mutepro.detect.model import PartitionLoad

#: The partition of messages librdkafka partitions itself (topic metadata not known yet).
UNASSIGNED = -1


class _Partition:
    __slots__ = ("bytes", "entries")

    def __init__(self) -> None:
        self.entries: OrderedDict[int, tuple[float, int]] = OrderedDict()
        self.bytes = 0


class OutstandingTracker:
    """Messages produced to librdkafka without a final delivery report, per (topic, partition)."""

    def __init__(self, buffer_max_messages: int, buffer_max_bytes: int) -> None:
        self.buffer_max_messages = buffer_max_messages
        self.buffer_max_bytes = buffer_max_bytes
        self._parts: dict[tuple[str, int], _Partition] = {}
        self._lock = threading.Lock()
        self.total = 0

    def add(self, topic: str, partition: int, seq: int, sent_at: float, size: int) -> None:
        key = (topic, partition)
        with self._lock:
            part = self._parts.get(key)
            if part is None:
                part = self._parts[key] = _Partition()
            part.entries[seq] = (sent_at, size)
            part.bytes += size
            self.total += 1

    def remove(self, topic: str, partition: int, seq: int) -> bool:
        """Forget a message; False if it was not tracked there (e.g. already removed)."""
        with self._lock:
            part = self._parts.get((topic, partition))
            if part is None:
                return False
            entry = part.entries.pop(seq, None)
            if entry is None:
                return False
            part.bytes -= entry[1]
            self.total -= 1
            return True

    def count(self, topic: str, partition: int) -> int:
        part = self._parts.get((topic, partition))
        return len(part.entries) if part is not None else 0

    def counts(self, topic: str) -> dict[int, int]:
        """Outstanding messages per partition of ``topic``."""
        with self._lock:
            return {p: len(part.entries) for (t, p), part in self._parts.items() if t == topic}

    def partitions(self) -> Iterator[tuple[str, int]]:
        with self._lock:
            keys = list(self._parts)
        yield from keys

    def load(self, topic: str, partition: int, now: float, stuck_after_s: float | None = None) -> PartitionLoad:
        """The partition's load; ``ages_s`` lists (oldest first) only the messages older than ``stuck_after_s``.

        Only the stuck prefix is materialised: on a healthy partition it is empty and this is O(1).
        """
        with self._lock:
            part = self._parts.get((topic, partition))
            if part is None or not part.entries:
                return PartitionLoad(0, 0, None, self.buffer_max_messages, self.buffer_max_bytes)
            oldest = next(iter(part.entries.values()))[0]
            ages: list[float] = []
            if stuck_after_s is not None and now - oldest > stuck_after_s:
                cutoff = now - stuck_after_s
                for sent_at, _size in part.entries.values():
                    if sent_at >= cutoff:
                        break
                    ages.append(now - sent_at)
            return PartitionLoad(
                outstanding=len(part.entries),
                outstanding_bytes=part.bytes,
                oldest_age_s=now - oldest,
                buffer_max_messages=self.buffer_max_messages,
                buffer_max_bytes=self.buffer_max_bytes,
                ages_s=tuple(ages),
            )
