"""What the soak's producers were told, and what an independent plain consumer finds in Kafka afterwards.

Every message value starts ``<producer>|<thread>|<seq>|<key seq>|``: producer index, thread index, the
thread's sequence number and (keyed threads) the key's own sequence number. The :class:`Ledger` records, per
message, whether ``produce()`` accepted or raised and what its delivery callback said; :func:`read_back`
consumes every partition from the beginning with a plain ``confluent_kafka.Consumer``; :func:`check` compares
the two.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

NOT_SENT, ACCEPTED, DELIVERED, FAILED, REJECTED = 0, 1, 2, 3, 4


def encode(producer: int, thread: int, seq: int, key_seq: int, pad: bytes) -> bytes:
    return b"%d|%d|%d|%d|" % (producer, thread, seq, key_seq) + pad


def decode(value: bytes | None) -> tuple[int, int, int, int] | None:
    if not value:
        return None
    parts = value.split(b"|", 4)
    if len(parts) < 5:
        return None
    try:
        return int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3])
    except ValueError:
        return None


class Ledger:
    """Per-message state of every thread of every producer, bounded by ``capacity`` messages per thread."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._states: dict[tuple[int, int], bytearray] = {}
        self._lock = threading.Lock()
        self.failures: Counter[str] = Counter()  # (producer kind) reason -> count, from delivery callbacks
        self.rejections: Counter[str] = Counter()  # reason -> count, produce() raised
        self.first_seen: dict[str, float] = {}  # reason -> monotonic time it was first seen
        self.duplicate_callbacks = 0
        self.bad_delivered = 0  # a bad message (oversized / unknown topic) that was acknowledged

    def states(self, producer: int, thread: int) -> bytearray:
        key = (producer, thread)
        with self._lock:
            if key not in self._states:
                self._states[key] = bytearray(self.capacity)
            return self._states[key]

    def callback(self, label: str, bad: bool = False) -> Any:
        """A delivery callback for the producer ``label`` (its messages are told apart by their values)."""

        def on_delivery(err: Any, msg: Any) -> None:
            ids = decode(msg.value())
            if ids is None:
                return
            states = self.states(ids[0], ids[1])
            seq = ids[2]
            if seq >= self.capacity:
                return
            if states[seq] in (DELIVERED, FAILED):
                self.duplicate_callbacks += 1
                return
            if err is None:
                states[seq] = DELIVERED
                if bad:
                    self.bad_delivered += 1
            else:
                states[seq] = FAILED
                reason = f"{label}: {err.name()}"
                self.failures[reason] += 1
                self.first_seen.setdefault(reason, time.monotonic())

        return on_delivery

    def reject(self, reason: str) -> None:
        """``produce()`` raised for a message, for ``reason``."""
        self.rejections[reason] += 1
        self.first_seen.setdefault(reason, time.monotonic())

    def summary(self) -> dict[str, int]:
        counts = Counter[int]()
        for states in self._states.values():
            for state in (ACCEPTED, DELIVERED, FAILED, REJECTED):
                counts[state] += states.count(state)
        return {
            "accepted_unreported": counts[ACCEPTED],
            "acknowledged": counts[DELIVERED],
            "failed": counts[FAILED],
            "rejected_at_produce": counts[REJECTED],
            "duplicate_callbacks": self.duplicate_callbacks,
            "bad_acknowledged": self.bad_delivered,
        }


@dataclass
class ReadBack:
    """Everything one topic holds: per (producer, thread, seq) how often, and per key the (partition, offset,
    key seq) of each copy."""

    copies: Counter[tuple[int, int, int]] = field(default_factory=Counter)
    by_key: dict[bytes, list[tuple[int, int, int]]] = field(default_factory=lambda: defaultdict(list))
    records: int = 0


