"""Purge, drain and redispatch (mutepro.producer.redispatch) driven through MuteProducer on a fake inner
producer: a newly muted partition's queue taken back and re-sent, in order, around it."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from mutepro import MuteProducer
from mutepro.testing.fakes import FakeClock, FakeInnerProducer
from tests.unit._producer_fakes import CONF, PARTITIONS, TOPIC, Harness, keys_by_home, muted_with_queue, topic_policy

HEADER = "x-mutepro-rescued-from"


class TestRescueOfAMutedPartition:
    def test_unkeyed_messages_move_off_the_muted_partition_in_order(self) -> None:
        """The muted partition's queued unkeyed messages are purged and re-sent elsewhere, in produce order, each
        with the rescue header naming the partition they left."""
        h = Harness()
        victim, queued = muted_with_queue(h)
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


@pytest.mark.parametrize("keyed", [False, True])
def test_a_probe_that_met_a_full_queue_is_granted_again(keyed: bool) -> None:
    """The probe granted to a half-open partition raised BufferError (queue full): the slot comes back, and the
    next message probes it (kept, the slot was a probe in flight forever and the partition never came back)."""
    h = Harness()
    h.warm()
    h.trip(2)
    h.fake.deliver()
    h.tick(1.1)  # past retry_interval_ms: half-open, one probe allowed
    assert 2 in h.producer.mute_manager.probes.probing(TOPIC)
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
    assert h.fake.sent[-1].partition == 1 and 1 in h.producer.mute_manager.probes.probing(TOPIC)
    purges = len(h.fake.purges)
    h.producer.produce(TOPIC, b"stuck", partition=3)  # the muted partition holds something: a rescue is due
    h.producer.mute_manager.mute(TOPIC, 3)
    h.tick()
    assert h.fake.purges[purges:] == [(True, False)] and h.values(1) == []
    assert h.producer.mute_manager.state()["topics"][TOPIC][1]["state"] == "open"
    h.close()


def test_an_uncounted_message_is_collected_by_c_and_re_sent_with_its_headers() -> None:
    """A message sent before its topic's metadata (uncounted: librdkafka's unassigned queue, through FastPath.send
    with a C reporter) is taken back by a rescue through the C purge sink like any other -- counted as reported
    there, nothing handed to Python's report handler -- and re-sent where it was (the topic is not routed here
    until librdkafka has placed it), its headers back on it."""
    clock = FakeClock()
    fake = FakeInnerProducer({TOPIC: PARTITIONS})
    producer = MuteProducer(
        dict(CONF), policy=topic_policy(rescue={}), clock=clock, _inner_factory=fake.factory, _threads=False
    )
    try:
        headers = [("trace", b"42")]
        producer.produce(TOPIC, b"early", b"k1", headers=headers)
        assert [(s.partition, s.headers) for s in fake.sent] == [(-1, headers)]
        totals = producer._tracker.totals
        producer._rescuer.rescue()
        assert fake.purges == [(True, False)] and totals.reported_total == 1 and totals.sent_total == 2
        resent = fake.sent[-1]
        assert (resent.value, resent.partition, resent.headers) == (b"early", -1, headers)
        assert len(producer) == 1 and producer.counters.requeued == 1
    finally:
        fake.deliver()
        producer.close(0.05)
