"""ProducerMuteManager as a whole: detection rounds, the topic-wide rules through them, recovery through probes,
state shared by two managers over memory and Redis, the counts it answers. Fake clocks throughout (see _rig.py)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from mutepro.detect.model import Delivery, Verdict
from mutepro.mute.manager import ProducerMuteManager, QueueCounts
from mutepro.mute.store import BreakerStore
from mutepro.policy.schema import CongestionConfig, TopicPolicy
from tests.unit.mute._rig import LEADERS, POLICY, FakeClock, FakeDetectors, Rig, T, fill, to_half_open


class TestCongestionOutliers:
    def fill(self, rig: Rig, per_partition: dict[int, int]) -> None:
        fill(rig, per_partition)
        rig.clock.advance(0.3)  # older than congestion.min_age_ms, younger than the 1 s slow-call threshold

    def test_an_evenly_full_buffer_mutes_nothing(self, rig: Rig) -> None:
        """Every partition over its 25 % share but none an outlier (a producer outpacing the cluster): no mute."""
        self.fill(rig, {0: 26_000, 1: 28_000, 2: 27_000, 3: 26_500, 4: 27_500, 5: 26_000})
        assert rig.evaluate() == []

    def test_an_outlier_over_its_share_is_muted(self, rig: Rig) -> None:
        """One partition at 30 % of the buffer while the others hold ~1 %: muted for congestion."""
        self.fill(rig, {0: 1_000, 1: 30_000, 2: 1_200, 3: 900, 4: 1_100, 5: 1_000})
        assert rig.evaluate() == [(T, 1)]
        assert rig.events[-1].reason == "congestion"

    def test_a_stalled_broker_leading_half_the_partitions_is_still_an_outlier(self, rig: Rig) -> None:
        """Broker 2 leads 3 of 6 partitions, all backed up: against the median of the others (its own siblings
        are only 2 of 5) each is an outlier, so all three are muted."""
        self.fill(rig, {0: 100, 1: 30_000, 2: 120, 3: 90, 4: 31_000, 5: 29_500})
        assert {p for _, p in rig.evaluate()} == {1, 4, 5}

    def test_a_slower_but_draining_broker_is_not_an_outlier(self, rig: Rig) -> None:
        """2.7x the others' median (a CPU-starved broker under full load) stays under the default factor 3."""
        self.fill(rig, {0: 10_000, 1: 27_000, 2: 10_000, 3: 10_250, 4: 27_000, 5: 27_250})
        assert rig.evaluate() == []

    def test_factor_one_keeps_the_plain_share_rule(self, clock: FakeClock) -> None:
        """outlier_factor=1 turns the outlier check off: the buffer share alone decides."""
        policy = POLICY.model_copy(update={"congestion": CongestionConfig(outlier_factor=1.0, min_age_ms=200)})
        rig = Rig(clock, policy=policy)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        self.fill(rig, {0: 26_000, 1: 28_000, 2: 27_000, 3: 26_500, 4: 27_500, 5: 26_000})
        assert {p for _, p in rig.evaluate()} == {0, 1, 2, 3, 4, 5}


class TestCongestionAge:
    def test_a_pause_shorter_than_the_default_age_mutes_nothing(self, clock: FakeClock) -> None:
        """Default congestion.min_age_ms (1,000): a partition at 30 % of the buffer whose oldest message waited
        0.9 s (a healthy broker's pause under a saturating writer) is not muted; at 1.05 s it is."""
        rig = Rig(clock, policy=POLICY.model_copy(update={"congestion": CongestionConfig()}))
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        # the others drained: only partition 1 still waits
        fill(rig, {0: 1_000, 1: 30_000, 2: 1_200, 3: 900, 4: 1_100, 5: 1_000}, drained=frozenset({0, 2, 3, 4, 5}))
        rig.clock.advance(0.9)
        assert [e for e in rig.events if e.reason == "congestion"] == [] and rig.evaluate() == []
        rig.clock.advance(0.15)
        rig.evaluate()
        assert [e.partition for e in rig.events if e.kind == "mute"] == [1]


