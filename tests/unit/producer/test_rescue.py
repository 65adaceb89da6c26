"""Rescue (mutepro.producer.rescue) driven through MuteProducer on a fake inner producer: the purge and
redispatch of a newly muted partition's queue, the idempotent exception, and re-sends after a timeout."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from tests.unit._producer_fakes import TOPIC, Harness, keys_by_home

HEADER = "x-mutepro-rescued-from"


def _muted_with_queue(h: Harness) -> tuple[int, list[bytes]]:
    """Ten unkeyed messages queued, then the first one's partition muted and one tick: (partition, its values)."""
    for i in range(10):
        h.producer.produce(TOPIC, f"{i}".encode(), on_delivery=h.callback)
    victim = h.fake.sent[0].partition
    queued = h.values(victim)
    h.producer.mute_manager.mute(TOPIC, victim)
    h.tick()
    return victim, queued


class TestRescueOfAMutedPartition:
    def test_unkeyed_messages_move_off_the_muted_partition_in_order(self) -> None:
        """The muted partition's queued unkeyed messages are purged and re-sent elsewhere, in produce order, each
        with the rescue header naming the partition they left."""
        h = Harness()
        victim, queued = _muted_with_queue(h)
        assert h.fake.purges == [(True, False)]
        moved = [s for s in h.fake.pending if (HEADER, str(victim).encode()) in (s.headers or [])]
        assert [s.value for s in moved] == queued and all(s.partition != victim for s in moved)
        assert h.producer.counters.rescued == len(queued) and h.values(victim) == []
        h.fake.deliver()
        assert h.producer.flush(1) == 0 and len(h.reports) == 10 and {c for c, _ in h.reports} == {None}
        h.close()

    def test_messages_of_healthy_partitions_are_resent_where_they_were(self) -> None:
        """The purge takes everything back; messages of partitions that are not muted go back to them, in order."""
        h = Harness()
        for i in range(4):
            h.producer.produce(TOPIC, f"{i}".encode(), partition=0)
        h.producer.produce(TOPIC, b"stuck", partition=3)
        h.producer.mute_manager.mute(TOPIC, 3)
        h.tick()
        assert h.values(0) == [b"0", b"1", b"2", b"3"] and h.producer.counters.requeued == 5
        h.close()

    def test_a_requeue_that_meets_a_full_queue_keeps_the_rest_in_order(self) -> None:
        """librdkafka's queue fills while the purge goes back: what did not fit is sent by a later tick, after
        what did, in produce order, each counted once."""
        h = Harness()
        for i in range(6):
            h.producer.produce(TOPIC, f"{i}".encode(), partition=0, on_delivery=h.callback)
        h.producer.produce(TOPIC, b"stuck", partition=3)  # the muted partition holds something: a rescue is due
        h.fake.capacity = 2
        h.producer.mute_manager.mute(TOPIC, 3)
        h.tick()
        assert h.values(0) == [b"0", b"1"] and len(h.producer) == 7
        h.fake.capacity = 100_000
        h.tick()
        assert h.values(0) == [f"{i}".encode() for i in range(6)] and h.producer.counters.requeued == 7
        h.fake.deliver()
        assert h.producer.flush(1) == 0 and [c for c, _ in h.reports] == [None] * 6
        h.close()

    def test_a_resend_refused_by_librdkafka_is_that_messages_failed_report(self) -> None:
        """The topic vanished from librdkafka's metadata before the rescue re-sent its queue (_UNKNOWN_TOPIC): each
        message gets that error as its report, and the driver goes on (it used to die on the exception)."""
        h = Harness()
        for i in range(10):
            h.producer.produce(TOPIC, f"{i}".encode(), on_delivery=h.callback)
        victim = h.fake.sent[0].partition
        h.fake.unknown_topics.add(TOPIC)
        h.producer.mute_manager.mute(TOPIC, victim)
        h.tick()
        h.tick()
        assert h.producer.flush(1) == 0
        assert [c for c, _ in h.reports] == [KafkaError._UNKNOWN_TOPIC] * 10
        assert h.producer.counters.failed == 10
        h.close()

    def test_explicit_partitions_are_never_moved(self) -> None:
        """partition= given by the application: re-sent to that same (muted) partition."""
        h = Harness()
        h.producer.produce(TOPIC, b"x", partition=3)
        h.producer.mute_manager.mute(TOPIC, 3)
        h.tick()
        assert h.values(3) == [b"x"] and h.producer.counters.rescued == 0
        h.close()

    def test_keyed_reroute_moves_and_keyed_fail_fails(self) -> None:
        """Keyed messages follow keyed_policy in the rescue too: reroute moves them, fail reports _STATE."""
        for policy, expect in (("reroute", "moved"), ("fail", "failed")):
            h = Harness(keyed_policy=policy)
            key = next(k for k, p in keys_by_home(h) if p == 1)
            h.produce(b"k", key)
            h.producer.mute_manager.mute(TOPIC, 1)
            h.tick()
            h.producer.poll(0)
            if expect == "moved":
                assert h.values(1) == [] and [s.value for s in h.fake.pending] == [b"k"]
            else:
                assert h.fake.pending == [] and [c for c, _ in h.reports] == [KafkaError._STATE]
            h.close()

    def test_keyed_messages_of_a_muted_home_move_with_their_key_in_order(self) -> None:
        """keyed_policy reroute: the muted home's queued keyed messages move, each key's in produce order to the
        partition a new message of that key goes to now, with the rescue header; other keys stay home."""
        h = Harness(keyed_policy="reroute")
        homes = list(keys_by_home(h))
        victims = [k for k, p in homes if p == 1][:3]
        others = [k for k, p in homes if p != 1][:3]
        for i in range(4):
            for k in victims + others:
                h.produce(k + b"-%d" % i, k)
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        assert h.values(1) == [] and h.producer.counters.rescued == 12
        for k in victims:
            moved = [s for s in h.fake.pending if s.key == k]
            assert [s.value for s in moved] == [k + b"-%d" % i for i in range(4)]
            assert all((HEADER, b"1") in (s.headers or []) for s in moved)
            (target,) = {s.partition for s in moved}
            h.produce(b"new", k)
            assert h.fake.pending[-1].partition == target != 1
        for k in others:
            assert {s.partition for s in h.fake.pending if s.key == k} == {h.home(k)}
        h.close()

    def test_an_idempotent_producer_never_purges(self) -> None:
        """enable.idempotence=true: a purge would break the sequence, so queued messages stay queued."""
        h = Harness(conf={"enable.idempotence": True})
        for i in range(3):
            h.producer.produce(TOPIC, f"{i}".encode(), partition=2)
        h.producer.mute_manager.mute(TOPIC, 2)
        h.tick()
        assert h.fake.purges == [] and h.values(2) == [b"0", b"1", b"2"]
        h.close()

    def test_the_applications_purge_is_reported_not_resent(self) -> None:
        """producer.purge(): every message gets _PURGE_QUEUE (held ones too), nothing is re-sent."""
        h = Harness(keyed_policy="hold")
        key = next(k for k, p in keys_by_home(h) if p == 1)
        h.produce(b"a")
        h.producer.mute_manager.mute(TOPIC, 1)
        h.produce(b"held", key)
        before = len(h.fake.sent)
        h.producer.purge()
        assert h.producer.flush(1) == 0 and len(h.fake.sent) == before
        assert sorted(c for c, _ in h.reports) == [KafkaError._PURGE_QUEUE] * 2
        h.close()


