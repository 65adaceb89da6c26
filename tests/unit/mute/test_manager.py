"""ProducerMuteManager: snapshots, detection, recovery through probes, broker muting, leader moves, manual
control, events, and state shared by two managers over memory and Redis. Fake clocks throughout."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import FrozenInstanceError

import pytest

from mutepro.detect.model import Delivery, MuteReason, PartitionLoad, Verdict
from mutepro.detect.protocols import PartitionDetector
from mutepro.errors import ConfigError
from mutepro.mute.manager import MuteEvent, MuteEventKind, ProducerMuteManager, opened_partitions
from mutepro.mute.scan import QUIET_REJUDGE_S
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

    def settle(self, partition: int, topic: str = T) -> None:
        """Every outstanding message of the partition got its report (or was rescued elsewhere)."""
        tally = self.tracker.topics.get(topic)
        if tally is None or partition >= tally.count:
            return
        done = tally.sent[partition] - tally.reported[partition]
        tally.reported[partition] = tally.sent[partition]
        self.tracker.reported_total += done

    def evaluate(self) -> list[tuple[str, int]]:
        self.tracker.checkpoint(self.clock())
        return self.mgr.evaluate(self.tracker.load)

    def stall(self, *partitions: int) -> list[tuple[str, int]]:
        """Partitions whose leader stopped answering: a message sits there for 1.5 s (> 1 s), no reports.

        Each partition delivered once before (a warm partition), so the cold-start grace does not apply.
        """
        for p in partitions:
            self.mgr.record(T, p, Delivery(ok=True, latency_s=0.01, now=self.clock()))
            self.send(p)
        self.clock.advance(1.5)
        return self.evaluate()

    def kinds(self, partition: int) -> list[str]:
        return [e.kind for e in self.events if e.partition == partition]

    def state_of(self, partition: int, topic: str = T) -> str:
        return str(self.mgr.state()["topics"][topic][partition]["state"])


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def rig(clock: FakeClock) -> Rig:
    r = Rig(clock)
    r.mgr.ensure_topic(T, 6, LEADERS)
    return r


def to_half_open(rig: Rig, partition: int) -> None:
    """Mute the partition by a stall, let its messages settle and its 5 s retry interval pass."""
    assert rig.stall(partition) == [(T, partition)]
    rig.settle(partition)
    rig.clock.advance(5.0)
    rig.evaluate()
    assert rig.mgr.probing(T) == frozenset({partition})


class TestEnsureTopic:
    def test_unknown_topic(self, clock: FakeClock) -> None:
        """Before ensure_topic a topic has no snapshot, nothing muted and nothing probing."""
        mgr = Rig(clock).mgr
        assert mgr.snapshot(T) is None
        assert (mgr.is_muted(T, 0), mgr.probing(T), mgr.muted_partitions(), mgr.known_topics()) == (
            False, frozenset(), {}, []
        )
        assert mgr.leader(T, 0) == -1

    def test_first_snapshot_all_writable(self, rig: Rig) -> None:
        """ensure_topic publishes a snapshot with every partition writable and records the leaders."""
        snap = rig.mgr.snapshot(T)
        assert snap is not None
        assert (snap.topic, snap.partition_count, snap.writable, snap.muted) == (T, 6, (0, 1, 2, 3, 4, 5), frozenset())
        assert [rig.mgr.leader(T, p) for p in range(6)] == [1, 2, 3, 1, 2, 2]
        assert rig.mgr.known_topics() == [T]
        assert rig.mgr.policy(T) is POLICY
        assert rig.events == []

    def test_ensure_again_keeps_snapshot(self, rig: Rig) -> None:
        """Calling ensure_topic again with the same metadata publishes no new snapshot."""
        before = rig.mgr.snapshot(T)
        rig.mgr.ensure_topic(T, 6, LEADERS)
        assert rig.mgr.snapshot(T) is before

    def test_partitions_added(self, rig: Rig) -> None:
        """A topic that grew gets a snapshot covering the new partitions."""
        rig.mgr.ensure_topic(T, 8, {**LEADERS, 6: 3, 7: 1})
        snap = rig.mgr.snapshot(T)
        assert snap is not None
        assert (snap.partition_count, snap.writable) == (8, tuple(range(8)))
        assert rig.mgr.leader(T, 7) == 1

    def test_refresh_weights(self, rig: Rig) -> None:
        """refresh_weights publishes KIP-794 weights from the queue sizes (emptier partitions weigh more)."""
        rig.mgr.refresh_weights(T, {0: 3, 1: 0})
        snap = rig.mgr.snapshot(T)
        assert snap is not None
        probs = snap.probabilities()
        assert probs[1] > probs[0]
        assert probs[1] == pytest.approx(probs[2])

    def test_a_weight_refresh_keeps_the_reroute_memo_and_a_mute_empties_it(self, rig: Rig) -> None:
        """The memo survives new weights (same writable partitions) but not a mute, which changes the fallbacks."""
        rig.mgr.mute(T, 1)
        muted = rig.mgr.snapshot(T)
        assert muted is not None
        muted.reroute_memo[b"k"] = 2
        rig.mgr.refresh_weights(T, {0: 3, 2: 0})
        refreshed = rig.mgr.snapshot(T)
        assert refreshed is not None and refreshed is not muted and refreshed.reroute_memo == {b"k": 2}
        rig.mgr.mute(T, 2)
        again = rig.mgr.snapshot(T)
        assert again is not None and again.reroute_memo == {}


class TestDetection:
    def test_no_load_no_mute(self, rig: Rig) -> None:
        """With nothing outstanding no detector trips and evaluate returns nothing."""
        rig.clock.advance(10.0)
        assert rig.evaluate() == []
        assert rig.mgr.muted_partitions() == {}

    def test_fresh_message_not_slow(self, rig: Rig) -> None:
        """A message outstanding for less than the slow threshold mutes nothing."""
        rig.send(2)
        rig.clock.advance(0.9)
        assert rig.evaluate() == []

    def test_stall_mutes_exactly_that_partition(self, rig: Rig) -> None:
        """A real SlowCallDetector (default factory) mutes only the stalled partition; evaluate returns it once."""
        assert rig.stall(2) == [(T, 2)]
        snap = rig.mgr.snapshot(T)
        assert snap is not None
        assert snap.muted == frozenset({2})
        assert snap.writable == (0, 1, 3, 4, 5)
        assert rig.mgr.is_muted(T, 2) and not rig.mgr.is_muted(T, 0)
        assert rig.mgr.muted_partitions() == {T: [2]}
        assert rig.evaluate() == []  # reported once, for the rescue

    def test_mute_event(self, rig: Rig, clock: FakeClock) -> None:
        """The mute is one MuteEvent naming topic, partition, leader, the detector and its figures."""
        rig.stall(2)
        assert len(rig.events) == 1
        e = rig.events[0]
        assert (e.kind, e.topic, e.partition, e.broker, e.reason, e.at) == ("mute", T, 2, 3, "slow_call", clock())
        assert e.detail["stalled"] == 1
        assert e.detail["stuck"] == 1

    def test_fake_detector_via_factory(self, clock: FakeClock) -> None:
        """A custom detector's verdict mutes its partition; it is checked with the partition's load and time."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.ensure_topic(T, 6, LEADERS)
        assert len(dets.made) == 6
        rig.send(3)
        dets.made[3].verdict = Verdict("fake", {"score": 7})
        assert rig.evaluate() == [(T, 3)]
        assert rig.mgr.muted_partitions() == {T: [3]}
        load, now = dets.made[3].checks[-1]
        assert (load.outstanding, now) == (1, clock())
        assert (rig.events[0].reason, dict(rig.events[0].detail)) == ("fake", {"score": 7})

    def test_open_partition_not_checked(self, clock: FakeClock) -> None:
        """While muted, a partition's detectors are not consulted."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.ensure_topic(T, 6, LEADERS)
        dets.made[0].verdict = Verdict("fake")
        rig.evaluate()
        checks = len(dets.made[0].checks)
        rig.clock.advance(1.0)
        rig.evaluate()
        assert len(dets.made[0].checks) == checks

    def test_idle_partitions_wait_for_their_quiet_round(self, clock: FakeClock) -> None:
        """With the tracker's busy partitions given, an idle one is judged once a second, a busy one every round."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.ensure_topic(T, 6, LEADERS)

        def round_() -> None:
            rig.tracker.checkpoint(clock())
            rig.mgr.evaluate(rig.tracker.load, None, rig.tracker.busy)

        round_()  # every partition judged once
        assert [len(d.checks) for d in dets.made] == [1] * 6
        rig.send(3)
        clock.advance(0.05)
        round_()
        assert [len(d.checks) for d in dets.made] == [1, 1, 1, 2, 1, 1]  # only 3 (busy) looked at
        clock.advance(QUIET_REJUDGE_S)
        round_()
        assert [len(d.checks) for d in dets.made] == [2, 2, 2, 3, 2, 2]  # the quiet round

    def test_record_feeds_the_partitions_detectors(self, clock: FakeClock) -> None:
        """record() hands the delivery to that partition's detectors only; unknown partitions are ignored."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.ensure_topic(T, 6, LEADERS)
        d = Delivery(True, 0.01, clock())
        rig.mgr.record(T, 4, d)
        rig.mgr.record(T, 99, d)
        rig.mgr.record("other", 0, d)
        assert dets.made[4].records == [d]
        assert [len(x.records) for x in dets.made] == [0, 0, 0, 0, 1, 0]

    def test_failure_rate_by_records(self, rig: Rig, clock: FakeClock) -> None:
        """20 failed reports (failure_rate minimum_calls, 50 %) mute the partition at the next evaluate."""
        for _ in range(20):
            rig.mgr.record(T, 0, Delivery(False, 0.01, clock(), error_code=7))
        assert rig.evaluate() == [(T, 0)]
        assert rig.events[-1].reason == "failure_rate"


def _fill(rig: Rig, per_partition: dict[int, int], drained: frozenset[int] = frozenset()) -> None:
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


class TestCongestionOutliers:
    def _fill(self, rig: Rig, per_partition: dict[int, int]) -> None:
        _fill(rig, per_partition)
        rig.clock.advance(0.3)  # older than congestion.min_age_ms, younger than the 1 s slow-call threshold

    def test_an_evenly_full_buffer_mutes_nothing(self, rig: Rig) -> None:
        """Every partition over its 25 % share but none an outlier (a producer outpacing the cluster): no mute."""
        self._fill(rig, {0: 26_000, 1: 28_000, 2: 27_000, 3: 26_500, 4: 27_500, 5: 26_000})
        assert rig.evaluate() == []

    def test_an_outlier_over_its_share_is_muted(self, rig: Rig) -> None:
        """One partition at 30 % of the buffer while the others hold ~1 %: muted for congestion."""
        self._fill(rig, {0: 1_000, 1: 30_000, 2: 1_200, 3: 900, 4: 1_100, 5: 1_000})
        assert rig.evaluate() == [(T, 1)]
        assert rig.events[-1].reason == "congestion"

    def test_a_stalled_broker_leading_half_the_partitions_is_still_an_outlier(self, rig: Rig) -> None:
        """Broker 2 leads 3 of 6 partitions, all backed up: against the median of the others (its own siblings
        are only 2 of 5) each is an outlier, so all three are muted."""
        self._fill(rig, {0: 100, 1: 30_000, 2: 120, 3: 90, 4: 31_000, 5: 29_500})
        assert {p for _, p in rig.evaluate()} == {1, 4, 5}

    def test_a_slower_but_draining_broker_is_not_an_outlier(self, rig: Rig) -> None:
        """2.7x the others' median (a CPU-starved broker under full load) stays under the default factor 3."""
        self._fill(rig, {0: 10_000, 1: 27_000, 2: 10_000, 3: 10_250, 4: 27_000, 5: 27_250})
        assert rig.evaluate() == []

    def test_factor_one_keeps_the_plain_share_rule(self, clock: FakeClock) -> None:
        """outlier_factor=1 turns the outlier check off: the buffer share alone decides."""
        policy = POLICY.model_copy(update={"congestion": CongestionConfig(outlier_factor=1.0, min_age_ms=200)})
        rig = Rig(clock, policy=policy)
        rig.mgr.ensure_topic(T, 6, LEADERS)
        self._fill(rig, {0: 26_000, 1: 28_000, 2: 27_000, 3: 26_500, 4: 27_500, 5: 26_000})
        assert {p for _, p in rig.evaluate()} == {0, 1, 2, 3, 4, 5}


