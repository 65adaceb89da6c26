"""One outgoing message as mutepro keeps it off the hot path, and the report kinds that travel with it.

The hot path (``MuteProducer.produce`` on a healthy topic, the C fast path) never builds one: it hands its six
arguments straight to librdkafka. An :class:`OutMessage` exists only where mutepro itself must keep, route or
re-send a message (held, failed, purged and re-sent, awaiting a re-send after ``BufferError``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, Message

from mutepro.producer.tracker import UNASSIGNED

DeliveryCallback = Callable[[KafkaError | None, Message], None]
Reporter = Callable[[KafkaError | None, Message], None]

# What a message's delivery report must know, folded into the report callback (one cached closure per user
# callback and kind, so the hot path allocates nothing per message).
NORMAL = 0
EXPLICIT = 1  # partition= given by the application: never moved
UNCOUNTED = 2  # not in a partition tally (partitioned by librdkafka, or sent before the topic's metadata)
PROBE = 4  # a probe of a half-open partition
RESCUED = 8  # re-sent by a rescue already: not rescued again after a timeout


class OutMessage:
    """A message mutepro keeps or re-sends: what ``produce()`` was given, plus when it was enqueued."""

    __slots__ = ("callback", "enqueued", "headers", "key", "purged", "timestamp", "topic", "value")

    def __init__(
        self, topic: str, value: Any, key: Any, headers: Any, timestamp: int, callback: DeliveryCallback | None,
        enqueued: float | None = None, purged: bool = False,
    ) -> None:
        self.topic = topic
        self.value = value
        self.key = key
        self.headers = headers
        self.timestamp = timestamp
        self.callback = callback
        # when the application produced it (time.monotonic): a hold queue is kept in this order
        self.enqueued = time.monotonic() if enqueued is None else enqueued
        # taken back from librdkafka by a purge: ``enqueued`` then comes from the report and counts from the
        # message's last hand-over to librdkafka (a release or re-send restarts it), not from the application
        self.purged = purged

    @classmethod
    def from_report(
        cls, msg: Message, callback: DeliveryCallback | None, *, headers: Any = None, purged: bool = False
    ) -> OutMessage:
        """The message a (purged or failed) delivery report carries, to be re-sent, held or failed again."""
        return cls(
            topic_of(msg), msg.value(), msg.key(), msg.headers() if headers is None else headers, create_time(msg),
            callback, enqueued_at(msg) if purged else None, purged=purged,
        )

    @property
    def size(self) -> int:
        return len(self.value) if self.value is not None else 0

    def failed_report(self, error: KafkaError, partition: int) -> Message:
        """The report of this message failing before it reached librdkafka."""
        return Message(
            topic=self.topic, partition=partition, value=self.value, key=self.key, headers=self.headers, error=error
        )

    def __repr__(self) -> str:
        return f"<OutMessage {self.topic} key={self.key!r} enqueued={self.enqueued:.3f} purged={self.purged}>"


def by_enqueue_time(message: OutMessage) -> float:
    return message.enqueued


def topic_of(msg: Message) -> str:
    return msg.topic() or ""


def partition_of(msg: Message) -> int:
    p = msg.partition()
    return p if p is not None else UNASSIGNED


def create_time(msg: Message) -> int:
    kind, ts = msg.timestamp()
    return ts if kind == confluent_kafka.TIMESTAMP_CREATE_TIME else 0


def enqueued_at(msg: Message) -> float | None:
    """When the application produced ``msg`` (time.monotonic), from its report: now - latency (librdkafka's
    clock is CLOCK_MONOTONIC too). None without a latency."""
    latency = msg.latency()
    return time.monotonic() - latency if latency is not None and latency >= 0 else None


def with_header(headers: Any, name: str, value: bytes) -> Any:
    """``headers`` (list, mapping or None) with ``name`` set to ``value`` (replacing any earlier one)."""
    if headers is None:
        items: list[tuple[str, Any]] = []
    elif isinstance(headers, Mapping):
        items = list(headers.items())
    else:
        items = list(headers)
    items = [(k, v) for k, v in items if k != name]
    items.append((name, value))
    return items