def read_back(bootstrap: str, topic: str, timeout_s: float = 90.0) -> ReadBack:
    """Consume ``topic`` from the beginning to its high watermarks with a plain consumer (bounded in time)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"soak-check-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": "read_uncommitted",
            "log_level": 3,
        }
    )
    result = ReadBack()
    try:
        metadata = consumer.list_topics(topic, timeout=20)
        partitions = sorted(metadata.topics[topic].partitions)
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=20)[1] for p in partitions}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions if ends[p] > 0])
        remaining = {p for p in partitions if ends[p] > 0}
        deadline = time.monotonic() + timeout_s
        while remaining and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=1.0):
                if msg.error() is not None:
                    continue
                p, offset = msg.partition(), msg.offset()
                if offset >= ends[p] - 1:
                    remaining.discard(p)
                ids = decode(msg.value())
                result.records += 1
                if ids is None:
                    continue
                result.copies[(ids[0], ids[1], ids[2])] += 1
                key = msg.key()
                if key is not None:
                    result.by_key[key].append((p, offset, ids[3]))
        if remaining:
            raise TimeoutError(f"could not read {topic} partitions {sorted(remaining)} within {timeout_s}s")
    finally:
        consumer.close()
    return result


@dataclass
class OrderReport:
    inversions: int = 0  # copies written after a higher sequence of the same key (same partition), every copy
    # The same, counting only the first copy of each message in its partition: what the application's order
    # became. A rewrite (see below) re-sends a run in order after later messages were written, so it shows up in
    # ``inversions`` only.
    first_copy_inversions: int = 0
    rewrites: int = 0  # copies of a key sequence already written earlier in the same partition
    left_home: int = 0  # messages of a key outside the partition most of its messages are in
    worst: list[str] = field(default_factory=list)  # a few examples, for the report


def key_order(read: ReadBack, examples: int = 5) -> OrderReport:
    """Per-key order as a consumer sees it: in each partition, offsets ascending, key sequences must ascend.

    Counted twice: over every copy (what a reader that does not de-duplicate sees) and over first copies only
    (whether any message was written before one produced ahead of it). An idempotent librdkafka producer writes
    a run a second time when it bumps its epoch while that run is being retried (librdkafka issue #4953): the
    plain client as much as MuteProducer. Such a rewrite is an inversion of every copy, not of first copies."""
    report = OrderReport()
    for key, copies in read.by_key.items():
        by_partition: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for partition, offset, key_seq in copies:
            by_partition[partition].append((offset, key_seq))
        home = max(by_partition, key=lambda p: len(by_partition[p]))
        report.left_home += sum(len(v) for p, v in by_partition.items() if p != home)
        for partition, items in by_partition.items():
            items.sort()
            highest = highest_first = -1
            seen: set[int] = set()
            for offset, key_seq in items:
                if key_seq < highest:
                    report.inversions += 1
                    if len(report.worst) < examples:
                        report.worst.append(
                            f"key {key.decode(errors='replace')} p{partition}@{offset}: seq {key_seq} after {highest}"
                        )
                highest = max(highest, key_seq)
                if key_seq in seen:
                    report.rewrites += 1
                    continue
                seen.add(key_seq)
                if key_seq < highest_first:
                    report.first_copy_inversions += 1
                highest_first = max(highest_first, key_seq)
    return report


def compare(ledger: Ledger, producer: int, threads: list[int], read: ReadBack) -> dict[str, int]:
    """Lost (acknowledged, not in Kafka), duplicated (in Kafka more than once), written-but-failed (reported
    failed yet in Kafka: allowed, a timeout does not prove absence) for one producer's threads."""
    lost = duplicated = failed_but_written = 0
    for thread in threads:
        states = ledger.states(producer, thread)
        for seq, state in enumerate(states):
            if state == NOT_SENT:
                continue
            n = read.copies.get((producer, thread, seq), 0)
            if state == DELIVERED and n == 0:
                lost += 1
            if n > 1:
                duplicated += n - 1
            if state == FAILED and n > 0:
                failed_but_written += 1
    return {"lost": lost, "duplicated": duplicated, "failed_but_written": failed_but_written}