class TestTimedOutResend:
    def test_a_timed_out_unkeyed_message_is_resent_once_elsewhere(self) -> None:
        """_MSG_TIMED_OUT on partition p (muted meanwhile): re-sent to another writable partition with the rescue
        header; a second timeout is reported to the application (never rescued twice)."""
        h = Harness()
        h.producer.produce(TOPIC, b"t", on_delivery=h.callback)
        first = h.fake.sent[-1].partition
        h.producer.mute_manager.mute(TOPIC, first)  # (no tick: no rescue purge, the report comes first)
        h.fake.fail(TOPIC, first, KafkaError._MSG_TIMED_OUT)
        h.producer.poll(0)
        again = h.fake.sent[-1]
        assert len(h.fake.sent) == 2 and again.partition != first and h.reports == []
        assert (HEADER, str(first).encode()) in again.headers
        h.producer.mute_manager.mute(TOPIC, again.partition)  # there would be somewhere else to go
        h.fake.fail(TOPIC, again.partition, KafkaError._MSG_TIMED_OUT)
        h.producer.poll(0)
        assert len(h.fake.sent) == 2 and [c for c, _ in h.reports] == [KafkaError._MSG_TIMED_OUT]
        h.close()

    def test_a_timed_out_message_with_an_explicit_partition_is_reported(self) -> None:
        """partition= given: the timeout is the application's to see."""
        h = Harness()
        h.producer.produce(TOPIC, b"t", partition=1, on_delivery=h.callback)
        h.fake.fail(TOPIC, 1, KafkaError._MSG_TIMED_OUT)
        h.producer.poll(0)
        assert len(h.fake.sent) == 1 and [c for c, _ in h.reports] == [KafkaError._MSG_TIMED_OUT]
        h.close()

    def test_an_idempotent_producer_reports_the_timeout(self) -> None:
        """enable.idempotence=true: a timed-out message may have been written; no re-send (no duplicate)."""
        h = Harness(conf={"enable.idempotence": True})
        h.producer.produce(TOPIC, b"t", on_delivery=h.callback)
        h.producer.mute_manager.mute(TOPIC, h.fake.sent[-1].partition)
        h.fake.fail(TOPIC, h.fake.sent[-1].partition, KafkaError._MSG_TIMED_OUT)
        h.producer.poll(0)
        assert len(h.fake.sent) == 1 and [c for c, _ in h.reports] == [KafkaError._MSG_TIMED_OUT]
        h.close()

    def test_rescue_disabled_reports_the_timeout(self) -> None:
        """rescue.enabled=false: no re-send after a timeout."""
        h = Harness(rescue={"enabled": False, "after_ms": 0})
        h.producer.produce(TOPIC, b"t", on_delivery=h.callback)
        h.producer.mute_manager.mute(TOPIC, h.fake.sent[-1].partition)
        h.fake.fail(TOPIC, h.fake.sent[-1].partition, KafkaError._MSG_TIMED_OUT)
        h.producer.poll(0)
        assert len(h.fake.sent) == 1 and [c for c, _ in h.reports] == [KafkaError._MSG_TIMED_OUT]
        h.close()