class TestCongestionAge:
    def test_a_pause_shorter_than_the_default_age_mutes_nothing(self, clock: FakeClock) -> None:
        """Default congestion.min_age_ms (1,000): a partition at 30 % of the buffer whose oldest message waited
        0.9 s (a healthy broker's pause under a saturating writer) is not muted; at 1.05 s it is."""
        rig = Rig(clock, policy=POLICY.model_copy(update={"congestion": CongestionConfig()}))
        rig.mgr.ensure_topic(T, 6, LEADERS)
        # the others drained: only partition 1 still waits
        _fill(rig, {0: 1_000, 1: 30_000, 2: 1_200, 3: 900, 4: 1_100, 5: 1_000}, drained=frozenset({0, 2, 3, 4, 5}))
        rig.clock.advance(0.9)
        assert [e for e in rig.events if e.reason == "congestion"] == [] and rig.evaluate() == []
        rig.clock.advance(0.15)
        rig.evaluate()
        assert [e.partition for e in rig.events if e.kind == "mute"] == [1]


class TestProbeSpacing:
    def test_probes_are_granted_one_per_spacing(self, rig: Rig) -> None:
        """A second probe waits breaker.probe_spacing_ms (250) after the first, even with a slot free."""
        to_half_open(rig, 2)
        assert rig.mgr.try_probe(T, 2)
        rig.clock.advance(0.2)
        assert not rig.mgr.try_probe(T, 2)
        rig.clock.advance(0.05)
        assert rig.mgr.try_probe(T, 2)

    def test_zero_spacing_grants_every_slot_at_once(self, clock: FakeClock) -> None:
        """probe_spacing_ms: 0 grants all half_open_probes at once (the former behaviour)."""
        policy = POLICY.model_copy(update={"breaker": POLICY.breaker.model_copy(update={"probe_spacing_ms": 0})})
        rig = Rig(clock, policy=policy)
        rig.mgr.ensure_topic(T, 6, LEADERS)
        to_half_open(rig, 2)
        assert [rig.mgr.try_probe(T, 2) for _ in range(3)] == [True, True, False]


