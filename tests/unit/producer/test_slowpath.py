"""The slow path (mutepro.producer.slowpath) through MuteProducer on a fake inner producer: while a partition is
half-open, the Python path grants its probes and tells the C fast path how long no probe can be due, so the
topic's other messages stay in C (Tally.defer_probes)."""

from __future__ import annotations

import random
import time
from typing import Any

from mutepro import MuteProducer
from mutepro.partition.protocols import DefaultMutingPartitioner
from mutepro.producer.slowpath import PROBE_RECHECK_S
from mutepro.testing.fakes import FakeClock, FakeInnerProducer
from tests.unit._producer_fakes import CONF, PARTITIONS, TOPIC, Harness, topic_policy

#: At most this many ticks to see a 1 ms retry interval pass on the real clock (each tick takes far longer).
MAX_TICKS = 10_000


def half_open(partition: int, **breaker: Any) -> Harness:
    """A C-path MuteProducer on the real monotonic clock whose ``partition`` is half-open (nothing granted yet)."""
    h = Harness(clock=time.monotonic, breaker={"retry_interval_ms": 1, "max_retry_interval_ms": 1, **breaker})
    h.warm()
    h.trip(partition)
    h.fake.deliver()
    h.producer.poll(0)
    for _ in range(MAX_TICKS):
        if partition in h.producer.mute_manager.probes.probing(TOPIC):
            return h
        h.tick()
    raise AssertionError(f"partition {partition} never went half-open")


def tally(h: Harness) -> Any:
    return h.producer._tracker.topics[TOPIC]


class TestProbeDeferral:
    def test_after_a_probe_the_topic_stays_in_c_until_the_next_probe_is_due(self) -> None:
        """The first message is the probe (Python); with the next one 60 s away, the next 200 stay in C and none
        of them goes to the half-open partition."""
        h = half_open(2, half_open_probes=2, probe_spacing_ms=60_000)
        fast = h.producer._fast
        before = fast.fallbacks
        h.produce(b"probe")
        assert h.producer.counters.probes == 1 and h.values(2)[-1:] == [b"probe"]
        assert fast.fallbacks == before + 1
        assert tally(h).probe_snap is h.producer.mute_manager.snapshot(TOPIC)
        assert 59.0 < tally(h).probe_until - time.monotonic() <= 60.0
        for i in range(200):
            h.produce(f"m{i}".encode())
        assert fast.fallbacks == before + 1 and h.producer.counters.probes == 1
        assert h.values(2)[-1:] == [b"probe"]
        h.close()

    def test_every_slot_taken_rechecks_after_a_quarter_second(self) -> None:
        """One probe allowed and in flight: no probe before its result, which changes no snapshot, so the C path
        asks again after PROBE_RECHECK_S rather than never."""
        h = half_open(1, half_open_probes=1, probe_spacing_ms=0)
        h.produce(b"probe")
        assert h.producer.counters.probes == 1
        assert 0.0 < tally(h).probe_until - time.monotonic() <= PROBE_RECHECK_S
        h.close()

    def test_a_new_snapshot_ends_the_deferral(self) -> None:
        """A partition changing state publishes a new snapshot: the next message goes to Python again."""
        h = half_open(2, half_open_probes=2, probe_spacing_ms=60_000)
        fast = h.producer._fast
        h.produce(b"probe")
        before = fast.fallbacks
        h.producer.mute_manager.mute(TOPIC, 0)
        h.tick()
        h.produce(b"after")
        assert fast.fallbacks == before + 1
        h.close()

    def test_a_probe_due_now_defers_nothing(self) -> None:
        """Two half-open partitions, spacing 60 s: the first message probes one, the second probes the other (both
        in Python), then the topic stays in C."""
        h = half_open(2, half_open_probes=2, probe_spacing_ms=60_000)
        h.trip(3)
        for _ in range(MAX_TICKS):
            if {2, 3} <= h.producer.mute_manager.probes.probing(TOPIC):
                break
            h.tick()
        fast = h.producer._fast
        before = fast.fallbacks
        for i in range(50):
            h.produce(f"m{i}".encode())
        assert h.producer.counters.probes == 2 and fast.fallbacks == before + 2
        h.close()

    def test_an_injected_clock_defers_nothing(self) -> None:
        """With a test's clock the deferral (timed on CLOCK_MONOTONIC) is not set: every message asks Python."""
        h = Harness(breaker={"retry_interval_ms": 1000, "max_retry_interval_ms": 1000, "half_open_probes": 2,
                                   "probe_spacing_ms": 60_000})
        assert isinstance(h.clock, FakeClock)
        h.warm()
        h.trip(2)
        h.fake.deliver()
        h.producer.poll(0)
        h.tick(1.5)
        assert 2 in h.producer.mute_manager.probes.probing(TOPIC)
        fast = h.producer._fast
        before = fast.fallbacks
        for i in range(5):
            h.produce(f"m{i}".encode())
        assert h.producer.counters.probes == 1 and fast.fallbacks == before + 5 and tally(h).probe_snap is None
        h.close()


class TestStickyOnAnInjectedClock:
    """A built-in partitioner on an injected clock: the C fast path makes no sticky choice of its own (it reads
    CLOCK_MONOTONIC), so every unkeyed message comes to the slow path, whose router asks the StickyChooser -- the
    C rule (Tally.choose_sticky) at the injected clock's time, on the topic's own Tally."""

    def test_the_stick_follows_the_injected_clock(self) -> None:
        """A 10 ms stick. The clock standing still: 50 messages on one partition, the topic's Tally holding that
        stick, every one chosen by the slow path. The clock moving 11 ms per message: each one drawn anew (seeded
        draws: more than one partition)."""
        clock = FakeClock()
        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        partitioner = DefaultMutingPartitioner(sticky_bytes=0, linger_s=0.01, rng=random.Random(5), clock=clock)
        producer = MuteProducer(
            dict(CONF), policy=topic_policy(), clock=clock, partitioner=partitioner,
            _inner_factory=fake.factory, _threads=False,
        )
        try:
            producer.wait_for_topic(TOPIC, 0)
            producer._load_metadata(clock())
            for i in range(50):
                producer.produce(TOPIC, f"{i}".encode())
            used = {m.partition for m in fake.sent}
            assert len(used) == 1 and producer._tracker.topics[TOPIC].stick in used
            assert producer._fast.fallbacks == 50  # the slow path chose every one
            for i in range(30):
                clock.advance(0.011)
                producer.produce(TOPIC, f"{i}".encode())
            assert len({m.partition for m in fake.sent[50:]}) > 1
        finally:
            fake.deliver()
            producer.close(0.05)