def test_len_never_reaches_zero_while_a_rescue_holds_the_purged_messages() -> None:
    """Between a purge report and its message's re-send the message is only in the rescue's hands: len() stays
    above 0 all along, so a flush() on another thread cannot return before the re-sent messages' callbacks."""
    h = Harness()
    for i in range(5):
        h.producer.produce(TOPIC, f"{i}".encode(), partition=0, on_delivery=h.callback)
    seen: list[int] = []
    poll = h.fake.poll

    def watching_poll(timeout: float | None = None) -> int:
        served = poll(timeout)
        seen.append(len(h.producer))
        return served

    h.fake.poll = watching_poll  # type: ignore[method-assign]
    h.producer.produce(TOPIC, b"stuck", partition=3)  # the muted partition holds something: a rescue is due
    h.producer.mute_manager.mute(TOPIC, 3)
    h.tick()
    assert h.fake.purges and seen and min(seen) > 0
    assert h.values(0) == [b"0", b"1", b"2", b"3", b"4"]
    h.close()


def _stuck_harness(**policy: object) -> Harness:
    """A harness whose slow-call threshold is 1 s (the in-flight rescue waits for it), detectors otherwise quiet."""
    h = Harness(slow_call={"threshold_ms": 1000, "outlier_factor": 1}, **policy)
    h.warm()
    return h