class TestAgeOutlierRule:
    def _traffic(self, rig: Rig, lagging: dict[int, float]) -> list[tuple[str, int]]:
        """Every partition got messages (after one warm report each); all but ``lagging`` delivered them, those
        hold one of the given age."""
        for p in range(6):
            rig.mgr.record(T, p, Delivery(ok=True, latency_s=0.01, now=rig.clock()))
            rig.send(p)
            if p not in lagging:
                rig.settle(p)
        rig.evaluate()  # the manager sees every partition active
        oldest = max(lagging.values(), default=0.0)
        rig.clock.advance(oldest)
        return rig.evaluate()

    def test_a_first_episode_only_steers_unkeyed_messages(self, rig: Rig) -> None:
        """Broker 2's partitions 0.5 s behind, the rest drained: nothing muted, but 1, 4 and 5 (broker 2's) are
        avoided -- out of the writable set, not muted (keyed messages still go home)."""
        assert self._traffic(rig, {1: 0.5, 4: 0.5}) == []
        snap = rig.mgr.snapshot(T)
        assert snap is not None and snap.avoided == frozenset({1, 4, 5}) and snap.muted == frozenset()
        assert snap.writable == (0, 2, 3)
        assert rig.mgr.state()["avoided"] == {T: [1, 4, 5]}

    def test_the_episode_ends_when_its_messages_are_delivered(self, rig: Rig) -> None:
        """Once broker 2's old messages got their reports, its partitions are writable again."""
        self._traffic(rig, {1: 0.5, 4: 0.5})
        rig.settle(1)
        rig.settle(4)
        rig.clock.advance(0.1)
        assert rig.evaluate() == []
        snap = rig.mgr.snapshot(T)
        assert snap is not None and snap.avoided == frozenset() and snap.writable == tuple(range(6))

    def _episode_ends(self, rig: Rig, *partitions: int) -> None:
        for p in partitions:
            rig.settle(p)
        rig.clock.advance(0.1)
        rig.evaluate()
        rig.clock.advance(1.0)

    def test_a_second_deep_episode_mutes_below_the_slow_threshold(self, rig: Rig) -> None:
        """A limping broker stands out 0.5 s deep (past the 0.4 s floor) again 1 s after the first such episode
        ended: 1 and 4 muted as outliers (under the 1 s threshold), then 5 by the broker rule."""
        self._traffic(rig, {1: 0.5, 4: 0.5})
        self._episode_ends(rig, 1, 4)
        opened = self._traffic(rig, {1: 0.5, 4: 0.5})
        assert {p for _, p in opened} == {1, 4, 5}
        outlier = next(e for e in rig.events if e.partition == 1)
        assert outlier.reason == "slow_call" and outlier.detail["rule"] == "outlier"

    def test_a_shallow_episode_then_a_deep_one_only_steers(self, rig: Rig) -> None:
        """0.2 s behind (under the 0.4 s mute floor), then 0.5 s: a healthy broker's two pauses, nothing muted."""
        self._traffic(rig, {1: 0.2, 4: 0.2})
        self._episode_ends(rig, 1, 4)
        assert self._traffic(rig, {1: 0.5, 4: 0.5}) == []

    def test_a_recurrence_after_the_window_is_a_new_first_episode(self, rig: Rig) -> None:
        """Two hiccups of a healthy broker 10 s apart (more than 5 s): neither is muted."""
        self._traffic(rig, {1: 0.5})
        rig.settle(1)
        rig.clock.advance(0.1)
        rig.evaluate()
        rig.clock.advance(10.0)
        assert self._traffic(rig, {1: 0.5}) == []

    def test_a_long_episode_mutes_on_its_own(self, rig: Rig) -> None:
        """Broker 2's partitions stay 0.5-0.9 s behind for over 1.5 s (slow all the time, keyed traffic keeps it
        busy): muted without a second episode."""
        self._traffic(rig, {1: 0.5})
        for _ in range(4):
            rig.clock.advance(0.4)
            rig.settle(1)
            rig.send(1)
            for p in (0, 2, 3):
                rig.send(p)
                rig.settle(p)
            rig.clock.advance(0.5)
            opened = rig.evaluate()
            if opened:
                break
        assert (T, 1) in opened

    def test_under_the_steering_floor_nothing_happens(self, rig: Rig) -> None:
        """0.1 s behind is under avoid_min_ms (150 ms): nothing avoided, nothing muted."""
        assert self._traffic(rig, {1: 0.1}) == []
        snap = rig.mgr.snapshot(T)
        assert snap is not None and snap.avoided == frozenset()

    def test_idle_partitions_are_no_reference(self, rig: Rig) -> None:
        """Only partitions 0 and 1 get traffic; partition 1 0.5 s behind has one peer, not enough: not muted."""
        rig.send(0)
        rig.settle(0)
        rig.send(1)
        rig.evaluate()
        rig.clock.advance(0.5)
        assert rig.evaluate() == []

    def test_a_slow_probe_fails(self, rig: Rig) -> None:
        """With active peers at ~0 ms, a probe answered after 0.5 s (under the 1 s threshold, over the 0.2 s
        outlier bar) re-mutes; one answered after 0.1 s passes."""
        to_half_open(rig, 2)
        for p in (0, 1, 3, 4, 5):
            rig.send(p)
            rig.settle(p)
        rig.evaluate()
        assert rig.mgr.probing(T) == frozenset({2})
        rig.mgr.probe_result(T, 2, True, 0.1)
        assert rig.state_of(2) == "half_open"
        rig.mgr.probe_result(T, 2, True, 0.5)
        assert rig.kinds(2)[-1] == "remute"


