"""A fake librdkafka producer and a fake clock, to drive MuteProducer in unit tests without Java or a broker.

``MuteProducer(conf, _inner_factory=FakeInnerProducer.factory(fake), clock=clock, _threads=False)`` wraps
``fake`` instead of ``confluent_kafka``'s client; the test then decides every message's fate::

    fake = FakeInnerProducer(topics={"orders": 4})
    producer = MuteProducer(CONF, _inner_factory=fake.factory, clock=clock, _threads=False)
    producer._load_metadata(clock())        # the driver's metadata round (no thread runs)
    producer.produce("orders", b"v", b"k")
    fake.deliver("orders", 2)               # reports for partition 2's pending messages, served by poll()
    producer._tick(clock())                 # one driver round

Messages are kept per partition in produce order, as librdkafka keeps them; a report is only handed to the
message's callback inside :meth:`FakeInnerProducer.poll` (which MuteProducer's poll/flush/tick call), like the
real client's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, Message


class FakeClock:
    """A monotonic clock a test moves by hand."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


@dataclass
class Sent:
    """One ``produce()`` call the fake received."""

    topic: str
    value: Any
    key: Any
    partition: int
    on_delivery: Callable[[KafkaError | None, Message], None] | None
    timestamp: int
    headers: Any
    at: float = field(default_factory=time.monotonic)

    def report(self, error: KafkaError | None, partition: int, latency: float | None) -> Message:
        return Message(
            topic=self.topic, partition=partition, value=self.value, key=self.key, headers=self.headers,
            error=error, latency=latency,
            timestamp=(confluent_kafka.TIMESTAMP_CREATE_TIME, self.timestamp) if self.timestamp else None,
        )