def _in_flight_to(h: Harness, partitions: tuple[int, ...], per_partition: int = 3) -> list[bytes]:
    """Keyed messages homed on ``partitions``, sent and transmitted (in flight); returns their values."""
    values: list[bytes] = []
    keys = list(keys_by_home(h))
    for p in partitions:
        for key, _ in [kh for kh in keys if kh[1] == p][:per_partition]:
            value = b"v-" + key
            h.produce(value, key, headers=[("x-mutepro-row", value)])
            values.append(value)
    h.fake.transmit()
    return values


class TestRescueInFlight:
    def test_only_once_healthy_partitions_drained_then_copies_are_tagged(self) -> None:
        """In-flight messages of a muted partition are taken back only when nothing else is outstanding and they
        are older than the slow threshold; the copies go to writable partitions, tagged, headers kept, and each
        row ends with exactly one successful report."""
        h = _stuck_harness()
        values = _in_flight_to(h, (1,))
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        assert h.fake.purges == [(True, False)] and len(h.values(1)) == 3  # the new-mute rescue spares in-flight
        h.tick(0.5)
        assert h.producer._rescue_in_flight() is None  # younger than the 1 s threshold
        h.tick(1.0)
        values += _in_flight_to(h, (2,))
        h.tick()
        assert h.producer._rescue_in_flight() is None  # partition 2 (healthy) still has messages outstanding
        assert h.fake.purges == [(True, False)]
        h.fake.deliver(TOPIC, 2)
        h.producer.poll(0)
        assert h.producer._rescue_in_flight() == 3
        assert h.fake.purges[-1] == (True, True) and h.values(1) == []
        copies = h.fake.pending
        assert len(copies) == 3 and all((HEADER, b"1") in s.headers for s in copies)
        assert all(("x-mutepro-row", s.value) in s.headers for s in copies)
        h.fake.deliver()
        assert h.producer.flush(1) == 0
        assert sorted(msg.value() for _, msg in h.reports) == sorted(values)
        assert {c for c, _ in h.reports} == {None}
        h.close()

    def test_a_copy_stuck_again_is_rescued_again_until_nothing_is_writable(self) -> None:
        """A copy that gets stuck on a partition muted later is rescued again; with every partition muted there
        is nowhere to go and nothing is purged."""
        h = _stuck_harness()
        _in_flight_to(h, (1,))
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        h.tick(1.5)
        assert h.producer._rescue_in_flight() == 3
        second = {s.partition for s in h.fake.pending}
        for p in second:
            h.producer.mute_manager.mute(TOPIC, p)
        h.fake.transmit()
        h.tick()
        h.tick(1.5)
        assert h.producer._rescue_in_flight() == 3
        assert not {s.partition for s in h.fake.pending} & (second | {1})
        for p in range(4):
            h.producer.mute_manager.mute(TOPIC, p)
        h.fake.transmit()
        h.tick()
        h.tick(1.5)
        purges = len(h.fake.purges)
        assert h.producer._rescue_in_flight() is None and len(h.fake.purges) == purges
        h.close()

    def test_a_stuck_probe_does_not_hold_the_flush_and_the_partition_probes_again(self) -> None:
        """A probe in flight to a half-open partition that stays silent is taken back and re-sent elsewhere; the
        partition is open again (not waiting for that probe's result) and takes a new probe after its backoff."""
        h = _stuck_harness()
        h.trip(1)
        h.tick(1.1)  # past retry_interval_ms: half-open
        assert 1 in h.producer.mute_manager.probing(TOPIC)
        h.produce(b"probe")
        probe = h.fake.sent[-1]
        assert probe.partition == 1 and h.producer.counters.probes == 1
        h.fake.transmit()
        h.tick()
        h.tick(1.5)
        assert h.producer._rescue_in_flight() == 1
        assert h.fake.pending[-1].value == b"probe" and h.fake.pending[-1].partition != 1
        h.fake.deliver()
        assert h.producer.flush(1) == 0 and [c for c, _ in h.reports] == [None]
        assert 1 not in h.producer.mute_manager.probing(TOPIC)
        h.tick(2.5)  # the doubled backoff
        assert 1 in h.producer.mute_manager.probing(TOPIC) and h.producer.mute_manager.try_probe(TOPIC, 1)
        h.close()

    def test_a_probe_judged_failed_is_taken_back_at_once(self) -> None:
        """Two probes in flight to a half-open partition; the first fails, so the partition is muted again: the
        second one (sent before that verdict) is rescued without waiting for the slow threshold."""
        breaker = {"retry_interval_ms": 1000, "max_retry_interval_ms": 1000, "half_open_probes": 2}
        h = _stuck_harness(breaker={**breaker, "probe_spacing_ms": 0})
        h.trip(1)
        h.tick(1.1)
        h.produce(b"probe-1")
        h.produce(b"probe-2")
        assert [s.partition for s in h.fake.sent[-2:]] == [1, 1] and h.producer.counters.probes == 2
        h.fake.transmit()
        h.tick()
        assert h.producer._rescue_in_flight() is None  # half-open, both probes young: their results may come
        h.fake.fail(TOPIC, 1, KafkaError.REQUEST_TIMED_OUT, count=1)
        h.producer.poll(0)
        assert 1 not in h.producer.mute_manager.probing(TOPIC)  # muted again
        assert h.producer._rescue_in_flight() == 1
        assert h.fake.pending[-1].value == b"probe-2" and h.fake.pending[-1].partition != 1
        h.close()

    def test_not_under_keyed_policy_hold(self) -> None:
        """keyed_policy hold keeps keys on their partition: a purge could only put the messages back; none."""
        h = _stuck_harness(keyed_policy="hold")
        _in_flight_to(h, (1,))
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        h.tick(1.5)
        assert h.producer._rescue_in_flight() is None and h.fake.purges == [(True, False)]
        h.close()

    def test_an_idempotent_producer_is_never_purged(self) -> None:
        """enable.idempotence=true: in-flight messages wait for their broker, as with the plain client."""
        h = Harness(
            conf={"enable.idempotence": True}, slow_call={"threshold_ms": 1000, "outlier_factor": 1}
        )
        h.warm()
        _in_flight_to(h, (1,))
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        h.tick(1.5)
        assert h.producer._rescue_in_flight() is None and h.fake.purges == [] and len(h.values(1)) == 3
        h.close()