class TestRecovery:
    def test_open_until_retry_interval(self, rig: Rig) -> None:
        """Until retry_interval_ms has passed the partition stays open and nothing probes."""
        rig.stall(2)
        rig.settle(2)
        rig.clock.advance(4.9)
        rig.evaluate()
        assert rig.state_of(2) == "open"
        assert rig.mgr.probing(T) == frozenset()
        assert rig.mgr.try_probe(T, 2) is False

    def test_half_open_after_retry_interval(self, rig: Rig) -> None:
        """After retry_interval_ms the partition is half-open: still muted, listed by probing()."""
        to_half_open(rig, 2)
        assert rig.state_of(2) == "half_open"
        assert rig.mgr.is_muted(T, 2)
        assert rig.kinds(2) == ["mute", "probe"]

    def test_try_probe_grants_half_open_probes(self, rig: Rig) -> None:
        """try_probe grants exactly half_open_probes (2) slots; closed and unknown partitions grant none."""
        to_half_open(rig, 2)
        assert rig.mgr.try_probe(T, 2)
        rig.clock.advance(0.25)  # breaker.probe_spacing_ms
        assert [rig.mgr.try_probe(T, 2) for _ in range(2)] == [True, False]
        assert rig.mgr.try_probe(T, 0) is False
        assert rig.mgr.try_probe(T, 42) is False
        assert rig.mgr.try_probe("other", 0) is False

    def test_probe_wait_is_the_soonest_probe_of_the_topic(self, rig: Rig) -> None:
        """probe_wait(topic): inf with nothing half-open (or an unknown topic); 0 while a half-open partition can
        take a probe now; after one, the rest of probe_spacing_ms."""
        assert rig.mgr.probe_wait(T) == math.inf and rig.mgr.probe_wait("other") == math.inf
        to_half_open(rig, 2)
        assert rig.mgr.probe_wait(T) == 0.0 and rig.mgr.try_probe(T, 2)
        rig.clock.advance(0.1)
        assert rig.mgr.probe_wait(T) == pytest.approx(0.15)

    def test_successful_probes_unmute(self, rig: Rig) -> None:
        """Two successful probes close the breaker: writable again, an unmute event, nothing probing."""
        to_half_open(rig, 2)
        rig.mgr.try_probe(T, 2)
        rig.mgr.try_probe(T, 2)
        rig.mgr.probe_result(T, 2, True)
        assert rig.mgr.is_muted(T, 2)
        rig.mgr.probe_result(T, 2, True)
        snap = rig.mgr.snapshot(T)
        assert snap is not None and snap.writable == tuple(range(6))
        assert rig.mgr.probing(T) == frozenset()
        assert rig.kinds(2) == ["mute", "probe", "unmute"]
        assert rig.state_of(2) == "closed"

    def test_unmute_resets_detectors(self, clock: FakeClock) -> None:
        """Closing after probes gives the partition fresh detector windows."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.ensure_topic(T, 6, LEADERS)
        dets.made[1].verdict = Verdict("fake")
        rig.evaluate()
        dets.made[1].verdict = None
        clock.advance(5.0)
        rig.evaluate()
        rig.mgr.try_probe(T, 1)
        rig.mgr.try_probe(T, 1)
        rig.mgr.probe_result(T, 1, True)
        rig.mgr.probe_result(T, 1, True)
        assert dets.made[1].resets == 1
        assert dets.made[0].resets == 0

    def test_failed_probe_remutes_with_backoff(self, rig: Rig) -> None:
        """A failed probe re-opens (remute) and the next retry waits 2 x 5 s = 10 s."""
        to_half_open(rig, 2)
        assert rig.mgr.try_probe(T, 2)
        rig.mgr.probe_result(T, 2, False)
        assert rig.kinds(2) == ["mute", "probe", "remute"]
        assert rig.events[-1].reason == "slow_call"  # the verdict that opened it is kept
        assert rig.mgr.state()["topics"][T][2]["opens"] == 2
        rig.clock.advance(5.0)
        rig.evaluate()
        assert rig.state_of(2) == "open"
        rig.clock.advance(5.0)
        rig.evaluate()
        assert rig.state_of(2) == "half_open"

    def test_half_open_with_old_outstanding_message_reopens(self, rig: Rig) -> None:
        """Half-open with a message older than the slow threshold still outstanding re-opens with backoff."""
        assert rig.stall(2) == [(T, 2)]
        rig.clock.advance(5.0)  # the stuck message is now 6.5 s old; it never settled
        assert rig.evaluate() == []
        assert rig.kinds(2) == ["mute", "probe", "remute"]
        assert rig.state_of(2) == "open"
        assert rig.mgr.probing(T) == frozenset()
        assert rig.mgr.state()["topics"][T][2]["opens"] == 2

    def test_half_open_with_young_message_stays(self, rig: Rig) -> None:
        """A probe in flight for less than the slow threshold does not re-open the partition."""
        to_half_open(rig, 2)
        assert rig.mgr.try_probe(T, 2)
        rig.send(2)
        rig.clock.advance(0.5)
        rig.evaluate()
        assert rig.state_of(2) == "half_open"

    def test_late_probe_result_ignored(self, rig: Rig) -> None:
        """A probe result for a partition that is not half-open (or unknown) changes nothing."""
        rig.mgr.probe_result(T, 0, False)
        rig.mgr.probe_result(T, 77, True)
        assert rig.events == []
        assert rig.state_of(0) == "closed"


class TestBrokerMuting:
    def test_every_leader_as_far_behind_mutes_nothing(self, rig: Rig) -> None:
        """One partition of each broker 1.5 s behind: the producer's own queue, no partition muted."""
        assert rig.stall(0, 1, 2) == []
        assert rig.mgr.muted_partitions() == {}

    def test_two_bad_partitions_mute_the_broker(self, rig: Rig) -> None:
        """Two stalled partitions of broker 2 mute every partition it leads (1, 4 and 5), each reported once."""
        opened = rig.stall(1, 4)
        assert sorted(opened) == [(T, 1), (T, 4), (T, 5)]
        assert len(opened) == 3
        assert rig.mgr.muted_partitions() == {T: [1, 4, 5]}
        assert list(rig.mgr.muted_brokers()) == [2]
        assert rig.mgr.muted_brokers()[2].startswith("broker")
        by_broker = next(e for e in rig.events if e.partition == 5)
        assert (by_broker.kind, by_broker.reason, by_broker.broker) == ("mute", "broker", 2)
        assert by_broker.detail["bad_partitions"] == 2
        assert rig.mgr.state()["brokers"] == rig.mgr.muted_brokers()

    def test_one_bad_partition_does_not(self, rig: Rig) -> None:
        """One stalled partition of broker 2 mutes only that partition."""
        assert rig.stall(1) == [(T, 1)]
        assert rig.mgr.muted_brokers() == {}
        assert rig.mgr.muted_partitions() == {T: [1]}

    def test_bad_partitions_of_different_brokers(self, rig: Rig) -> None:
        """Stalls on partitions of two different brokers (the third delivering) mute no broker."""
        rig.send(2)
        rig.settle(2)
        rig.stall(0, 1)
        assert rig.mgr.muted_brokers() == {}
        assert rig.mgr.muted_partitions() == {T: [0, 1]}

    def test_partition_moving_onto_bad_broker_is_muted(self, rig: Rig) -> None:
        """A closed partition whose leadership moves onto a muted broker is muted at the next evaluate."""
        rig.stall(1, 4)
        rig.mgr.update_leaders(T, {0: 2})
        assert rig.evaluate() == [(T, 0)]
        assert rig.mgr.is_muted(T, 0)

    def test_broker_disabled(self, clock: FakeClock) -> None:
        """With broker.enabled false, two bad partitions of one broker mute only themselves."""
        policy = POLICY.model_copy(update={"broker": POLICY.broker.model_copy(update={"enabled": False})})
        rig = Rig(clock, policy=policy)
        rig.mgr.ensure_topic(T, 6, LEADERS)
        rig.stall(1, 4)
        assert rig.mgr.muted_brokers() == {}
        assert rig.mgr.muted_partitions() == {T: [1, 4]}


