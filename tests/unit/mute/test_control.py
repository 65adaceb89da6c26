"""Mute decisions applied to the records: leader moves and manual control (mutepro.mute.control)."""

from __future__ import annotations

import pytest

from mutepro.detect.model import Delivery
from mutepro.errors import ConfigError
from tests.unit.mute._rig import Rig, T, to_half_open


class TestLeaderMove:
    def test_move_to_healthy_broker_unmutes(self, rig: Rig) -> None:
        """Leadership moving from the muted partition's broker to a healthy one unmutes it at once."""
        rig.stall(2)
        rig.settle(2)
        rig.mgr.rounds.update_leaders(T, {2: 1})
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
        rig.mgr.rounds.update_leaders(T, {2: 1})
        assert rig.kinds(2) == ["mute", "unmute"]
        assert rig.evaluate() == []
        assert rig.state_of(2) == "closed"
        assert rig.mgr.state()["topics"][T][2]["opens"] == 0

    def test_moved_partition_can_mute_again(self, rig: Rig) -> None:
        """After a leader-move unmute the partition has working detectors: a new stall mutes it again."""
        rig.stall(2)
        rig.settle(2)
        rig.mgr.rounds.update_leaders(T, {2: 1})
        assert rig.stall(2) == [(T, 2)]
        assert rig.events[-1].broker == 1

    def test_in_flight_to_old_leader_does_not_remute(self, rig: Rig) -> None:
        """Messages still in flight to the old (stalled) leader do not re-mute the partition on its new leader."""
        rig.stall(2)  # the message stays outstanding: librdkafka waits for the stalled broker's response
        rig.mgr.rounds.update_leaders(T, {2: 1})
        rig.clock.advance(0.5)
        assert rig.evaluate() == []
        rig.clock.advance(10.0)
        assert rig.evaluate() == []
        assert not rig.mgr.is_muted(T, 2)
        assert rig.kinds(2) == ["mute", "unmute"]

    def test_new_leader_stalling_remutes(self, rig: Rig) -> None:
        """A message sent to the new leader after the move and stuck past the threshold mutes it again."""
        rig.stall(2)
        rig.mgr.rounds.update_leaders(T, {2: 1})
        assert rig.stall(2) == [(T, 2)]
        e = rig.events[-1]
        assert (e.kind, e.broker, e.detail["stuck"]) == ("mute", 1, 1)

    def test_old_messages_count_again_after_they_settle(self, rig: Rig) -> None:
        """Once the pre-move messages have their reports, the partition is judged on everything again."""
        rig.stall(2)
        rig.mgr.rounds.update_leaders(T, {2: 1})
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
        rig.mgr.rounds.update_leaders(T, {2: 1})
        assert rig.mgr.probes.probing(T) == frozenset()
        assert not rig.mgr.is_muted(T, 2)
        assert rig.events[-1].detail == {"previous_state": "half_open"}

    def test_move_to_muted_broker_keeps_mute(self, rig: Rig) -> None:
        """A partition moving onto a broker that is itself muted stays muted."""
        rig.stall(1, 4)  # broker 2 muted
        rig.stall(2, meanwhile=(0,))  # broker 3's partition stalls while broker 1 answers: muted
        rig.mgr.rounds.update_leaders(T, {2: 2})
        assert rig.mgr.is_muted(T, 2)
        assert rig.kinds(2) == ["mute"]

    def test_move_of_closed_partition_is_silent(self, rig: Rig) -> None:
        """A leader change on a writable partition only updates the leader."""
        rig.mgr.rounds.update_leaders(T, {0: 3})
        assert rig.mgr.leader(T, 0) == 3
        assert rig.events == []

    def test_a_closed_partition_is_judged_afresh_when_its_leader_moves(self, rig: Rig) -> None:
        """Partitions 0 (broker 1) and 1 (broker 2) each hold a message 1.5 s undelivered; partition 0's leadership
        moved to broker 3 half-way: its wait is the old leader's doing and is not held against broker 3, while
        partition 1, still on its leader, is muted."""
        for p in (0, 1):
            rig.mgr.rounds.record(T, p, Delivery(ok=True, latency_s=0.01, now=rig.clock()))
            rig.send(p)
        rig.clock.advance(0.75)
        rig.mgr.rounds.update_leaders(T, {0: 3})
        rig.clock.advance(0.75)
        assert rig.evaluate() == [(T, 1)]
        assert not rig.mgr.is_muted(T, 0) and rig.kinds(0) == []

    def test_a_message_sent_to_the_new_leader_counts(self, rig: Rig) -> None:
        """After the move, a message sent to the new leader and stuck past the threshold mutes the partition,
        blamed on the new leader."""
        rig.mgr.rounds.record(T, 0, Delivery(ok=True, latency_s=0.01, now=rig.clock()))
        rig.send(0)
        rig.mgr.rounds.update_leaders(T, {0: 3})
        assert rig.stall(0) == [(T, 0)]
        assert rig.events[-1].broker == 3

    def test_manual_mute_survives_move(self, rig: Rig) -> None:
        """A partition muted by hand stays muted whoever leads it."""
        rig.mgr.mute(T, 0)
        rig.mgr.rounds.update_leaders(T, {0: 3})
        assert rig.mgr.is_muted(T, 0)
        assert rig.state_of(0) == "forced_open"

    def test_leaderless_report_keeps_the_last_leader(self, rig: Rig) -> None:
        """A -1 leader (broker down, no other replica) keeps the last known one: a mute is blamed on it."""
        rig.mgr.rounds.ensure_topic(T, 6, {2: -1})
        assert rig.mgr.leader(T, 2) == 3
        rig.stall(2)
        assert rig.events[-1].broker == 3

    def test_move_through_leaderless_still_unmutes(self, rig: Rig) -> None:
        """A move 3 -> -1 -> 1 is a move off the muted leader: the partition gets a fresh chance on 1."""
        rig.stall(2)
        rig.settle(2)
        rig.mgr.rounds.update_leaders(T, {2: -1})
        assert rig.mgr.is_muted(T, 2)
        rig.mgr.rounds.update_leaders(T, {2: 1})
        assert not rig.mgr.is_muted(T, 2)
        assert "3->1" in rig.events[-1].reason

    @pytest.mark.parametrize("leaderless", [True, False], ids=["reelected", "named-again"])
    def test_reelection_of_the_muted_leader_restarts_its_backoff(self, rig: Rig, leaderless: bool) -> None:
        """Muted on broker 3, its first probe failed (the next wait 10 s); leaderless (3 -> -1), then led by 3
        again 2 s later: probed the base 5 s after the election, inside the 10 s. Named leader again without having
        been leaderless, nothing changes: still open then."""
        to_half_open(rig, 2)
        assert rig.mgr.probes.try_probe(T, 2)
        rig.mgr.probes.probe_result(T, 2, False, None)
        assert rig.state_of(2) == "open"
        rig.clock.advance(2.0)
        if leaderless:
            rig.mgr.rounds.update_leaders(T, {2: -1})
        rig.mgr.rounds.update_leaders(T, {2: 3})
        assert rig.state_of(2) == "open" and rig.mgr.leader(T, 2) == 3
        rig.clock.advance(5.0)  # 7 s after the failed probe
        rig.evaluate()
        assert rig.mgr.probes.probing(T) == (frozenset({2}) if leaderless else frozenset())

    def test_unknown_topic_ignored(self, rig: Rig) -> None:
        """update_leaders for a topic the manager does not know does nothing."""
        rig.mgr.rounds.update_leaders("other", {0: 1})
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
        assert rig.mgr.probes.probing(T) == frozenset()

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
        rig.mgr.rounds.update_leaders(T, {0: 2})
        assert rig.mgr.is_muted(T, 0)
        assert rig.evaluate() == [(T, 0)]
        rig.mgr.unmute_broker(2)
        assert rig.mgr.muted_partitions() == {}

    def test_new_topic_on_muted_broker(self, rig: Rig) -> None:
        """A topic first seen after mute_broker(2) has its partitions led by 2 muted from the start."""
        rig.mgr.mute_broker(2)
        rig.mgr.rounds.ensure_topic("payments", 3, {0: 2, 1: 3, 2: 2})
        assert rig.mgr.muted_partitions()["payments"] == [0, 2]

    def test_manual_mute_overrides_detection(self, rig: Rig) -> None:
        """mute() of an open partition makes it forced: it no longer half-opens after the retry interval."""
        rig.stall(2)
        rig.settle(2)
        rig.mgr.mute(T, 2)
        rig.clock.advance(10.0)
        rig.evaluate()
        assert rig.state_of(2) == "forced_open"