class TestFlushHedge:
    LEADERS = {0: 1, 1: 2, 2: 1, 3: 3}

    def _harness(self, conf: dict[str, object] | None = None) -> Harness:
        # the slow-call threshold is 5 s (the sink's): the hedge at 1 s acts long before the stall rule
        h = Harness(conf=conf, leaders=self.LEADERS,
                    slow_call={"threshold_ms": 5000, "outlier_factor": 1})
        h.warm()
        return h

    def test_last_messages_waiting_alone_mute_their_broker_and_are_resent(self) -> None:
        """Once only broker 2's messages are left and they waited 1 s, its partitions are muted as a detector
        would (not by hand) and the messages re-sent elsewhere at once, tagged, each with one success."""
        h = self._harness()
        values = _in_flight_to(h, (1, 0))
        h.tick()  # the checkpoint that counts them (ticks are 50 ms apart)
        h.fake.deliver(TOPIC, 0)
        h.producer.poll(0)
        h.tick(0.5)
        assert h.producer._rescue_in_flight(1.0, hedge_after_s=1.0) is None  # 0.5 s: may still come
        assert h.producer.mute_manager.muted_partitions() == {}
        h.tick(0.55)
        assert h.producer._rescue_in_flight(1.0, hedge_after_s=1.0) == 3
        assert h.producer.mute_manager.muted_partitions() == {TOPIC: [1]}
        state = h.producer.mute_manager.state()["topics"][TOPIC][1]
        assert state["state"] == "open" and "rule=flush_hedge" in state["reason"]
        copies = h.fake.pending
        assert len(copies) == 3 and {s.partition for s in copies} <= {0, 2, 3}
        assert all((HEADER, b"1") in s.headers for s in copies)
        h.fake.deliver()
        assert h.producer.flush(1) == 0
        assert sorted(msg.value() for err, msg in h.reports if err is None) == sorted(values)
        h.close()

    def test_not_when_no_other_broker_delivered_while_they_waited(self) -> None:
        """Only broker 2's messages are outstanding, old enough, but nothing was delivered anywhere while they
        waited (RF 3, acks=all, a stalled follower: every partition waits for it, and these were merely the last
        ones the task sent): no evidence against their leader, nothing is muted."""
        h = self._harness()
        _in_flight_to(h, (1,))
        h.tick()  # the checkpoint that counts them
        h.tick(0.5)
        h.tick(0.55)
        assert h.producer._rescue_in_flight(1.0, hedge_after_s=1.0) is None
        assert h.producer.mute_manager.muted_partitions() == {}
        h.close()

    def test_not_while_another_broker_still_has_young_messages(self) -> None:
        """Messages still on their way elsewhere: the old ones are not alone, nothing is muted."""
        h = self._harness()
        _in_flight_to(h, (1,))
        h.tick(1.5)
        _in_flight_to(h, (0,))
        h.tick()
        assert h.producer._rescue_in_flight(1.0, hedge_after_s=1.0) is None
        assert h.producer.mute_manager.muted_partitions() == {}
        h.close()

    def test_not_when_the_broker_leads_every_partition(self) -> None:
        """Nowhere else to go: the task waits, as a plain flush would."""
        h = Harness(leaders={p: 2 for p in range(4)}, slow_call={"threshold_ms": 5000})
        h.warm()
        _in_flight_to(h, (1,))
        h.tick(1.5)
        assert h.producer._rescue_in_flight(1.0, hedge_after_s=1.0) is None
        assert h.producer.mute_manager.muted_partitions() == {}
        h.close()

    def test_never_more_than_half_of_the_topic(self) -> None:
        """With partitions 0 and 3 already muted, muting broker 2 (partition 1) would leave 1 of 4: it waits."""
        h = self._harness()
        h.producer.mute_manager.mute(TOPIC, 3)
        h.producer.mute_manager.mute(TOPIC, 0)
        _in_flight_to(h, (1,))
        h.tick(1.5)
        assert h.producer._rescue_in_flight(1.0, hedge_after_s=1.0) is None
        assert h.producer.mute_manager.muted_partitions() == {TOPIC: [0, 3]}
        h.close()

    def test_never_for_an_idempotent_producer(self) -> None:
        """enable.idempotence=true: no hedge, no purge."""
        h = self._harness(conf={"enable.idempotence": True})
        _in_flight_to(h, (1,))
        h.tick(1.5)
        assert h.producer._rescue_in_flight(1.0, hedge_after_s=1.0) is None
        assert h.producer.mute_manager.muted_partitions() == {} and h.fake.purges == []
        h.close()