class TestLeaderMove:
    def test_move_to_healthy_broker_unmutes(self, rig: Rig) -> None:
        """Leadership moving from the muted partition's broker to a healthy one unmutes it at once."""
        rig.stall(2)
        rig.settle(2)
        rig.mgr.update_leaders(T, {2: 1})
        assert not rig.mgr.is_muted(T, 2)
        assert rig.mgr.leader(T, 2) == 1
        e = rig.events[-1]
        assert (e.kind, e.partition, e.broker) == ("unmute", 2, 1)
        assert "leader_moved" in e.reason and "3->1" in e.reason
        assert e.detail == {"previous_state": "open"}

    def test_move_emits_only_the_unmute(self, rig: Rig) -> None:
        """Resetting the breaker emits one unmute and queues no rescue (no mute events from the reset)."""
        rig.stall(2)
        rig.settle(2)
        rig.mgr.update_leaders(T, {2: 1})
        assert rig.kinds(2) == ["mute", "unmute"]
        assert rig.evaluate() == []
        assert rig.state_of(2) == "closed"
        assert rig.mgr.state()["topics"][T][2]["opens"] == 0

    def test_moved_partition_can_mute_again(self, rig: Rig) -> None:
        """After a leader-move unmute the partition has working detectors: a new stall mutes it again."""
        rig.stall(2)
        rig.settle(2)
        rig.mgr.update_leaders(T, {2: 1})
        assert rig.stall(2) == [(T, 2)]
        assert rig.events[-1].broker == 1

    def test_in_flight_to_old_leader_does_not_remute(self, rig: Rig) -> None:
        """Messages still in flight to the old (stalled) leader do not re-mute the partition on its new leader."""
        rig.stall(2)  # the message stays outstanding: librdkafka waits for the stalled broker's response
        rig.mgr.update_leaders(T, {2: 1})
        rig.clock.advance(0.5)
        assert rig.evaluate() == []
        rig.clock.advance(10.0)
        assert rig.evaluate() == []
        assert not rig.mgr.is_muted(T, 2)
        assert rig.kinds(2) == ["mute", "unmute"]

    def test_new_leader_stalling_remutes(self, rig: Rig) -> None:
        """A message sent to the new leader after the move and stuck past the threshold mutes it again."""
        rig.stall(2)
        rig.mgr.update_leaders(T, {2: 1})
        assert rig.stall(2) == [(T, 2)]
        e = rig.events[-1]
        assert (e.kind, e.broker, e.detail["stuck"]) == ("mute", 1, 1)

    def test_old_messages_count_again_after_they_settle(self, rig: Rig) -> None:
        """Once the pre-move messages have their reports, the partition is judged on everything again."""
        rig.stall(2)
        rig.mgr.update_leaders(T, {2: 1})
        rig.settle(2)
        rig.evaluate()
        assert rig.stall(2) == [(T, 2)]

    def test_manual_unmute_with_stuck_messages(self, rig: Rig) -> None:
        """unmute() by hand is not undone at the next evaluate by the messages that caused the mute."""
        rig.stall(2)
        rig.mgr.unmute(T, 2)
        rig.clock.advance(0.5)
        assert rig.evaluate() == []
        assert not rig.mgr.is_muted(T, 2)

    def test_half_open_partition_unmutes_too(self, rig: Rig) -> None:
        """A half-open partition whose leader moves to a healthy broker is closed."""
        to_half_open(rig, 2)
        rig.mgr.update_leaders(T, {2: 1})
        assert rig.mgr.probing(T) == frozenset()
        assert not rig.mgr.is_muted(T, 2)
        assert rig.events[-1].detail == {"previous_state": "half_open"}

    def test_move_to_muted_broker_keeps_mute(self, rig: Rig) -> None:
        """A partition moving onto a broker that is itself muted stays muted."""
        rig.stall(1, 4)  # broker 2 muted
        rig.stall(2)
        rig.mgr.update_leaders(T, {2: 2})
        assert rig.mgr.is_muted(T, 2)
        assert rig.kinds(2) == ["mute"]

    def test_move_of_closed_partition_is_silent(self, rig: Rig) -> None:
        """A leader change on a writable partition only updates the leader."""
        rig.mgr.update_leaders(T, {0: 3})
        assert rig.mgr.leader(T, 0) == 3
        assert rig.events == []

    def test_manual_mute_survives_move(self, rig: Rig) -> None:
        """A partition muted by hand stays muted whoever leads it."""
        rig.mgr.mute(T, 0)
        rig.mgr.update_leaders(T, {0: 3})
        assert rig.mgr.is_muted(T, 0)
        assert rig.state_of(0) == "forced_open"

    def test_leaderless_report_keeps_the_last_leader(self, rig: Rig) -> None:
        """A -1 leader (broker down, no other replica) keeps the last known one: a mute is blamed on it."""
        rig.mgr.ensure_topic(T, 6, {2: -1})
        assert rig.mgr.leader(T, 2) == 3
        rig.stall(2)
        assert rig.events[-1].broker == 3

    def test_move_through_leaderless_still_unmutes(self, rig: Rig) -> None:
        """A move 3 -> -1 -> 1 is a move off the muted leader: the partition gets a fresh chance on 1."""
        rig.stall(2)
        rig.settle(2)
        rig.mgr.update_leaders(T, {2: -1})
        assert rig.mgr.is_muted(T, 2)
        rig.mgr.update_leaders(T, {2: 1})
        assert not rig.mgr.is_muted(T, 2)
        assert "3->1" in rig.events[-1].reason

    def test_unknown_topic_ignored(self, rig: Rig) -> None:
        """update_leaders for a topic the manager does not know does nothing."""
        rig.mgr.update_leaders("other", {0: 1})
        assert rig.mgr.known_topics() == [T]


