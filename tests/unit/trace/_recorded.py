"""A short recorded run of a MuteProducer on a fake inner producer, shared by the trace tests."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka import KafkaError

from mutepro import MuteProducer
from mutepro.testing.fakes import FakeClock, FakeInnerProducer
from tests.unit._producer_fakes import CONF, topic_policy

TOPIC = "orders"


def record_run(tmp_path: Path) -> tuple[Path, MuteProducer, FakeClock]:
    clock = FakeClock()
    fake = FakeInnerProducer({TOPIC: 4}, leader={0: 1, 1: 2, 2: 3, 3: 1})
    path = tmp_path / "run.jsonl.gz"
    producer = MuteProducer(
        CONF, policy=topic_policy(), clock=clock, _inner_factory=fake.factory,
        _threads=False, trace=path,
    )
    producer.wait_for_topic(TOPIC, 0)
    producer._load_metadata(clock())
    for _ in range(3):  # healthy rounds
        for p in range(4):
            producer.produce(TOPIC, b"v", partition=p)
        fake.deliver(TOPIC)
        producer._tick(clock.advance(0.05))
    for _ in range(6):  # partition 2 fails every delivery: the failure-rate window (4 calls, 50 %) trips
        producer.produce(TOPIC, b"v", partition=2)
    fake.fail(TOPIC, 2, KafkaError._MSG_TIMED_OUT)
    producer._tick(clock.advance(0.05))
    for _ in range(40):  # the breaker's retry (1 s) passes: half-open
        producer._tick(clock.advance(0.05))
    producer.close()
    return path, producer, clock
