"""Helpers for the integration tests: bounded waits, a bounded background load, consuming back."""

from __future__ import annotations

import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, Message, TopicPartition

from mutepro.producer import MuteProducer


def wait_for(predicate: Callable[[], bool], timeout_s: float, step: Callable[[], Any] | None = None) -> bool:
    """Call ``step`` (default: a short pause) until ``predicate()`` holds or ``timeout_s`` passes (a bound only)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        if step is not None:
            step()
        else:
            time.sleep(0.05)
    return predicate()


class Ledger:
    """Every message's final report: delivered partition or error, keyed by the message's own id."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.delivered: dict[str, int] = {}
        self.failed: dict[str, KafkaError] = {}
        self.reports = 0
        self.callback_threads: set[int] = set()

    def callback(self, err: KafkaError | None, msg: Message) -> None:
        mid = msg.value().decode().split("|", 1)[0]
        with self.lock:
            self.reports += 1
            self.callback_threads.add(threading.get_ident())
            if err is None:
                self.delivered[mid] = msg.partition()
            else:
                self.failed[mid] = err


class BackgroundLoad:
    """Produce unkeyed (or keyed) messages from a thread at a bounded rate, for at most ``max_messages``/``max_s``.

    The application thread keeps calling ``poll`` (as a real app would), which runs the ledger callbacks.
    """

    def __init__(
        self, producer: MuteProducer, topic: str, ledger: Ledger, *, rate: float = 500.0, max_messages: int = 50_000,
        max_s: float = 90.0, keys: list[bytes] | None = None,
    ) -> None:
        self.producer = producer
        self.topic = topic
        self.ledger = ledger
        self.rate = rate
        self.max_messages = max_messages
        self.max_s = max_s
        self.keys = keys
        self.sent: list[str] = []
        self.sequence: dict[bytes, int] = defaultdict(int)
        self.buffer_errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> BackgroundLoad:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        start = time.monotonic()
        interval = 1.0 / self.rate
        n = 0
        while not self._stop.is_set() and n < self.max_messages and time.monotonic() - start < self.max_s:
            key = self.keys[n % len(self.keys)] if self.keys else None
            mid = f"m{n}"
            if key is not None:
                seq = self.sequence[key]
                self.sequence[key] += 1
                value = f"{mid}|{key.decode()}|{seq}".encode()
            else:
                value = f"{mid}|".encode() + b"x" * 64
            while not self._stop.is_set():
                try:
                    self.producer.produce(self.topic, value=value, key=key, on_delivery=self.ledger.callback)
                    break
                except BufferError:
                    self.buffer_errors += 1
                    self._stop.wait(0.01)
            self.sent.append(mid)
            n += 1
            # open loop: the next send is due at start + n * interval, whatever the broker does
            self._stop.wait(max(0.0, start + n * interval - time.monotonic()))


def consume_all(bootstrap: str, topic: str, expected: int, timeout_s: float = 60.0) -> list[Message]:
    """Read the topic from the beginning until ``expected`` messages arrived (or the bound passes)."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest", "enable.auto.commit": False,
    })
    consumer.subscribe([topic])
    out: list[Message] = []
    deadline = time.monotonic() + timeout_s
    while len(out) < expected and time.monotonic() < deadline:
        for msg in consumer.consume(1000, timeout=0.5):
            if msg.error() is None:
                out.append(msg)
    consumer.close()
    return out


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    """Each partition's high watermark: the offset its next message will get (fresh topics: its message count)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"wm-{uuid.uuid4().hex[:8]}"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
    finally:
        consumer.close()


def consume_to_end(bootstrap: str, topic: str, partitions: int, timeout_s: float = 60.0) -> list[Message]:
    """Every message written before the call: each partition read from its start up to its high watermark of now.

    Unlike a count (``consume_all``), this cannot stop early on messages written later to another partition (a
    stopped query's interrupted batch, a replayed duplicate) while an earlier one is still unread.
    """
    ends = {p: end for p, end in end_offsets(bootstrap, topic, partitions).items() if end > 0}
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4().hex[:8]}", "enable.auto.commit": False,
    })
    consumer.assign([TopicPartition(topic, p, 0) for p in ends])  # offset 0: fresh topics, nothing deleted
    out: list[Message] = []
    deadline = time.monotonic() + timeout_s
    try:
        while ends and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=0.5):
                if msg.error() is not None:
                    continue
                out.append(msg)
                p, offset = msg.partition(), msg.offset()
                if p in ends and offset is not None and offset + 1 >= ends[p]:
                    del ends[p]
    finally:
        consumer.close()
    return out
