"""The broker rule (through a manager), the per-broker evidence of a round, and which broker a partition waits on
(mutepro.mute.brokers)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mutepro.detect.model import MuteReason, Verdict
from mutepro.detect.stats import StatsSnapshot
from mutepro.mute.brokers import (
    BrokerJudge,
    acks_wait_for_isr,
    blamed_broker,
    own_evidence_by_leader,
    shown_by_leader,
    waits_for_others,
    waits_on,
    written_by_leader,
)
from mutepro.mute.records import TopicRecord
from mutepro.mute.transitions import BreakerState
from mutepro.policy.schema import BrokerConfig
from tests.unit.detect.test_broker import broker as stats_broker
from tests.unit.detect.test_broker import snapshot
from tests.unit.mute._rig import LEADERS, POLICY, FakeClock, Rig, T
from tests.unit.mute._rules import SLOW, StubBreaker, topic


class TestOwnEvidenceByLeader:
    def test_counts_open_partitions_per_leader(self) -> None:
        """Open breakers with their own verdict count against their leader."""
        t = topic()
        for p in (0, 3, 1):
            t.partitions[p].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        assert own_evidence_by_leader([t]) == {1: 2, 2: 1}

    def test_a_partition_that_waited_on_a_follower_is_no_evidence_against_its_leader(self) -> None:
        """Partition 0 (led by 1) muted waiting on its follower, broker 2: not counted against broker 1 (nor
        against broker 2's own partitions); partition 3 (led by 1) waited on its leader and counts."""
        t = topic()
        named = Verdict(MuteReason.SLOW_CALL, {"waits_on": "replica", "waits_on_broker": 2})
        own = Verdict(MuteReason.SLOW_CALL, {"waits_on": "leader", "waits_on_broker": 1})
        t.partitions[0].breaker = StubBreaker(BreakerState.OPEN, named)  # type: ignore[assignment]
        t.partitions[3].breaker = StubBreaker(BreakerState.OPEN, own)  # type: ignore[assignment]
        t.partitions[1].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        assert own_evidence_by_leader([t]) == {1: 1, 2: 1}
        assert blamed_broker(None, 3) == 3 and blamed_broker(named, 1) is None and blamed_broker(own, 1) == 1

    def test_broker_verdicts_half_open_and_unknown_leaders_do_not_count(self) -> None:
        """Muted by the broker rule itself, on probation, or leaderless: no evidence."""
        t = topic()
        t.partitions[0].breaker = StubBreaker(BreakerState.OPEN, Verdict(MuteReason.BROKER))  # type: ignore[assignment]
        t.partitions[3].breaker = StubBreaker(BreakerState.HALF_OPEN, SLOW)  # type: ignore[assignment]
        t.partitions[6].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        t.partitions[6].leader = -1
        assert own_evidence_by_leader([t]) == {}


class TestShownByLeader:
    """What the broker rule's share counts per leader: every partition written to of a broker that delivered within
    slow_call.threshold_ms (1 s); of a silent broker, only its partitions muted by their own evidence."""

    def test_an_answering_broker_counts_every_partition_written(self) -> None:
        """Brokers 1 and 2 delivered 0.5 s ago: their partitions written to (0, 3 and 1, 4, 7) count, not the
        unwritten ones (6 of broker 1, 10 of broker 2)."""
        t = topic()
        for p in (0, 3, 1, 4, 7):
            t.partitions[p].active_at = 90.0
        t.partitions[0].delivered_at = t.partitions[1].delivered_at = 99.5
        assert shown_by_leader([t], {1: 1, 2: 2}, now=100.0) == {1: 2, 2: 3}

    def test_a_silent_broker_is_judged_on_its_bad_partitions_alone(self) -> None:
        """Broker 2 last delivered 2 s ago: of its 400 partitions written, only its 2 muted ones count, and 2 is
        enough (25 % of 2); brokers 1 and 3 deliver and count all 400 each."""
        t = topic(partitions=1200)
        for part in t.partitions.values():
            part.active_at = 50.0
            part.delivered_at = 98.0 if part.leader == 2 else 99.8
        shown = shown_by_leader([t], {2: 2}, now=100.0)
        assert shown == {1: 400, 2: 2, 3: 400}
        judge = BrokerJudge(BrokerConfig())
        assert judge._detector is not None and judge._detector.bad_partitions_needed(shown[2]) == 2

    def test_written_counts_partitions_sent_to_or_muted(self) -> None:
        """Partitions with traffic (active_at set) or not closed count for their leader; idle closed ones do not."""
        t = topic()
        for p in (0, 3, 1):
            t.partitions[p].active_at = 1.0
        t.partitions[4].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        assert written_by_leader([t]) == {1: 2, 2: 2}


class TestWaitsOn:
    def _five_brokers(self) -> TopicRecord:
        """20 partitions on brokers 1-5, RF 3: partition p on (p % 5 + 1, (p + 1) % 5 + 1, (p + 2) % 5 + 1)."""
        t = topic(partitions=20, leaders=5)
        t.replicas = {p: (p % 5 + 1, (p + 1) % 5 + 1, (p + 2) % 5 + 1) for p in range(20)}
        return t

    def test_a_stopped_follower_is_named_as_a_replica(self) -> None:
        """Broker 4 stopped: the 12 partitions with a replica on it wait; partition 1 (led by 2) waits on 4."""
        t = self._five_brokers()
        waiting = {p for p, reps in t.replicas.items() if 4 in reps}
        assert len(waiting) == 12
        assert waits_on(t, 1, waiting, range(20)) == ("replica", 4)

    def test_a_stopped_leader_is_named_as_the_leader(self) -> None:
        """With acks=1 only broker 4's own partitions wait: they wait on their leader."""
        t = self._five_brokers()
        waiting = {p for p in range(20) if t.partitions[p].leader == 4}
        assert waits_on(t, 3, waiting, range(20)) == ("leader", 4)

    def test_a_replica_out_of_sync_is_not_waited_on(self) -> None:
        """Partition 2 (replicas 3, 4, 5) with broker 4 out of its ISR: acks=all no longer waits for broker 4."""
        t = self._five_brokers()
        waiting = {p for p, reps in t.replicas.items() if 4 in reps}
        assert waits_on(t, 2, waiting, range(20)) == ("replica", 4)
        t.isrs = {2: (3, 5)}
        assert waits_on(t, 2, waiting, range(20))[1] != 4

    def test_a_broker_that_answered_meanwhile_is_not_the_cause(self) -> None:
        """RF 3 on 3 brokers, every partition waiting: replica sets cannot tell the brokers apart (a tie, broken
        towards the leader). Brokers 1 and 3 delivered after the partition's oldest message was sent (at 10.0):
        partition 0, led by broker 1, waits on broker 2, a replica."""
        t = topic()
        t.replicas = {p: (p % 3 + 1, (p + 1) % 3 + 1, (p + 2) % 3 + 1) for p in range(12)}
        assert waits_on(t, 0, set(range(12)), range(12)) == ("leader", 1)
        assert waits_on(t, 0, set(range(12)), range(12), 10.0, {1: 10.5, 2: 9.0, 3: 10.2}) == ("replica", 2)
        assert waits_on(t, 0, set(range(12)), range(12), 10.0, {1: 10.5, 2: 10.1, 3: 10.2}) == ("leader", 1)

    def test_without_replicas_it_is_the_leader(self) -> None:
        t = topic()
        assert waits_on(t, 2, {2}, range(12)) == ("leader", 3)

    def test_with_acks_1_a_write_waits_on_its_leader_alone(self) -> None:
        """The same stopped follower as above, but the producer's acks=1: its writes never wait for broker 4."""
        t = self._five_brokers()
        t.acks_all = False
        waiting = {p for p, reps in t.replicas.items() if 4 in reps}
        assert waits_on(t, 1, waiting, range(20)) == ("leader", 2)
        assert not waits_for_others(t, 1)


class TestAcks:
    def test_which_settings_wait_for_the_in_sync_replicas(self) -> None:
        """acks=all / -1 and librdkafka's default (not set) wait for every in-sync replica; 1 and 0 do not."""
        assert all(acks_wait_for_isr(v) for v in (None, "all", "ALL", "-1", -1))
        assert not any(acks_wait_for_isr(v) for v in ("1", 1, "0", 0))

    def test_a_write_waits_for_others_only_with_another_replica_in_sync(self) -> None:
        t = topic()
        assert not waits_for_others(t, 0)  # no replicas known: the leader alone (RF 1)
        t.replicas[0] = (1, 2, 3)
        assert waits_for_others(t, 0)
        t.isrs[0] = (1,)
        assert not waits_for_others(t, 0)


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
        rig.stall(0, 1, meanwhile=(2,))
        assert rig.mgr.muted_brokers() == {}
        assert rig.mgr.muted_partitions() == {T: [0, 1]}

    def test_stalls_of_two_brokers_with_no_one_answering_mute_nothing(self, rig: Rig) -> None:
        """The same stalls with no broker delivering anything meanwhile (RF 3, acks=all, one follower stalled:
        every partition waits for it): nothing says the producer would be served elsewhere, nothing is muted."""
        assert rig.stall(0, 1) == []
        assert rig.mgr.muted_partitions() == {}

    def test_partition_moving_onto_bad_broker_is_muted(self, rig: Rig) -> None:
        """A closed partition whose leadership moves onto a muted broker is muted at the next evaluate."""
        rig.stall(1, 4)
        rig.mgr.rounds.update_leaders(T, {0: 2})
        assert rig.evaluate() == [(T, 0)]
        assert rig.mgr.is_muted(T, 0)

    def test_broker_disabled(self, clock: FakeClock) -> None:
        """With broker.enabled false, two bad partitions of one broker mute only themselves."""
        policy = POLICY.model_copy(update={"broker": POLICY.broker.model_copy(update={"enabled": False})})
        rig = Rig(clock, policy=policy)
        rig.mgr.rounds.ensure_topic(T, 6, LEADERS)
        rig.stall(1, 4)
        assert rig.mgr.muted_brokers() == {}
        assert rig.mgr.muted_partitions() == {T: [1, 4]}


class TestBrokerSettings:
    """broker.down_grace_ms and the latency hold reach the detector from the policy."""

    def test_down_grace_is_the_policy_setting(self) -> None:
        """Broker 2 down in librdkafka's statistics: with down_grace_ms 500 its partitions are muted 0.5 s on,
        with the default 2000 not yet."""
        stats = snapshot([stats_broker(1), stats_broker(2, state="DOWN"), stats_broker(3)], {1: 2, 0: 1, 2: 3})
        for grace_ms, muted in ((2000, []), (500, [1, 4, 7, 10])):
            t = topic()
            judge = BrokerJudge(BrokerConfig(down_grace_ms=grace_ms))
            assert list(judge.judge([t], stats, 10.0)) == []
            assert sorted(c[1].partition for c in judge.judge([t], stats, 10.5)) == muted

    def test_hold_longer_than_its_maximum_names_the_field(self) -> None:
        with pytest.raises(ValidationError, match="latency_hold_ms"):
            BrokerConfig(latency_hold_ms=90_000)


class TestInferredVerdicts:
    """A broker verdict that rests on no fresh look at a partition does not outweigh that partition's probes."""

    def test_a_latency_verdict_spares_partitions_probed_since_its_emission(self) -> None:
        """Broker 2's rtt p99 is 800 ms against 20 ms twice (caught at 11 s, held 5 s). Partitions 1 and 4 passed
        their probes at 12 s, after that emission: spared, both while the same emission is re-judged (12.05 s) and
        once it is held because broker 2 has no round trips left (13 s). Partition 7 closed at 10.5 s and 10 was
        never muted: muted again."""
        t = topic()
        judge = BrokerJudge(BrokerConfig())

        def emission(p99: float, samples: int = 10) -> StatsSnapshot:
            brokers = [stats_broker(1, p99=20.0), stats_broker(2, p99=p99, samples=samples), stats_broker(3, p99=20.0)]
            return snapshot(brokers, {0: 1, 1: 2, 2: 3})

        assert list(judge.judge([t], emission(800.0), 10.0)) == []  # one slow emission: not yet
        slow = emission(800.0)
        assert sorted(c[1].partition for c in judge.judge([t], slow, 11.0)) == [1, 4, 7, 10]
        t.partitions[1].closed_at = t.partitions[4].closed_at = 12.0
        # the same emission a round later (no new one yet): the verdict rests on 11 s evidence
        again = list(judge.judge([t], slow, 12.05))
        assert again[0][2].detail["evidence_age_s"] == 1.05
        assert sorted(c[1].partition for c in again) == [7, 10]
        t.partitions[7].closed_at = 10.5
        held = list(judge.judge([t], emission(0.0, samples=0), 13.0))
        assert held and "held_until_s" in held[0][2].detail
        assert sorted(c[1].partition for c in held) == [7, 10]