class TestManual:
    def test_mute_and_unmute(self, rig: Rig) -> None:
        """mute() forces a partition open (evaluate reports it once); unmute() makes it writable again."""
        rig.mgr.mute(T, 3)
        assert rig.mgr.is_muted(T, 3)
        assert rig.state_of(3) == "forced_open"
        assert rig.evaluate() == [(T, 3)]
        assert rig.evaluate() == []
        rig.mgr.unmute(T, 3)
        assert not rig.mgr.is_muted(T, 3)
        assert rig.kinds(3) == ["mute", "unmute"]
        assert rig.events[0].reason == "manual"

    def test_mute_with_reason(self, rig: Rig) -> None:
        """A reason given to mute() shows in the event detail and in state()."""
        rig.mgr.mute(T, 3, reason="maintenance on broker 1")
        assert rig.events[-1].detail == {"note": "maintenance on broker 1"}
        assert "maintenance on broker 1" in str(rig.mgr.state()["topics"][T][3]["reason"])

    def test_forced_ignores_retry_interval(self, rig: Rig) -> None:
        """A manual mute never turns half-open on its own."""
        rig.mgr.mute(T, 3)
        rig.clock.advance(3600.0)
        rig.evaluate()
        assert rig.state_of(3) == "forced_open"
        assert rig.mgr.probing(T) == frozenset()

    def test_unmute_detected_mute(self, rig: Rig) -> None:
        """unmute() of a detected (open) mute closes it at once with reason manual_unmute and no extra events."""
        rig.stall(2)
        rig.settle(2)
        rig.mgr.unmute(T, 2)
        assert not rig.mgr.is_muted(T, 2)
        assert rig.kinds(2) == ["mute", "unmute"]
        assert rig.events[-1].reason == "manual_unmute"
        assert rig.evaluate() == []

    def test_unmute_writable_partition(self, rig: Rig) -> None:
        """unmute() of a writable partition does nothing."""
        rig.mgr.unmute(T, 0)
        assert rig.events == []

    def test_unknown_partition(self, rig: Rig) -> None:
        """Manual control of an unknown partition raises ConfigError naming it and the known ones."""
        with pytest.raises(ConfigError, match=r"orders\[9\].*known partitions: \[0, 1, 2, 3, 4, 5\]"):
            rig.mgr.mute(T, 9)
        with pytest.raises(ConfigError, match=r"other\[0\]"):
            rig.mgr.unmute("other", 0)

    def test_mute_broker(self, rig: Rig) -> None:
        """mute_broker(2) mutes every partition broker 2 leads until unmute_broker(2)."""
        rig.mgr.mute_broker(2)
        assert rig.mgr.muted_partitions() == {T: [1, 4, 5]}
        assert rig.mgr.muted_brokers() == {2: "manual"}
        assert sorted(rig.evaluate()) == [(T, 1), (T, 4), (T, 5)]
        rig.mgr.unmute_broker(2)
        assert rig.mgr.muted_partitions() == {}
        assert rig.mgr.muted_brokers() == {}
        assert rig.kinds(5) == ["mute", "unmute"]

    def test_unknown_broker_is_refused(self, rig: Rig) -> None:
        """mute_broker() of an id that leads nothing known raises ConfigError naming the known leaders, and mutes
        nothing."""
        with pytest.raises(ConfigError, match=r"broker_id: 4242 .*known leaders: \[1, 2, 3\]"):
            rig.mgr.mute_broker(4242)
        assert rig.mgr.muted_brokers() == {} and rig.mgr.muted_partitions() == {}

    def test_unmute_broker_keeps_partition_muted_by_hand(self, rig: Rig) -> None:
        """A partition muted on its own before mute_broker stays muted after unmute_broker."""
        rig.mgr.mute(T, 4)
        rig.mgr.mute_broker(2)
        rig.mgr.unmute_broker(2)
        assert rig.mgr.muted_partitions() == {T: [4]}

    def test_leader_moving_onto_muted_broker(self, rig: Rig) -> None:
        """A partition whose leadership moves onto a broker muted by hand is muted too (and rescued)."""
        rig.mgr.mute_broker(2)
        rig.evaluate()
        rig.mgr.update_leaders(T, {0: 2})
        assert rig.mgr.is_muted(T, 0)
        assert rig.evaluate() == [(T, 0)]
        rig.mgr.unmute_broker(2)
        assert rig.mgr.muted_partitions() == {}

    def test_new_topic_on_muted_broker(self, rig: Rig) -> None:
        """A topic first seen after mute_broker(2) has its partitions led by 2 muted from the start."""
        rig.mgr.mute_broker(2)
        rig.mgr.ensure_topic("payments", 3, {0: 2, 1: 3, 2: 2})
        assert rig.mgr.muted_partitions()["payments"] == [0, 2]

    def test_manual_mute_overrides_detection(self, rig: Rig) -> None:
        """mute() of an open partition makes it forced: it no longer half-opens after the retry interval."""
        rig.stall(2)
        rig.settle(2)
        rig.mgr.mute(T, 2)
        rig.clock.advance(10.0)
        rig.evaluate()
        assert rig.state_of(2) == "forced_open"