class TestAgeOutlierRule:
    @pytest.fixture(autouse=True)
    def _past_its_cold_start(self, rig: Rig) -> None:
        """The topic was first written to longer ago than its cold start (slow_call.cold_start_ms, 5 s)."""
        for p in range(6):
            rig.send(p)
        rig.evaluate()
        for p in range(6):
            rig.settle(p)
        rig.clock.advance(6.0)

    def _traffic(self, rig: Rig, lagging: dict[int, float]) -> list[tuple[str, int]]:
        """Every partition got messages (after one warm report each); all but ``lagging`` delivered them 50 ms
        later, those hold one of the given age."""
        for p in range(6):
            rig.mgr.rounds.record(T, p, Delivery(ok=True, latency_s=0.01, now=rig.clock()))
            rig.send(p)
        rig.evaluate()  # the manager sees every partition active
        rig.clock.advance(0.05)
        for p in range(6):
            if p not in lagging:
                rig.settle(p)
        oldest = max(lagging.values(), default=0.0)
        rig.clock.advance(max(oldest, 0.05) - 0.05)
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

    def test_in_the_topics_cold_start_a_second_deep_episode_only_steers(self, clock: FakeClock) -> None:
        """The same two deep episodes within the topic's first 5 s of being written to: its brokers are creating
        its logs then; avoided, not muted."""
        rig = Rig(clock)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        self._traffic(rig, {1: 0.5, 4: 0.5})
        self._episode_ends(rig, 1, 4)
        assert self._traffic(rig, {1: 0.5, 4: 0.5}) == []
        snap = rig.mgr.snapshot(T)
        assert snap is not None and snap.avoided == frozenset({1, 4, 5})

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
            rig.clock.advance(0.05)
            for p in (0, 2, 3):
                rig.settle(p)
            rig.clock.advance(0.45)
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
        assert rig.mgr.probes.probing(T) == frozenset({2})
        rig.mgr.probes.probe_result(T, 2, True, 0.1)
        assert rig.state_of(2) == "half_open"
        rig.mgr.probes.probe_result(T, 2, True, 0.5)
        assert rig.kinds(2)[-1] == "remute"


