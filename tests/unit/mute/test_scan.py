"""One detection round over one topic (mutepro.mute.scan.scan_topic), on topic records with stub breakers and
detectors: every breaker ticked, each closed partition's load read and judged by its own detectors, idle and
quiet partitions left alone, and a half-open partition whose messages outwait the probe limit failing its probe.
(The topic-wide rules it applies: test_verdicts.py, test_outliers.py, test_normal.py; the whole manager:
test_manager.py.)"""

from __future__ import annotations

from dataclasses import dataclass, field

from mutepro.detect.model import PartitionLoad, Verdict
from mutepro.mute.records import PartitionRecord, TopicRecord
from mutepro.mute.scan import scan_topic
from mutepro.mute.transitions import BreakerState
from mutepro.policy.runtime import runtime_of
from mutepro.policy.schema import TopicPolicy
from tests.unit.mute._rig import LEADERS, FakeClock, FakeDetectors, Rig, T, to_half_open
from tests.unit.mute._rules import FAILING

NOW = 1000.0
#: how often an idle partition is judged, and for how long a written one is active: slow_call.threshold_ms (1 s)
QUIET_REJUDGE_S = runtime_of(TopicPolicy()).active_s


@dataclass
class _Breaker:
    state: BreakerState = BreakerState.CLOSED
    probing_since: float | None = None
    ticks: int = 0
    rejoined: bool = False

    def tick(self) -> None:
        self.ticks += 1


@dataclass
class _Detector:
    verdict: Verdict | None = None
    checked: list[PartitionLoad] = field(default_factory=list)

    def check(self, load: PartitionLoad, now: float) -> Verdict | None:
        self.checked.append(load)
        return self.verdict


class _Loads:
    """The load reader: every partition ``outstanding`` messages, the oldest ``age`` s old; the reads recorded."""

    def __init__(self, outstanding: int = 1, age: float = 0.01) -> None:
        self.outstanding, self.age = outstanding, age
        self.reads: list[int] = []
        self.by_partition: dict[int, tuple[int, float | None]] = {}

    def __call__(self, topic: str, partition: int, now: float) -> PartitionLoad:
        self.reads.append(partition)
        outstanding, age = self.by_partition.get(partition, (self.outstanding, self.age))
        return PartitionLoad(outstanding, 100 * outstanding, age if outstanding else None, 100_000, 10**8,
                             sent=10 + outstanding, warm=True)


class _ColdLoads(_Loads):
    """Partitions in ``never_delivered`` hold 5 messages 1.2 s old and have delivered none (cold); the others
    delivered 10 and hold one."""

    def __init__(self, never_delivered: set[int]) -> None:
        super().__init__()
        self.never_delivered = never_delivered

    def __call__(self, topic: str, partition: int, now: float) -> PartitionLoad:
        if partition not in self.never_delivered:
            return super().__call__(topic, partition, now)
        self.reads.append(partition)
        return PartitionLoad(5, 500, 1.2, 100_000, 10**8, sent=5, warm=False)


def _topic(
    partitions: int = 6, policy: TopicPolicy | None = None,
) -> tuple[TopicRecord, list[_Breaker], list[_Detector]]:
    t = TopicRecord("t", policy or TopicPolicy())
    breakers, detectors = [], []
    for p in range(partitions):
        breaker, detector = _Breaker(), _Detector()
        part = PartitionRecord(p, breaker, [detector])  # type: ignore[arg-type, list-item]  # stubs
        part.leader = p % 3 + 1
        part.reported_ever = True
        t.partitions[p] = part
        breakers.append(breaker)
        detectors.append(detector)
    return t, breakers, detectors


