"""The Spark sink's end of task (mutepro.producer.inflight): the flush hedge and the rescue of messages in
flight to muted partitions, driven through MuteProducer on a fake inner producer."""

from __future__ import annotations

from confluent_kafka import KafkaError

from tests.unit._producer_fakes import TOPIC, Harness, keys_by_home

HEADER = "x-mutepro-rescued-from"


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

    def test_the_stuck_leaders_other_partitions_are_muted_before_the_re_send(self) -> None:
        """Partitions 1 and 3 are led by broker 2; partition 1, muted (the stall rule), holds messages stuck in
        flight. The rescue mutes partition 3 too (``rule=in_flight_rescue``) before it re-sends, so the copies go
        to brokers 1 and 3 (partitions 0 and 2), not to broker 2's other partition, where they would wait again."""
        h = Harness(leaders={0: 1, 1: 2, 2: 3, 3: 2}, slow_call={"threshold_ms": 1000, "outlier_factor": 1})
        h.warm()
        _in_flight_to(h, (1,))
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        h.tick(1.5)
        assert h.producer._rescue_in_flight() == 3
        assert h.producer.mute_manager.muted_partitions() == {TOPIC: [1, 3]}
        assert "rule=in_flight_rescue" in h.producer.mute_manager.state()["topics"][TOPIC][3]["reason"]
        assert {s.partition for s in h.fake.pending} <= {0, 2}
        h.fake.deliver()
        assert h.producer.flush(1) == 0
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
        assert 1 in h.producer.mute_manager.probes.probing(TOPIC)
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
        assert 1 not in h.producer.mute_manager.probes.probing(TOPIC)
        h.tick(2.5)  # the doubled backoff
        assert 1 in h.producer.mute_manager.probes.probing(TOPIC) and h.producer.mute_manager.probes.try_probe(TOPIC, 1)
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
        assert 1 not in h.producer.mute_manager.probes.probing(TOPIC)  # muted again
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