@pytest.mark.parametrize("keyed", [False, True])
def test_a_probe_that_met_a_full_queue_is_granted_again(keyed: bool) -> None:
    """The probe granted to a half-open partition raised BufferError (queue full): the slot comes back, and the
    next message probes it (kept, the slot was a probe in flight forever and the partition never came back)."""
    h = Harness()
    h.warm()
    h.trip(2)
    h.fake.deliver()
    h.tick(1.1)  # past retry_interval_ms: half-open, one probe allowed
    assert 2 in h.producer.mute_manager.probing(TOPIC)
    key = next(k for k, home in keys_by_home(h) if home == 2) if keyed else None
    h.fake.capacity = len(h.fake.pending)
    with pytest.raises(BufferError):
        h.produce(b"first", key)
    h.fake.capacity = 100_000
    h.tick(0.3)  # past probe_spacing_ms
    h.produce(b"second", key)
    assert h.values(2) == [b"second"] and h.producer.counters.probes == 1
    h.close()


def test_a_probe_purged_by_another_partitions_rescue_counts_as_failed() -> None:
    """A probe still queued when another partition is muted is purged with the queue: its partition opens again
    instead of waiting forever in half-open for the result of a probe that was never sent."""
    h = Harness()
    h.warm()
    h.trip(1)
    h.tick(1.1)
    h.produce(b"probe")
    assert h.fake.sent[-1].partition == 1 and 1 in h.producer.mute_manager.probing(TOPIC)
    purges = len(h.fake.purges)
    h.producer.produce(TOPIC, b"stuck", partition=3)  # the muted partition holds something: a rescue is due
    h.producer.mute_manager.mute(TOPIC, 3)
    h.tick()
    assert h.fake.purges[purges:] == [(True, False)] and h.values(1) == []
    assert h.producer.mute_manager.state()["topics"][TOPIC][1]["state"] == "open"
    h.close()


