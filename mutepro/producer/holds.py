"""Holds and re-sends: keyed messages kept while their partition is muted (``keyed_policy: hold``), released in
order once it is writable again, and messages whose re-send met a full librdkafka queue.

Ordering rules (each pinned by tests/unit/producer/test_holds.py):

- a hold queue is released from its head only, and never while older messages of the partition still await
  their final report in librdkafka (the *order barrier*: librdkafka retries those, so anything released earlier
  could be written before them);
- while the partition is muted, a half-open breaker lets the head go as a probe (one at a time);
- messages a rescue purged go back in *front* of everything held (they are older; see :meth:`HoldQueues.put_front`).

All methods run under the producer lock.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from confluent_kafka import KafkaError

from mutepro.logs import get_logger
from mutepro.producer.core import Core
from mutepro.producer.message import NORMAL, PROBE, OutMessage, by_enqueue_time

log = get_logger("mutepro.producer")

HoldKey = tuple[str, int]


class HoldQueues:
    """The hold queues of one producer (``(topic, home) -> deque``) and its re-send queue."""

    def __init__(self, core: Core) -> None:
        self._core = core
        # The dict object itself is shared with the C fast path (it checks "anything held?" per message): it is
        # changed in place, never replaced.
        self.queues: dict[HoldKey, deque[OutMessage]] = {}
        self.total = 0
        self.retry: deque[tuple[OutMessage, int]] = deque()

    def __len__(self) -> int:
        """Held messages plus messages awaiting a re-send."""
        return self.total + len(self.retry)

    def held(self, topic: str | None = None) -> int:
        if topic is None:
            return self.total
        return sum(len(q) for (t, _), q in list(self.queues.items()) if t == topic)

    def held_at(self, topic: str, partition: int) -> int:
        return len(self.queues.get((topic, partition), ()))

    def holds_before(self, topic: str, partition: int) -> bool:
        """True when older messages of ``topic[partition]`` are held (a new one must queue behind them)."""
        return bool(self.queues.get((topic, partition)))

    def hold(self, m: OutMessage, home: int) -> None:
        """Queue ``m`` behind its muted home; ``BufferError`` when the queue is at ``hold.max_messages``."""
        key = (m.topic, home)
        queue = self.queues.get(key)
        limit = self._core.policy_for(m.topic).hold.max_messages
        if queue is not None and len(queue) >= limit:
            raise BufferError(
                f"mutepro: the hold queue of muted partition {m.topic}[{home}] is full ({limit} messages, "
                "hold.max_messages); poll() and retry, or raise hold.max_messages"
            )
        if queue is None:
            queue = self.queues[key] = deque()
        queue.append(m)
        self.total += 1
        self._core.counters.held += 1

    def put_front(self, held_back: dict[HoldKey, list[OutMessage]], straggler: bool = False) -> None:
        """Put purged messages back into their hold queues, in front of everything held there.

        A purged message is older than anything its partition holds: while a partition is muted its messages are
        held, and the only ones handed to librdkafka are released from the head of the queue (probes, releases).
        Their times do not say so: a purge report's time counts from the last hand-over (a probe released at T
        reports T, later than the messages produced before T that wait behind it), so merging by time put a
        released-then-purged message behind younger ones (key 2: sequence 85 written before 84). Among
        themselves, purged messages are ordered by that time (one purge is reported in parts, not in order).
        A straggler (a purge report served after its rescue) belongs among the purged run at the front."""
        for key, items in held_back.items():
            ordered = sorted(items, key=by_enqueue_time)
            queue = self.queues.get(key)
            if queue:
                if straggler:
                    run: list[OutMessage] = []
                    while queue and queue[0].purged:
                        run.append(queue.popleft())
                    ordered = list(heapq.merge(run, ordered, key=by_enqueue_time))
                ordered.extend(queue)
            self.queues[key] = deque(ordered)
            self.total += len(items)
            self._core.counters.held += len(items)

    def release(self) -> None:
        """Release held messages, in order, to partitions that are writable again (one probe if half-open)."""
        core = self._core
        manager = core.manager
        with core.lock:
            for key in list(self.queues):
                topic, home = key
                queue = self.queues[key]
                snap = manager.snapshot(topic)
                if snap is None:
                    continue
                if core.tracker.count(topic, home):
                    # Order barrier: messages sent to this partition before it was muted have no final report yet
                    # (in flight to a stopped leader, say). librdkafka retries them, after a leader change on the
                    # new leader, so a held message released now would be written before them: key 39's
                    # sequences 201-205 after 213. The plain producer waits for them just the same.
                    continue
                if home in snap.muted:
                    if queue and home in manager.probes.probing(topic) and manager.probes.try_probe(topic, home):
                        if self._release_one(queue, home, PROBE):
                            core.counters.probes += 1
                        else:
                            manager.probes.probe_unsent(topic, home)  # a full queue: the slot is free again
                    continue
                released = 0
                while queue:
                    if not self._release_one(queue, home, NORMAL):
                        break
                    released += 1
                if released:
                    log.info("hold_released", topic=topic, partition=home, released=released, left=len(queue))
                if not queue:
                    del self.queues[key]

    def _release_one(self, queue: deque[OutMessage], home: int, kind: int) -> bool:
        if not self._core.resend(queue[0], home, kind):
            return False
        queue.popleft()
        self.total -= 1
        self._core.counters.released += 1
        return True

    def retry_later(self, m: OutMessage, partition: int) -> None:
        """Keep a message whose re-send met a full librdkafka queue; the driver sends it again next tick."""
        self.retry.append((m, partition))

    def resend_retries(self) -> None:
        """Send what awaits a re-send, oldest first, until librdkafka's queue is full again."""
        core = self._core
        with core.lock:
            while self.retry:
                m, partition = self.retry[0]
                if not core.resend(m, partition, NORMAL):
                    return
                self.retry.popleft()

    def take_all(self) -> Iterator[tuple[OutMessage, int, str]]:
        """Empty every hold and the re-send queue (``purge()``): each message with its partition and why."""
        for (_topic, p), queue in list(self.queues.items()):
            while queue:
                m = queue.popleft()
                self.total -= 1
                yield m, p, "purged while held by mutepro"
        self.queues.clear()
        while self.retry:
            m, p = self.retry.popleft()
            yield m, p, "purged while awaiting re-send"

    def fail_all(self, fail: Callable[[OutMessage, KafkaError, int], Any]) -> None:
        """Fail every held and re-send-awaiting message with ``_PURGE_QUEUE`` (the application purged)."""
        for m, p, why in self.take_all():
            fail(m, KafkaError(KafkaError._PURGE_QUEUE, why), p)
