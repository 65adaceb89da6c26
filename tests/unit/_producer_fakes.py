"""Build a MuteProducer around the fake librdkafka producer and a fake clock (no broker, no threads)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

from confluent_kafka import KafkaError, Message

from mutepro import MuteProducer
from mutepro.policy.schema import TopicPolicy
from mutepro.testing.fakes import FakeClock, FakeInnerProducer

TOPIC = "orders"
PARTITIONS = 4
CONF = {"bootstrap.servers": "127.0.0.1:1", "linger.ms": 5}


def topic_policy(**overrides: Any) -> TopicPolicy:
    """A policy whose only detector is a small failure-rate window (deterministic under a fake clock)."""
    base: dict[str, Any] = {
        "failure_rate": {"minimum_calls": 4, "window": {"type": "count", "size": 4}, "threshold_pct": 50},
        "slow_call": {"enabled": False},
        "congestion": {"enabled": False},
        "broker": {"enabled": False},
        "breaker": {"retry_interval_ms": 1000, "max_retry_interval_ms": 1000, "half_open_probes": 1},
        "partitioner": {"adaptive": False},
        "rescue": {"after_ms": 0},  # at the mute: the rescue itself (its delay: tests/unit/producer/test_rescue.py)
    }
    base.update(overrides)
    return TopicPolicy.model_validate(base)


class Harness:
    """A MuteProducer on a fake inner producer and a fake clock, with its reports collected."""

    def __init__(
        self, conf: dict[str, Any] | None = None, leaders: dict[int, int] | None = None,
        clock: Any = None, **policy: Any,
    ) -> None:
        self.clock = clock if clock is not None else FakeClock()
        self.fake = FakeInnerProducer({TOPIC: PARTITIONS}, leader=leaders or 1)
        self.reports: list[tuple[int | None, Message]] = []
        self.producer = MuteProducer(
            {**CONF, **(conf or {})}, policy=topic_policy(**policy), clock=self.clock,
            _inner_factory=self.fake.factory, _threads=False,
        )
        assert not self.producer.wait_for_topic(TOPIC, 0)  # asks for the topic's metadata...
        self.producer._load_metadata(self.clock())  # ...which the metadata round loads
        assert self.producer.wait_for_topic(TOPIC, 0)

    def callback(self, err: KafkaError | None, msg: Message) -> None:
        self.reports.append((err.code() if err is not None else None, msg))

    def produce(self, value: bytes, key: bytes | None = None, **kwargs: Any) -> None:
        self.producer.produce(TOPIC, value, key, on_delivery=self.callback, **kwargs)

    def home(self, key: bytes) -> int:
        home = self.producer._router.home(key, PARTITIONS)
        assert home is not None
        return home

    def tick(self, advance: float = 0.05) -> None:
        """One driver round, ``advance`` seconds later on a fake clock (on a real one: now)."""
        self.producer._tick(self.clock.advance(advance) if isinstance(self.clock, FakeClock) else self.clock())

    def warm(self) -> None:
        """One delivered message per partition: the partitions' first deliveries are not judged."""
        for p in range(PARTITIONS):
            self.producer.produce(TOPIC, b"warm", partition=p)
        self.fake.deliver(TOPIC)
        self.tick()

    def trip(self, partition: int) -> None:
        """Mute ``partition`` the way the detectors do: four failed deliveries, then a tick."""
        for i in range(4):
            self.producer.produce(TOPIC, f"bad{i}".encode(), partition=partition)
        self.fake.fail(TOPIC, partition, KafkaError.REQUEST_TIMED_OUT)
        self.tick()
        assert partition in self.producer.mute_manager.muted_partitions().get(TOPIC, [])

    def values(self, partition: int) -> list[bytes]:
        """Values pending in the fake for ``partition``, in the order librdkafka got them."""
        return [s.value for s in self.fake.pending_for(TOPIC, partition)]

    def close(self) -> None:
        """Deliver what librdkafka has and close (held messages left are purged: no warning wanted here)."""
        self.fake.deliver()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            self.producer.close(0.05)


def keys_by_home(harness: Harness, count: int = 64) -> Iterator[tuple[bytes, int]]:
    for i in range(count):
        key = f"key{i}".encode()
        yield key, harness.home(key)


def muted_with_queue(h: Harness) -> tuple[int, list[bytes]]:
    """Ten unkeyed messages queued, then the first one's partition muted and one tick: (partition, its values)."""
    for i in range(10):
        h.producer.produce(TOPIC, f"{i}".encode(), on_delivery=h.callback)
    victim = h.fake.sent[0].partition
    queued = h.values(victim)
    h.producer.mute_manager.mute(TOPIC, victim)
    h.tick()
    return victim, queued