class TestRecovery:
    def test_open_until_retry_interval(self, rig: Rig) -> None:
        """Until retry_interval_ms has passed the partition stays open and nothing probes."""
        rig.stall(2)
        rig.settle(2)
        rig.clock.advance(4.9)
        rig.evaluate()
        assert rig.state_of(2) == "open"
        assert rig.mgr.probes.probing(T) == frozenset()
        assert rig.mgr.probes.try_probe(T, 2) is False

    def test_half_open_after_retry_interval(self, rig: Rig) -> None:
        """After retry_interval_ms the partition is half-open: still muted, listed by probing()."""
        to_half_open(rig, 2)
        assert rig.state_of(2) == "half_open"
        assert rig.mgr.is_muted(T, 2)
        assert rig.kinds(2) == ["mute", "probe"]

    def test_try_probe_grants_half_open_probes(self, rig: Rig) -> None:
        """try_probe grants exactly half_open_probes (2) slots; closed and unknown partitions grant none."""
        to_half_open(rig, 2)
        assert rig.mgr.probes.try_probe(T, 2)
        rig.clock.advance(0.25)  # breaker.probe_spacing_ms
        assert [rig.mgr.probes.try_probe(T, 2) for _ in range(2)] == [True, False]
        assert rig.mgr.probes.try_probe(T, 0) is False
        assert rig.mgr.probes.try_probe(T, 42) is False
        assert rig.mgr.probes.try_probe("other", 0) is False

    def test_probe_wait_is_the_soonest_probe_of_the_topic(self, rig: Rig) -> None:
        """probe_wait(topic): inf with nothing half-open (or an unknown topic); 0 while a half-open partition can
        take a probe now; after one, the rest of probe_spacing_ms."""
        assert rig.mgr.probes.probe_wait(T) == math.inf and rig.mgr.probes.probe_wait("other") == math.inf
        to_half_open(rig, 2)
        assert rig.mgr.probes.probe_wait(T) == 0.0 and rig.mgr.probes.try_probe(T, 2)
        rig.clock.advance(0.1)
        assert rig.mgr.probes.probe_wait(T) == pytest.approx(0.15)

    def test_successful_probes_unmute(self, rig: Rig) -> None:
        """Two successful probes close the breaker: writable again, an unmute event, nothing probing."""
        to_half_open(rig, 2)
        rig.mgr.probes.try_probe(T, 2)
        rig.mgr.probes.try_probe(T, 2)
        rig.mgr.probes.probe_result(T, 2, True)
        assert rig.mgr.is_muted(T, 2)
        rig.mgr.probes.probe_result(T, 2, True)
        snap = rig.mgr.snapshot(T)
        assert snap is not None and snap.writable == tuple(range(6))
        assert rig.mgr.probes.probing(T) == frozenset()
        assert rig.kinds(2) == ["mute", "probe", "unmute"]
        assert rig.state_of(2) == "closed"

    def test_unmute_resets_detectors(self, clock: FakeClock) -> None:
        """Closing after probes gives the partition fresh detector windows."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        dets.made[1].verdict = Verdict("fake")
        rig.evaluate()
        dets.made[1].verdict = None
        clock.advance(5.0)
        rig.evaluate()
        rig.mgr.probes.try_probe(T, 1)
        rig.mgr.probes.try_probe(T, 1)
        rig.mgr.probes.probe_result(T, 1, True)
        rig.mgr.probes.probe_result(T, 1, True)
        assert dets.made[1].resets == 1
        assert dets.made[0].resets == 0

    def test_failed_probe_remutes_with_backoff(self, rig: Rig) -> None:
        """A failed probe re-opens (remute) and the next retry waits 2 x 5 s = 10 s."""
        to_half_open(rig, 2)
        assert rig.mgr.probes.try_probe(T, 2)
        rig.mgr.probes.probe_result(T, 2, False)
        assert rig.kinds(2) == ["mute", "probe", "remute"]
        assert rig.events[-1].reason == "slow_call"  # the verdict that opened it is kept
        assert rig.mgr.state()["topics"][T][2]["opens"] == 2
        rig.clock.advance(5.0)
        rig.evaluate()
        assert rig.state_of(2) == "open"
        rig.clock.advance(5.0)
        rig.evaluate()
        assert rig.state_of(2) == "half_open"

    def test_late_probe_result_ignored(self, rig: Rig) -> None:
        """A probe result for a partition that is not half-open (or unknown) changes nothing."""
        rig.mgr.probes.probe_result(T, 0, False)
        rig.mgr.probes.probe_result(T, 77, True)
        assert rig.events == []
        assert rig.state_of(0) == "closed"


# -- shared state ------------------------------------------------------------------------------------------

StoreFactory = Callable[[], BreakerStore]  # what the `stores` fixture (tests/unit/conftest.py) yields


@pytest.fixture
def pair(clock: FakeClock, stores: StoreFactory) -> tuple[Rig, Rig]:
    """Two managers (two producers, e.g. two Spark executors) sharing breaker state."""
    a, b = Rig(clock, store=stores()), Rig(clock, store=stores())
    a.mgr.rounds.ensure_topic(T, 6, LEADERS)
    b.mgr.rounds.ensure_topic(T, 6, LEADERS)
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
        assert a.mgr.probes.probing(T) == b.mgr.probes.probing(T) == frozenset({2})
        a.mgr.probes.try_probe(T, 2)
        a.mgr.probes.try_probe(T, 2)
        a.mgr.probes.probe_result(T, 2, True)
        a.mgr.probes.probe_result(T, 2, True)
        clock.advance(SYNC_S)
        b.evaluate()
        assert not a.mgr.is_muted(T, 2)
        assert not b.mgr.is_muted(T, 2)

    def test_late_joiner_starts_muted(self, clock: FakeClock, stores: StoreFactory) -> None:
        """A manager that first sees the topic after A muted a partition starts with it muted."""
        a = Rig(clock, store=stores())
        a.mgr.rounds.ensure_topic(T, 6, LEADERS)
        a.stall(4)
        late = Rig(clock, store=stores())
        late.mgr.rounds.ensure_topic(T, 6, LEADERS)
        snap = late.mgr.snapshot(T)
        assert snap is not None
        assert (snap.partition_count, snap.muted) == (6, frozenset({4}))


class TestCounts:
    def test_counts_read_zero_without_a_source(self, rig: Rig) -> None:
        assert (rig.mgr.outstanding(T, 0), rig.mgr.accumulated(T, 0), rig.mgr.in_flight(T, 0)) == (0, 0, 0)

    def test_counts_are_the_producers_given_at_construction(self) -> None:
        """KIP-693's accumulated / in-flight questions are answered by the counters the producer hands over."""
        mgr = ProducerMuteManager(
            lambda t: TopicPolicy(), counts=QueueCounts(lambda t, p: 7, lambda t, p: 5, lambda t, p: 2 + p)
        )
        assert (mgr.outstanding(T, 0), mgr.accumulated(T, 0), mgr.in_flight(T, 3)) == (7, 5, 5)