class TestScanTopic:
    def test_every_breaker_is_ticked_and_every_closed_partition_judged(self) -> None:
        t, breakers, detectors = _topic()
        loads = _Loads()
        scan = scan_topic(t, loads, NOW)
        assert [b.ticks for b in breakers] == [1] * 6
        assert sorted(loads.reads) == list(range(6))
        assert all(len(d.checked) == 1 for d in detectors)
        assert scan.trips == [] and scan.failed_probes == []

    def test_a_partitions_own_verdict_is_a_trip(self) -> None:
        """Partition 2's detector says failing, the others nothing: one trip, partition 2, with its verdict."""
        t, _, detectors = _topic()
        detectors[2].verdict = FAILING
        scan = scan_topic(t, _Loads(), NOW)
        assert [(part.partition, verdict.reason) for _, part, verdict in scan.trips] == [(2, FAILING.reason)]

    def test_a_partition_never_delivered_is_judged_warm_when_its_leader_delivered_another(self) -> None:
        """Partition 1 (leader 2) has delivered nothing, its 5 messages 1.2 s old; partition 4 (leader 2 too)
        delivered: partition 1's detectors see it warm (TopicRecord.warm). Leader 3's partitions see theirs."""
        t, _, detectors = _topic()
        cold = _ColdLoads(never_delivered={1, 2})
        scan_topic(t, cold, NOW)  # partition 4 delivered: leader 2 is warm; leader 3 (partitions 2, 5)...
        assert detectors[1].checked[-1].warm is False  # ... judged before partition 4 was read
        assert 2 in t.warm_leaders
        scan_topic(t, cold, NOW + 1.5)
        assert detectors[1].checked[-1].warm is True
        assert detectors[2].checked[-1].warm is True  # leader 3: partition 5 delivered

    def test_a_partition_whose_leader_delivered_nothing_stays_cold(self) -> None:
        t, _, detectors = _topic()
        cold = _ColdLoads(never_delivered={1, 4})  # every partition broker 2 leads
        scan_topic(t, cold, NOW)
        scan_topic(t, cold, NOW + 1.5)
        assert [d.checked[-1].warm for d in (detectors[1], detectors[4])] == [False, False]
        assert 2 not in t.warm_leaders

    def test_open_partitions_are_not_read_or_judged(self) -> None:
        t, breakers, detectors = _topic()
        breakers[4].state = BreakerState.OPEN
        loads = _Loads()
        scan_topic(t, loads, NOW)
        assert 4 not in loads.reads and detectors[4].checked == [] and breakers[4].ticks == 1
        assert t.not_closed == {4}

    def test_an_idle_partition_outside_busy_is_left_alone_until_its_quiet_round(self) -> None:
        """Judged at NOW with nothing outstanding: not looked at again inside QUIET_REJUDGE_S when not busy."""
        t, breakers, detectors = _topic(3)
        loads = _Loads(outstanding=0)
        scan_topic(t, loads, NOW)
        t.partitions[1].active_at = NOW - 100.0  # idle for longer than active_s
        loads.reads.clear()
        scan_topic(t, loads, NOW + QUIET_REJUDGE_S / 2, busy=frozenset({0, 2}))
        assert sorted(loads.reads) == [0, 2] and breakers[1].ticks == 1
        scan_topic(t, loads, NOW + QUIET_REJUDGE_S + 0.1, busy=frozenset({0, 2}))
        assert breakers[1].ticks == 2 and len(detectors[1].checked) == 2  # its quiet round came

    def test_written_lately_counts_back_from_the_last_write(self) -> None:
        """Six partitions each holding one 10 ms-old message, none written for 2 s (a producer blocked on its full
        queue): they stay the round's peers, so none waits beyond normal. Counted from now they would all be
        inactive, with no normal to compare with, and every one holding a message would count as waiting."""
        t, _, _ = _topic(6)
        loads = _Loads(outstanding=1, age=0.01)
        scan_topic(t, loads, NOW)
        assert t.last_write_at == NOW
        scan_topic(t, loads, NOW + 2.0)
        assert t.last_write_at == NOW and t.waiting == frozenset()
        t.last_write_at = NOW + 2.0  # as if counted from now
        scan_topic(t, loads, NOW + 2.0)
        assert t.waiting == frozenset(range(6))

    def test_a_partition_written_lately_with_nothing_new_is_not_read_again_and_decides_the_same(self) -> None:
        """Six partitions each held a 0.2 s-old message at NOW, delivered by NOW + 0.05; at NOW + 0.1 only partition
        0 is busy (a 0.3 s-old message). The round reads only partition 0, and what it concludes -- waiting
        partitions, recent peaks, verdicts -- is what it concludes reading all six: the other five are still the
        peers partition 0 is compared with, their recent peaks 0.2 s, so 0.3 s is within normal (5 x 0.2 s)."""
        outcomes = []
        for busy in (frozenset({0}), None):
            t, _, detectors = _topic(6)
            loads = _Loads(outstanding=1, age=0.2)
            scan_topic(t, loads, NOW)
            loads.outstanding = 0
            scan_topic(t, loads, NOW + 0.05)
            loads.reads.clear()
            loads.by_partition[0] = (1, 0.3)
            scan = scan_topic(t, loads, NOW + 0.1, busy=busy)
            assert sorted(loads.reads) == ([0] if busy is not None else list(range(6)))
            outcomes.append((
                t.waiting, [part.peak_since(NOW - 1.0) for part in t.partitions.values()],
                [len(d.checked) for d in detectors], scan.trips, t.last_write_at,
            ))
        assert outcomes[0] == outcomes[1]
        assert outcomes[0][0] == frozenset()  # without its peers, partition 0 would count as waiting

    def test_the_quiet_interval_is_the_slow_threshold(self) -> None:
        """slow_call.threshold_ms 300: an idle partition judged at NOW is judged again 0.35 s later, not 0.25 s."""
        t, breakers, _ = _topic(3, TopicPolicy.model_validate({"slow_call": {"threshold_ms": 300}}))
        loads = _Loads(outstanding=0)
        scan_topic(t, loads, NOW)
        t.partitions[1].active_at = NOW - 100.0
        scan_topic(t, loads, NOW + 0.25, busy=frozenset({0, 2}))
        assert breakers[1].ticks == 1
        scan_topic(t, loads, NOW + 0.35, busy=frozenset({0, 2}))
        assert breakers[1].ticks == 2

    def test_a_quiet_partition_is_read_but_not_rejudged_within_the_quiet_interval(self) -> None:
        t, _, detectors = _topic(3)
        loads = _Loads(outstanding=0)
        scan_topic(t, loads, NOW)
        scan_topic(t, loads, NOW + QUIET_REJUDGE_S / 2)
        assert [len(d.checked) for d in detectors] == [1, 1, 1]
        assert loads.reads.count(0) == 2

    def test_a_half_open_partition_with_a_message_past_the_probe_limit_fails_its_probe(self) -> None:
        """Probing since 5 s, its oldest message 3 s old: past the 1 s slow-call threshold -> a failed probe;
        another probing partition whose oldest is 0.01 s old passes."""
        t, breakers, _ = _topic()
        for p in (1, 3):
            breakers[p].state, breakers[p].probing_since = BreakerState.HALF_OPEN, NOW - 5.0
        loads = _Loads()
        loads.by_partition[1] = (1, 3.0)
        scan = scan_topic(t, loads, NOW)
        assert scan.failed_probes == [1]
        assert t.partitions[1].awaiting is False  # sent after probing began (3 s < 5 s)
        assert t.probe_limit_s <= 1.0

    def test_a_message_sent_before_probing_began_is_awaited(self) -> None:
        """Probing since 0.1 s, its oldest message 2 s old: awaited (no probe offered), and its wait counts from
        when probing began (0.1 s, inside the limit), not from the send: no failed probe."""
        t, breakers, _ = _topic()
        breakers[0].state, breakers[0].probing_since = BreakerState.HALF_OPEN, NOW - 0.1
        loads = _Loads()
        loads.by_partition[0] = (1, 2.0)
        scan = scan_topic(t, loads, NOW)
        assert t.partitions[0].awaiting is True
        assert t.probe_limit_s > 0.1 and scan.failed_probes == []


    def test_a_rejoined_partition_is_held_to_the_slow_threshold(self) -> None:
        """Partitions 0 and 3 probing for 0.6 s, each holding a message sent since: past the round's probe limit
        (peers at 10 ms), so partition 0 fails its probe; partition 3, whose leader was just elected again, is held
        to the 1 s slow threshold and does not."""
        t, breakers, _ = _topic()
        for p in (0, 3):
            breakers[p].state, breakers[p].probing_since = BreakerState.HALF_OPEN, NOW - 0.6
        breakers[3].rejoined = True
        loads = _Loads()
        loads.by_partition[0] = loads.by_partition[3] = (1, 0.6)
        scan = scan_topic(t, loads, NOW)
        assert t.probe_limit_s < 0.6 and scan.failed_probes == [0]


