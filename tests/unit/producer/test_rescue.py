"""When a newly muted partition's queue is worth a rescue (mutepro.producer.rescue): the delay after the mute, the
blocked application, the share of the queue, and the probes a rescue meets. Driven through MuteProducer on a fake
inner producer."""

from __future__ import annotations

import pytest

from tests.unit._producer_fakes import TOPIC, Harness, muted_with_queue

HEADER = "x-mutepro-rescued-from"


def _meet_a_full_queue(h: Harness) -> None:
    """librdkafka's queue is full from now on, and the application's next produce() meets it (BufferError)."""
    h.fake.capacity = len(h.fake.pending)
    with pytest.raises(BufferError):
        h.producer.produce(TOPIC, b"refused")


class TestRescueDelay:

    def test_by_default_a_queue_still_stuck_a_second_after_the_mute_is_rescued(self) -> None:
        """rescue.after_ms (default 1,000): nothing purged at the mute; 1.1 s later, still stuck, it is moved."""
        h = Harness(rescue={})
        victim, queued = muted_with_queue(h)
        assert h.fake.purges == [] and h.values(victim) == queued
        for _ in range(22):
            h.tick(0.05)
        assert h.fake.purges == [(True, False)] and h.values(victim) == []
        assert h.producer.counters.rescued == len(queued)
        h.close()

    def test_a_queue_that_drains_before_the_delay_is_never_purged(self) -> None:
        """The broker answers 0.5 s after the mute (a pause, not a stall): no purge, nothing re-sent."""
        h = Harness(rescue={"after_ms": 1000})
        victim, _ = muted_with_queue(h)
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
        victim, queued = muted_with_queue(h)
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
        victim, queued = muted_with_queue(h)
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
        victim, queued = muted_with_queue(h)
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
        victim, queued = muted_with_queue(h)
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