class FakeInnerProducer:
    """Records ``produce()`` calls and reports what the test says (see the module docstring).

    ``topics``: topic -> partition count (every partition led by broker ``leader``, or by ``leader[p]``, 1 for
    a partition it does not name); ``capacity``: messages it holds before ``produce()`` raises ``BufferError``,
    like ``queue.buffering.max.messages``.
    """

    def __init__(
        self, topics: Mapping[str, int] | None = None, *, capacity: int = 100_000, leader: int | Mapping[int, int] = 1
    ) -> None:
        self.topics = dict(topics or {})
        self.capacity = capacity
        self.leader = leader
        self.sent: list[Sent] = []  # every produce() call, in order
        self.pending: list[Sent] = []  # handed over, no report yet (librdkafka's queues)
        self.in_flight: list[Sent] = []  # of those, the ones sent to their broker (see transmit)
        self._ready: list[tuple[Sent, KafkaError | None, int, float | None]] = []
        self.config: dict[str, Any] = {}
        self.purges: list[tuple[bool, bool]] = []
        self.closed = False
        # produce() to these raises KafkaException(_UNKNOWN_TOPIC), as librdkafka once its metadata lacks the topic
        self.unknown_topics: set[str] = set()

    def factory(self, config: dict[str, Any]) -> FakeInnerProducer:
        """The ``_inner_factory`` of MuteProducer: keeps the final librdkafka config, returns this fake."""
        self.config = config
        return self

    # -- the confluent_kafka.Producer surface MuteProducer uses -----------------------------------------

    def produce(
        self, topic: str, value: Any = None, key: Any = None, partition: int = -1, callback: Any = None,
        on_delivery: Any = None, timestamp: int = 0, headers: Any = None,
    ) -> None:
        # confluent-kafka's positional order (the C fast path passes all eight positionally)
        if len(self) >= self.capacity:
            raise BufferError("Local: Queue full")
        if topic in self.unknown_topics:
            raise confluent_kafka.KafkaException(
                confluent_kafka.KafkaError(confluent_kafka.KafkaError._UNKNOWN_TOPIC, "Local: Unknown topic")
            )
        sent = Sent(topic, value, key, partition, on_delivery or callback, timestamp, headers)
        self.sent.append(sent)
        self.pending.append(sent)

    def poll(self, timeout: float | None = None) -> int:
        ready, self._ready = self._ready, []
        for sent, error, partition, latency in ready:
            if sent.on_delivery is not None:
                sent.on_delivery(error, sent.report(error, partition, latency))
        return len(ready)

    def flush(self, timeout: float | None = None) -> int:
        self.poll(0)
        return len(self)

    def purge(self, in_queue: bool = True, in_flight: bool = True, blocking: bool = True) -> None:
        """Pending messages get a purge report (served by the next poll): ``_PURGE_QUEUE`` with ``in_queue`` for
        those still queued, ``_PURGE_INFLIGHT`` with ``in_flight`` for those :meth:`transmit` sent; the latency
        counts from the produce(), as librdkafka's does."""
        self.purges.append((in_queue, in_flight))
        now = time.monotonic()
        flying = {id(s) for s in self.in_flight}
        kept: list[Sent] = []
        for sent in self.pending:
            sending = id(sent) in flying
            if (in_flight if sending else in_queue):
                code = KafkaError._PURGE_INFLIGHT if sending else KafkaError._PURGE_QUEUE
                self._ready.append((sent, KafkaError(code), sent.partition, now - sent.at))
            else:
                kept.append(sent)
        self.pending = kept
        self._forget_in_flight()

    def _leader_of(self, partition: int) -> int:
        return self.leader if isinstance(self.leader, int) else self.leader.get(partition, 1)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        if topic is not None and topic not in self.topics:
            raise KafkaException(KafkaError(KafkaError._UNKNOWN_TOPIC))
        names = [topic] if topic is not None else list(self.topics)
        return SimpleNamespace(topics={
            name: SimpleNamespace(
                error=None,
                partitions={
                    p: SimpleNamespace(
                        id=p, leader=self._leader_of(p), replicas=[self._leader_of(p)], isrs=[self._leader_of(p)]
                    )
                    for p in range(self.topics[name])
                },
            )
            for name in names
        })

    def close(self, timeout: float | None = None) -> bool:
        self.poll(0)
        self.closed = True
        return True

    def __len__(self) -> int:
        return len(self.pending) + len(self._ready)

    # -- the test's side: decide the pending messages' fate --------------------------------------------

    def transmit(self, topic: str | None = None, partition: int | None = None) -> int:
        """Mark the pending messages of ``topic[partition]`` (None: any) as in flight to their broker: a purge
        takes them back only with ``in_flight=True``."""
        flying = {id(s) for s in self.in_flight}
        chosen = [
            s for s in self.pending
            if id(s) not in flying and (topic is None or s.topic == topic)
            and (partition is None or s.partition == partition)
        ]
        self.in_flight.extend(chosen)
        return len(chosen)

    def pending_for(self, topic: str, partition: int) -> list[Sent]:
        return [s for s in self.pending if s.topic == topic and s.partition == partition]

    def deliver(self, topic: str | None = None, partition: int | None = None, *, latency: float = 0.001,
                count: int | None = None) -> int:
        """Successful reports for the pending messages of ``topic[partition]`` (None: any), oldest first."""
        return self._report(topic, partition, None, latency, count)

    def fail(self, topic: str | None, partition: int | None, code: int, *, latency: float = 0.001,
             count: int | None = None) -> int:
        """Failed reports (``KafkaError(code)``) for pending messages, oldest first."""
        return self._report(topic, partition, KafkaError(code), latency, count)

    def _report(
        self, topic: str | None, partition: int | None, error: KafkaError | None, latency: float, count: int | None
    ) -> int:
        chosen = [
            s for s in self.pending
            if (topic is None or s.topic == topic) and (partition is None or s.partition == partition)
        ][:count]
        ids = {id(s) for s in chosen}
        self.pending = [s for s in self.pending if id(s) not in ids]
        self._forget_in_flight()
        for s in chosen:
            # a message left to librdkafka's partitioner (-1) is placed on partition 0
            self._ready.append((s, error, s.partition if s.partition >= 0 else 0, latency))
        return len(chosen)

    def _forget_in_flight(self) -> None:
        still = {id(s) for s in self.pending}
        self.in_flight = [s for s in self.in_flight if id(s) in still]