def _meet_a_full_queue(h: Harness) -> None:
    """librdkafka's queue is full from now on, and the application's next produce() meets it (BufferError)."""
    h.fake.capacity = len(h.fake.pending)
    with pytest.raises(BufferError):
        h.producer.produce(TOPIC, b"refused")


class TestRescueDelay:

    def test_by_default_a_queue_still_stuck_a_second_after_the_mute_is_rescued(self) -> None:
        """rescue.after_ms (default 1,000): nothing purged at the mute; 1.1 s later, still stuck, it is moved."""
        h = Harness(rescue={})
        victim, queued = _muted_with_queue(h)
        assert h.fake.purges == [] and h.values(victim) == queued
        for _ in range(22):
            h.tick(0.05)
        assert h.fake.purges == [(True, False)] and h.values(victim) == []
        assert h.producer.counters.rescued == len(queued)
        h.close()

    def test_a_queue_that_drains_before_the_delay_is_never_purged(self) -> None:
        """The broker answers 0.5 s after the mute (a pause, not a stall): no purge, nothing re-sent."""
        h = Harness(rescue={"after_ms": 1000})
        victim, _ = _muted_with_queue(h)
        for _ in range(10):
            h.tick(0.05)
        h.fake.deliver(TOPIC, victim)
        for _ in range(12):
            h.tick(0.05)
        assert h.fake.purges == [] and h.producer.counters.rescued == 0
        h.close()

    def test_a_partition_unmuted_before_the_delay_is_not_rescued(self) -> None:
        """Unmuted 0.2 s after its mute: its queue goes on to its broker, no purge."""
        h = Harness(rescue={"after_ms": 1000})
        victim, queued = _muted_with_queue(h)
        h.tick(0.2)
        h.producer.mute_manager.unmute(TOPIC, victim)
        for _ in range(22):
            h.tick(0.05)
        assert h.fake.purges == [] and h.values(victim) == queued
        h.close()

    def test_messages_sent_to_the_partition_after_its_mute_do_not_make_a_rescue_due(self) -> None:
        """Explicit-partition messages keep arriving at the muted (empty) partition: they are younger than the mute,
        so nothing is taken back for them."""
        h = Harness(rescue={"after_ms": 1000})
        h.producer.mute_manager.mute(TOPIC, 3)
        h.tick()
        for i in range(22):
            h.producer.produce(TOPIC, f"{i}".encode(), partition=3)
            h.tick(0.05)
        assert h.fake.purges == [] and len(h.values(3)) == 22
        h.close()

    def test_an_application_blocked_on_the_stuck_queue_gets_its_rescue_at_once(self) -> None:
        """The muted partition holds the whole queue and produce() then meets a full queue: the next tick rescues,
        without waiting rescue.after_ms (1 s by default)."""
        h = Harness(rescue={})
        victim, queued = _muted_with_queue(h)
        assert h.fake.purges == []
        _meet_a_full_queue(h)
        h.tick(0.05)
        assert h.fake.purges == [(True, False)] and h.values(victim) == []
        assert h.producer.counters.rescued == len(queued)
        h.close()

    def test_blocked_but_mostly_on_healthy_partitions_waits(self) -> None:
        """Full queue, but the stuck messages are 10 of 30 queued (below rescue.blocked_share_pct 90): the rescue
        still waits for after_ms, then runs."""
        h = Harness(rescue={})
        victim, queued = _muted_with_queue(h)
        other = (victim + 1) % 6
        for i in range(20):
            h.producer.produce(TOPIC, f"o{i}".encode(), partition=other)
        _meet_a_full_queue(h)
        for _ in range(10):
            h.tick(0.05)
        assert h.fake.purges == [] and h.values(victim) == queued
        for _ in range(12):
            h.tick(0.05)
        assert h.fake.purges == [(True, False)] and h.producer.counters.rescued == len(queued)
        h.close()

    def test_blocked_share_null_always_waits(self) -> None:
        """rescue.blocked_share_pct null: a blocked application still waits the whole after_ms."""
        h = Harness(rescue={"blocked_share_pct": None})
        victim, queued = _muted_with_queue(h)
        _meet_a_full_queue(h)
        for _ in range(10):
            h.tick(0.05)
        assert h.fake.purges == [] and h.values(victim) == queued
        h.close()

    def test_a_muted_partition_holding_nothing_costs_no_purge(self) -> None:
        """Muted with an empty queue (after_ms 0): the other partitions' queues are not taken back for nothing."""
        h = Harness()
        for i in range(4):
            h.producer.produce(TOPIC, f"{i}".encode(), partition=0)
        h.producer.mute_manager.mute(TOPIC, 3)
        h.tick()
        assert h.fake.purges == [] and h.values(0) == [b"0", b"1", b"2", b"3"]
        h.close()