class TestThroughTheManager:
    """The same round as the manager runs it, on its own tracker (see _rig.py)."""

    def test_idle_partitions_wait_for_their_quiet_round(self, clock: FakeClock) -> None:
        """With the tracker's busy partitions given, an idle one is judged once a second, a busy one every round."""
        dets = FakeDetectors()
        rig = Rig(clock, detector_factory=dets)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)

        def round_() -> None:
            rig.tracker.checkpoint(clock())
            rig.mgr.rounds.evaluate(rig.tracker.load, None, rig.tracker.busy)

        round_()  # every partition judged once
        assert [len(d.checks) for d in dets.made] == [1] * 6
        rig.send(3)
        clock.advance(0.05)
        round_()
        assert [len(d.checks) for d in dets.made] == [1, 1, 1, 2, 1, 1]  # only 3 (busy) looked at
        clock.advance(QUIET_REJUDGE_S)
        round_()
        assert [len(d.checks) for d in dets.made] == [2, 2, 2, 3, 2, 2]  # the quiet round

    def test_half_open_with_old_outstanding_message_reopens(self, rig: Rig) -> None:
        """Half-open with a message still outstanding a slow threshold after probing began re-opens with backoff;
        its wait counts from then, not from its send: what it waited before is what muted the partition."""
        assert rig.stall(2) == [(T, 2)]
        rig.clock.advance(5.0)  # the stuck message is now 6.5 s old; it never settled
        assert rig.evaluate() == []
        assert rig.kinds(2) == ["mute", "probe"]  # probing began just now: nothing to hold against it yet
        rig.clock.advance(1.1)  # past the 1 s threshold since probing began
        assert rig.evaluate() == []
        assert rig.kinds(2) == ["mute", "probe", "remute"]
        assert rig.state_of(2) == "open"
        assert rig.mgr.probes.probing(T) == frozenset()
        assert rig.mgr.state()["topics"][T][2]["opens"] == 2

    def test_half_open_with_young_message_stays(self, rig: Rig) -> None:
        """A probe in flight for less than the slow threshold does not re-open the partition."""
        to_half_open(rig, 2)
        assert rig.mgr.probes.try_probe(T, 2)
        rig.send(2)
        rig.clock.advance(0.5)
        rig.evaluate()
        assert rig.state_of(2) == "half_open"