class TestEventsAndState:
    def test_state_content(self, rig: Rig) -> None:
        """state() lists every partition's breaker state, leader, reason and opens, plus muted brokers."""
        rig.stall(2)
        rig.mgr.mute(T, 0)
        state = rig.mgr.state()
        assert set(state) == {"topics", "brokers"}
        parts = state["topics"][T]
        assert sorted(parts) == list(range(6))
        assert parts[1] == {"state": "closed", "leader": 2, "reason": None, "opens": 0}
        assert (parts[2]["state"], parts[2]["leader"], parts[2]["opens"]) == ("open", 3, 1)
        assert str(parts[2]["reason"]).startswith("slow_call")
        assert (parts[0]["state"], parts[0]["reason"]) == ("forced_open", "manual")
        assert state["brokers"] == {}

    def test_event_is_frozen(self, rig: Rig) -> None:
        """MuteEvents are immutable records."""
        rig.mgr.mute(T, 1)
        with pytest.raises(FrozenInstanceError):
            rig.events[0].reason = "x"  # type: ignore[misc]

    def test_an_added_listener_hears_every_later_event(self, rig: Rig) -> None:
        """add_event_listener: called after on_event with every event from then on, not the earlier ones."""
        rig.mgr.mute(T, 1)
        heard: list[MuteEvent] = []
        rig.mgr.add_event_listener(heard.append)
        rig.mgr.mute(T, 2)
        rig.mgr.unmute(T, 2)
        assert [(e.kind, e.partition) for e in heard] == [("mute", 2), ("unmute", 2)]
        assert rig.events[-2:] == heard

    def test_on_event_and_events_agree(self, rig: Rig) -> None:
        """on_event receives exactly the events kept in manager.events, in order."""
        rig.stall(2)
        rig.mgr.mute(T, 0)
        rig.mgr.unmute(T, 0)
        assert rig.events == rig.mgr.events
        assert [e.kind for e in rig.events] == ["mute", "mute", "unmute"]

    def test_kinds_and_reasons_are_enums(self, rig: Rig) -> None:
        """Event kinds are MuteEventKind and built-in reasons MuteReason members, equal to their plain names."""
        rig.stall(2)
        rig.mgr.mute(T, 0)
        rig.mgr.unmute(T, 0)
        kinds = [e.kind for e in rig.events]
        assert kinds == [MuteEventKind.MUTE, MuteEventKind.MUTE, MuteEventKind.UNMUTE]
        assert all(type(k) is MuteEventKind for k in kinds)
        assert [e.reason for e in rig.events] == [MuteReason.SLOW_CALL, MuteReason.MANUAL, "unmute"]
        assert [k.muted for k in kinds] == [True, True, False]

    def test_log_fields_are_plain_names(self, rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
        """The mute's log record carries the reason as its name, not an enum's repr."""
        with caplog.at_level("INFO", logger="mutepro"):
            rig.stall(2)
        record = next(r for r in caplog.records if r.getMessage().startswith("partition_mute"))
        assert "reason='slow_call'" in record.getMessage()
        assert "MuteReason" not in record.getMessage()

    def test_opened_partitions(self, rig: Rig) -> None:
        """opened_partitions lists the (topic, partition) of mute and remute events in order."""
        rig.stall(2)
        rig.mgr.mute(T, 0)
        rig.mgr.unmute(T, 0)
        assert opened_partitions(rig.events) == [(T, 2), (T, 0)]

    def test_history_bounded(self, rig: Rig) -> None:
        """manager.events keeps a bounded history (at most 1,000 events)."""
        for _ in range(600):
            rig.mgr.mute(T, 0)
            rig.mgr.unmute(T, 0)
        assert len(rig.mgr.events) <= 1000
        assert len(rig.events) == 1200
        assert rig.mgr.events[-1] == rig.events[-1]


# -- shared state ------------------------------------------------------------------------------------------

StoreFactory = Callable[[], BreakerStore]  # what the `stores` fixture (tests/unit/conftest.py) yields


@pytest.fixture
def pair(clock: FakeClock, stores: StoreFactory) -> tuple[Rig, Rig]:
    """Two managers (two producers, e.g. two Spark executors) sharing breaker state."""
    a, b = Rig(clock, store=stores()), Rig(clock, store=stores())
    a.mgr.ensure_topic(T, 6, LEADERS)
    b.mgr.ensure_topic(T, 6, LEADERS)
    return a, b


#: Managers read the shared record at most once a second per breaker (sync_interval_s).
SYNC_S = 1.0


class TestSharedState:
    def test_detected_mute_reaches_the_other(self, pair: tuple[Rig, Rig]) -> None:
        """A partition A detects is muted in B after B's next evaluate (B rescues it too)."""
        a, b = pair
        assert a.stall(2) == [(T, 2)]
        assert b.evaluate() == [(T, 2)]  # the stall took 1.5 s > the sync interval
        assert b.mgr.is_muted(T, 2)
        assert b.mgr.muted_partitions() == {T: [2]}
        assert (b.events[-1].kind, b.events[-1].reason) == ("mute", "slow_call")

    def test_not_before_sync_interval(self, pair: tuple[Rig, Rig], clock: FakeClock) -> None:
        """B picks the mute up once its sync interval has passed, not on an evaluate in the same instant."""
        a, b = pair
        a.mgr.mute(T, 1)
        assert b.evaluate() == []  # B read the record when it built the breaker, in this same instant
        assert not b.mgr.is_muted(T, 1)
        clock.advance(SYNC_S)
        assert b.evaluate() == [(T, 1)]
        assert b.state_of(1) == "forced_open"

    def test_manual_unmute_reaches_the_other(self, pair: tuple[Rig, Rig], clock: FakeClock) -> None:
        """A's unmute of a partition it muted by hand makes it writable in B too."""
        a, b = pair
        a.mgr.mute(T, 1)
        clock.advance(SYNC_S)
        b.evaluate()
        a.mgr.unmute(T, 1)
        clock.advance(SYNC_S)
        b.evaluate()
        assert not b.mgr.is_muted(T, 1)
        assert b.kinds(1) == ["mute", "unmute"]

    def test_recovery_reaches_the_other(self, pair: tuple[Rig, Rig], clock: FakeClock) -> None:
        """When A's probes close the partition, B closes it too."""
        a, b = pair
        a.stall(2)
        a.settle(2)
        b.evaluate()
        clock.advance(5.0)
        a.evaluate()
        b.evaluate()
        assert a.mgr.probing(T) == b.mgr.probing(T) == frozenset({2})
        a.mgr.try_probe(T, 2)
        a.mgr.try_probe(T, 2)
        a.mgr.probe_result(T, 2, True)
        a.mgr.probe_result(T, 2, True)
        clock.advance(SYNC_S)
        b.evaluate()
        assert not a.mgr.is_muted(T, 2)
        assert not b.mgr.is_muted(T, 2)

    def test_late_joiner_starts_muted(self, clock: FakeClock, stores: StoreFactory) -> None:
        """A manager that first sees the topic after A muted a partition starts with it muted."""
        a = Rig(clock, store=stores())
        a.mgr.ensure_topic(T, 6, LEADERS)
        a.stall(4)
        late = Rig(clock, store=stores())
        late.mgr.ensure_topic(T, 6, LEADERS)
        snap = late.mgr.snapshot(T)
        assert snap is not None
        assert (snap.partition_count, snap.muted) == (6, frozenset({4}))


class TestCounts:
    def test_counts_read_zero_until_bound_then_delegate(self, rig: Rig) -> None:
        """KIP-693's accumulated / in-flight questions are answered by the producer's bound counters."""
        assert (rig.mgr.outstanding(T, 0), rig.mgr.accumulated(T, 0), rig.mgr.in_flight(T, 0)) == (0, 0, 0)
        rig.mgr.bind_counts(lambda t, p: 7, lambda t, p: 5, lambda t, p: 2)
        assert (rig.mgr.outstanding(T, 0), rig.mgr.accumulated(T, 0), rig.mgr.in_flight(T, 0)) == (7, 5, 2)
