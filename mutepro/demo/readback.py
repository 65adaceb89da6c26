"""The demo's plain consumer: reads both jobs' topics from the start while they run, and to the end afterwards.

One reader for both jobs, so both are measured the same way: each row's second is Kafka's append time
(``message.timestamp.type=LogAppendTime`` on the demo topics), its latency that time minus the rate source's
timestamp carried in the value, and its row number (also in the value) counts duplicates and, against the
committed rows, losses.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Mapping

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from mutepro.demo.samples import JobSamples

_ID_DIGITS = 12


def encode_value_sql(pad: str) -> str:
    """The Spark SQL expression of a rate-source row's value: row number, timestamp (epoch ms), ``pad``."""
    number = f"lpad(cast(value as string), {_ID_DIGITS}, '0')"
    return f"concat({number}, '|', cast(unix_millis(timestamp) as string), '|', '{pad}')"


def decode_value(value: bytes) -> tuple[int, int]:
    """(row number, rate-source timestamp in epoch ms) of a demo row's value."""
    return int(value[:_ID_DIGITS]), int(value[_ID_DIGITS + 1: value.index(b"|", _ID_DIGITS + 1)])


class ReadBack:
    """Consumes ``topics`` (topic -> the job's samples) on a thread, from the first offset."""

    def __init__(self, bootstrap: str, topics: Mapping[str, JobSamples], partitions: int) -> None:
        self.topics = dict(topics)
        self.partitions = partitions
        self.t0_epoch: float | None = None  # rows appended before the timeline starts count only as rows
        self.lock = threading.Lock()
        self._seen = {t: bytearray() for t in self.topics}
        self._next: dict[tuple[str, int], int] = {}  # the offset after the last one read, per partition
        self._config = {
            "bootstrap.servers": bootstrap, "group.id": f"mutepro-demo-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False, "enable.partition.eof": False, "log_level": 3,
        }
        self._consumer = Consumer(self._config)
        self._consumer.assign([
            TopicPartition(t, p, OFFSET_BEGINNING) for t in self.topics for p in range(partitions)
        ])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mutepro-demo-readback", daemon=True)

    def start(self) -> ReadBack:
        self._thread.start()
        return self

    def begin(self, t0_epoch: float) -> None:
        """Start the timeline: rows appended from now on are counted per second."""
        with self.lock:
            self.t0_epoch = t0_epoch

    def recent_rate(self, topic: str, now_s: float, seconds: int = 5) -> float:
        """Rows/s appended over the last ``seconds`` whole seconds before ``now_s`` (the current one is partial)."""
        end = int(now_s)
        samples = self.topics[topic]
        with self.lock:
            return sum(samples.delivered.get(s, 0) for s in range(end - seconds, end)) / seconds

    def finish(self, timeout_s: float = 90.0) -> bool:
        """Read up to every partition's end (bounded), stop, and fill in read-back counts. True if caught up."""
        deadline = time.monotonic() + timeout_s
        ends = self._ends()
        caught_up = False
        while time.monotonic() < deadline:
            with self.lock:
                caught_up = all(self._next.get(tp, 0) >= end for tp, end in ends.items())
            if caught_up:
                break
            self._stop.wait(0.2)
        self._stop.set()
        self._thread.join(30)
        self._consumer.close()
        for topic, samples in self.topics.items():
            seen = self._seen[topic]
            samples.lost = sum(1 for i in range(samples.committed) if i >= len(seen) or not seen[i])
        return caught_up

    def _ends(self) -> dict[tuple[str, int], int]:
        # asked on a consumer of its own: the reading one is busy in consume() on its thread
        probe = Consumer(self._config)
        try:
            return {
                (t, p): probe.get_watermark_offsets(TopicPartition(t, p), timeout=10)[1]
                for t in self.topics for p in range(self.partitions)
            }
        finally:
            probe.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            messages = self._consumer.consume(5000, timeout=0.2)
            if not messages:
                continue
            with self.lock:
                for m in messages:
                    topic, partition, offset = m.topic(), m.partition(), m.offset()
                    if m.error() is not None or topic is None or partition is None or offset is None:
                        continue
                    self._count(topic, m.value() or b"", m.timestamp()[1])
                    self._next[(topic, partition)] = offset + 1

    def _count(self, topic: str, value: bytes, appended_ms: int) -> None:
        samples = self.topics[topic]
        row, born_ms = decode_value(value)
        seen = self._seen[topic]
        if row >= len(seen):
            seen.extend(bytes(row + 100_000 - len(seen)))
        samples.read_back += 1
        if not seen[row]:
            seen[row] = 1
            samples.distinct += 1
        if self.t0_epoch is not None:
            samples.add_delivery(math.floor(appended_ms / 1000.0 - self.t0_epoch), float(appended_ms - born_ms))
