"""What the tests of the mute manager and its parts drive: a manager fed by the producer's own tracker, on a
fake clock, with fake detectors where a test sets the verdicts."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from mutepro.detect.model import Delivery, PartitionLoad, Verdict
from mutepro.detect.protocols import PartitionDetector
from mutepro.mute.manager import MuteEvent, ProducerMuteManager
from mutepro.mute.store import BreakerStore
from mutepro.policy.schema import BreakerConfig, CongestionConfig, SlowCallConfig, TopicPolicy
from mutepro.producer.tracker import OutstandingTracker

T = "orders"
#: Broker 2 leads partitions 1, 4 and 5 (two of them stalled -> the broker rule mutes the third).
LEADERS = {0: 1, 1: 2, 2: 3, 3: 1, 4: 2, 5: 2}
#: 5 s retry doubling to a 60 s cap, 2 probes; a message undelivered for more than 1 s is slow.
POLICY = TopicPolicy(
    breaker=BreakerConfig(retry_interval_ms=5000, max_retry_interval_ms=60_000, backoff_multiplier=2.0,
                          half_open_probes=2),
    slow_call=SlowCallConfig(threshold_ms=1000),
    congestion=CongestionConfig(min_age_ms=200),  # the outlier logic's tests (the default's age: TestCongestionAge)
)


class FakeClock:
    """Monotonic seconds, moved only by the test; ``wall`` is an epoch clock moving with it."""

    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds

    def wall(self) -> float:
        return 1_700_000_000.0 + self.t


class FakeDetector:
    """Returns whatever ``verdict`` is set to; remembers what it was fed."""

    name = "fake"

    def __init__(self) -> None:
        self.verdict: Verdict | None = None
        self.records: list[Delivery] = []
        self.checks: list[tuple[PartitionLoad, float]] = []
        self.resets = 0

    def record(self, delivery: Delivery) -> None:
        self.records.append(delivery)

    def check(self, load: PartitionLoad, now: float) -> Verdict | None:
        self.checks.append((load, now))
        return self.verdict

    def reset(self) -> None:
        self.resets += 1


class FakeDetectors:
    """A detector_factory handing out FakeDetectors; ``made[i]`` is partition i's (partitions are built in
    order)."""

    def __init__(self) -> None:
        self.made: list[FakeDetector] = []

    def __call__(self, topic: str, policy: TopicPolicy) -> list[PartitionDetector]:
        self.made.append(FakeDetector())
        return [self.made[-1]]


class Rig:
    """One manager as the producer drives it: its own OutstandingTracker as the load reader, events recorded."""

    def __init__(
        self,
        clock: FakeClock,
        *,
        store: BreakerStore | None = None,
        detector_factory: Callable[[str, TopicPolicy], list[PartitionDetector]] | None = None,
        policy: TopicPolicy = POLICY,
    ) -> None:
        self.clock = clock
        self.tracker = OutstandingTracker(buffer_max_messages=100_000, buffer_max_bytes=1 << 30)
        self.events: list[MuteEvent] = []
        extra = {"detector_factory": detector_factory} if detector_factory is not None else {}
        self.mgr = ProducerMuteManager(
            lambda topic: policy, clock=clock, wall_clock=clock.wall, store=store, on_event=self.events.append,
            **extra,  # type: ignore[arg-type]
        )
        self._seq = itertools.count()
        self._sent: dict[tuple[str, int], list[int]] = {}

    def send(self, partition: int, topic: str = T) -> None:
        """A message handed to librdkafka now (no report yet); the tick's checkpoint records when."""
        tally = self.tracker.ensure(topic, max(partition + 1, 4), 1.0)
        tally.sent[partition] += 1
        tally.sent_bytes[partition] += 100
        self.tracker.sent_total += 1
        self.tracker.checkpoint(self.clock())

    def settle(self, partition: int, topic: str = T, delivered: bool = True) -> None:
        """Every outstanding message of the partition got its report (or was rescued elsewhere); ``delivered``:
        they were delivered, and the manager gets their tally as the driver hands it over (fast, none failed)."""
        tally = self.tracker.topics.get(topic)
        if tally is None or partition >= tally.count:
            return
        done = tally.sent[partition] - tally.reported[partition]
        tally.reported[partition] = tally.sent[partition]
        self.tracker.reported_total += done
        if delivered and done > 0:
            self.mgr.rounds.record_many(topic, partition, done, 0, 0, self.clock())

    def evaluate(self) -> list[tuple[str, int]]:
        self.tracker.checkpoint(self.clock())
        return self.mgr.rounds.evaluate(self.tracker.load)

    def stall(self, *partitions: int, meanwhile: tuple[int, ...] = ()) -> list[tuple[str, int]]:
        """Partitions whose leader stopped answering: a message sits there for 1.5 s (> 1 s), no reports; the
        partitions of ``meanwhile`` take a message and deliver it half-way through (other brokers answering).

        Each partition delivered once before (a warm partition), so the cold-start grace does not apply.
        """
        for p in partitions:
            self.mgr.rounds.record(T, p, Delivery(ok=True, latency_s=0.01, now=self.clock()))
            self.send(p)
        self.clock.advance(0.75)
        for p in meanwhile:
            self.send(p)
            self.settle(p)
        self.clock.advance(0.75)
        return self.evaluate()

    def kinds(self, partition: int) -> list[str]:
        return [e.kind for e in self.events if e.partition == partition]

    def state_of(self, partition: int, topic: str = T) -> str:
        return str(self.mgr.state()["topics"][topic][partition]["state"])


def to_half_open(rig: Rig, partition: int) -> None:
    """Mute the partition by a stall, let its messages settle and its 5 s retry interval pass."""
    assert rig.stall(partition) == [(T, partition)]
    rig.settle(partition)
    rig.clock.advance(5.0)
    rig.evaluate()
    assert rig.mgr.probes.probing(T) == frozenset({partition})


def fill(rig: Rig, per_partition: dict[int, int], drained: frozenset[int] = frozenset()) -> None:
    """Count ``per_partition`` messages of 100 B sent to topic T (those of ``drained`` also reported) and take the
    tracker's checkpoint now: their age starts here."""
    tally = rig.tracker.ensure(T, 6, 1.0)
    for p, n in per_partition.items():
        tally.sent[p] += n
        tally.sent_bytes[p] += n * 100
        rig.tracker.sent_total += n
        if p in drained:
            tally.reported[p] += n
            rig.tracker.reported_total += n
    rig.tracker.checkpoint(rig.clock())