def _five_stuck_among_a_hundred(h: Harness) -> None:
    """95 messages queued for partition 0, 5 for partition 3, then partition 3 muted."""
    for i in range(95):
        h.producer.produce(TOPIC, f"ok{i}".encode(), partition=0)
    for i in range(5):
        h.producer.produce(TOPIC, f"stuck{i}".encode(), partition=3)
    h.producer.mute_manager.mute(TOPIC, 3)


class TestRescueShare:
    def test_a_few_stuck_among_a_full_queue_wait_until_the_rest_drains(self) -> None:
        """5 stuck on the muted partition among 100 queued (5 % < rescue.min_share_pct 10): nothing purged; once
        the healthy partition's 95 are delivered, the 5 are the whole queue and the next round takes them back."""
        h = Harness()
        _five_stuck_among_a_hundred(h)
        h.tick()
        h.tick()
        assert h.fake.purges == [] and len(h.values(0)) == 95
        h.fake.deliver(TOPIC, 0)
        h.producer.poll(0)
        h.tick()
        assert h.fake.purges == [(True, False)] and h.producer.counters.requeued == 5
        h.close()

    def test_zero_rescues_whatever_the_share(self) -> None:
        """rescue.min_share_pct 0: the same 5 among 100 are taken back at the mute."""
        h = Harness(rescue={"after_ms": 0, "min_share_pct": 0})
        _five_stuck_among_a_hundred(h)
        h.tick()
        assert h.fake.purges == [(True, False)] and h.producer.counters.requeued == 100
        h.close()
