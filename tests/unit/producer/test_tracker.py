"""OutstandingTracker: exact outstanding counts from counters, ages from per-tick checkpoints."""

from __future__ import annotations

import random

import pytest

from mutepro.producer.tracker import NativeTopicTally, OutstandingTracker

T = "orders"


def send(tracker: OutstandingTracker, partition: int, n: int = 1, size: int = 100, topic: str = T) -> None:
    tally = tracker.topics[topic]
    tally.sent[partition] += n
    tally.sent_bytes[partition] += n * size
    tracker.sent_total += n


def report(tracker: OutstandingTracker, partition: int, n: int = 1, topic: str = T) -> None:
    tracker.topics[topic].reported[partition] += n
    tracker.reported_total += n


@pytest.fixture
def tracker() -> OutstandingTracker:
    t = OutstandingTracker(buffer_max_messages=1000, buffer_max_bytes=1 << 20)
    t.ensure(T, 3, slow_s=1.0)
    return t


class TestTally:
    def test_grow_extends_every_array(self) -> None:
        """Growing a topic keeps old counts and adds zeroed partitions (warm = -1: not delivered yet)."""
        tally = NativeTopicTally(2, 1.0)
        tally.sent[1] = 5
        tally.grow(4)
        assert tally.count == 4 and list(tally.sent) == [0, 5, 0, 0] and list(tally.warm) == [-1] * 4
        assert len(tally.checkpoints) == 4

    def test_grow_never_shrinks(self) -> None:
        """A smaller partition count (stale metadata) changes nothing."""
        tally = NativeTopicTally(3, 1.0)
        tally.grow(1)
        assert tally.count == 3


class TestCounts:
    def test_outstanding_is_sent_minus_reported(self, tracker: OutstandingTracker) -> None:
        """Counts per partition and in total are exact."""
        send(tracker, 0, 5)
        send(tracker, 2, 3)
        report(tracker, 0, 2)
        assert tracker.count(T, 0) == 3 and tracker.count(T, 2) == 3
        assert tracker.counts(T) == {0: 3, 1: 0, 2: 3}
        assert tracker.total == 6

    def test_unknown_topic_or_partition_counts_zero(self, tracker: OutstandingTracker) -> None:
        """Nothing is outstanding where nothing was tracked."""
        assert tracker.count("other", 0) == 0 and tracker.count(T, 7) == 0 and tracker.counts("other") == {}


class TestLoad:
    def test_idle_partition(self, tracker: OutstandingTracker) -> None:
        """No outstanding message: no age."""
        load = tracker.load(T, 0, now=10.0)
        assert (load.outstanding, load.oldest_age_s) == (0, None)

    def test_ages_come_from_checkpoints(self, tracker: OutstandingTracker) -> None:
        """The module docstring's example: #406..#420 are older than 0.62 s at 10.70."""
        send(tracker, 0, 400)
        tracker.checkpoint(10.00)
        send(tracker, 0, 20)
        tracker.checkpoint(10.05)
        send(tracker, 0, 20)
        tracker.checkpoint(10.10)
        report(tracker, 0, 405)
        tracker.checkpoint(10.15)
        load = tracker.load(T, 0, now=10.70)
        assert load.outstanding == 35
        assert load.oldest_age_s == pytest.approx(0.65)
        assert load.count_older_than(0.62) == 15
        assert load.count_older_than(0.55) == 35

    def test_count_older_than_matches_the_ages_one_by_one(self, tracker: OutstandingTracker) -> None:
        """The one-bisection count equals counting the lazily computed ages, on random send/report/tick runs."""
        rng = random.Random(11)
        now = 100.0
        for _ in range(300):
            send(tracker, 2, rng.randrange(0, 30))
            outstanding = tracker.count(T, 2)
            if outstanding and rng.random() < 0.5:
                report(tracker, 2, rng.randrange(0, outstanding + 1))
            now += rng.choice([0.0, 0.01, 0.05, 0.2])
            tracker.checkpoint(now)
            load = tracker.load(T, 2, now=now + rng.random())
            ages = list(load.ages_s)
            for age in (0.0, 0.05, 0.1, 0.3, 1.0, 5.0):
                assert load.count_older_than(age) == sum(1 for a in ages if a > age)

    def test_messages_after_the_last_checkpoint_are_young(self, tracker: OutstandingTracker) -> None:
        """A message sent since the last tick has age 0 until the next checkpoint."""
        send(tracker, 1, 2)
        load = tracker.load(T, 1, now=5.0)
        assert load.outstanding == 2 and load.oldest_age_s == 0.0 and load.count_older_than(0.0) == 0

    def test_reported_checkpoints_are_dropped(self, tracker: OutstandingTracker) -> None:
        """Once every message of a checkpoint is reported, the age restarts from the next one."""
        send(tracker, 0, 10)
        tracker.checkpoint(1.0)
        send(tracker, 0, 10)
        tracker.checkpoint(2.0)
        report(tracker, 0, 10)
        tracker.checkpoint(3.0)
        assert tracker.load(T, 0, now=4.0).oldest_age_s == pytest.approx(2.0)

    def test_bytes_are_estimated_from_the_average_size(self, tracker: OutstandingTracker) -> None:
        """Outstanding bytes = outstanding x average message size of the partition."""
        send(tracker, 2, 4, size=250)
        report(tracker, 2, 1)
        assert tracker.load(T, 2, now=1.0).outstanding_bytes == 750

    def test_buffer_limits_are_passed_through(self, tracker: OutstandingTracker) -> None:
        """Detectors see the producer's queue limits."""
        send(tracker, 0)
        load = tracker.load(T, 0, now=1.0)
        assert (load.buffer_max_messages, load.buffer_max_bytes) == (1000, 1 << 20)

    def test_ages_sequence_supports_slices_and_negative_indexes(self, tracker: OutstandingTracker) -> None:
        """The lazy ages behave like a read-only sequence, oldest first."""
        send(tracker, 0, 2)
        tracker.checkpoint(1.0)
        send(tracker, 0, 1)
        tracker.checkpoint(2.0)
        ages = tracker.load(T, 0, now=3.0).ages_s
        assert list(ages) == [2.0, 2.0, 1.0] and ages[-1] == 1.0 and list(ages[1:]) == [2.0, 1.0]
        with pytest.raises(IndexError):
            ages[3]


class TestDrain:
    def test_drain_yields_and_zeroes_tallies(self, tracker: OutstandingTracker) -> None:
        """A tick's tally goes to the detectors once: calls, failures, slow."""
        tally = tracker.topics[T]
        tally.ok[1] = 7
        tally.failed[1] = 2
        tally.slow[1] = 3
        assert list(tracker.drain()) == [(T, 1, 9, 2, 3)]
        assert list(tracker.drain()) == []


@pytest.mark.parametrize("factory", [NativeTopicTally])
class TestBusy:
    """busy(): the partitions a tick has work for, as the C tally computes it."""

    def test_outstanding_or_moved_partitions_only(self, factory: type) -> None:
        """0 has messages outstanding, 1 sent and delivered since the last look, 2 nothing: [0, 1]."""
        tally = factory(3, 1.0)
        tally.sent[0] = 5
        tally.sent[1] = 3
        tally.reported[1] = 3
        assert tally.busy() == [0, 1]
        assert tally.busy() == [0]  # 1 has not moved since

    def test_a_report_alone_makes_a_partition_busy_once(self, factory: type) -> None:
        """The last outstanding message of 0 delivered: busy at the next look (its checkpoints go), then not."""
        tally = factory(2, 1.0)
        tally.sent[0] = 2
        tally.reported[0] = 1
        assert tally.busy() == [0]
        tally.reported[0] = 2
        assert tally.busy() == [0]
        assert tally.busy() == []


class TestTrackerBusy:
    def test_checkpoint_keeps_the_busy_partitions_for_drain(self, tracker: OutstandingTracker) -> None:
        """After a checkpoint, drain and busy() see only the partitions that moved."""
        send(tracker, 2, 4)
        assert tracker.busy(T) is None  # no checkpoint yet: every partition may be busy
        tracker.checkpoint(1.0)
        assert tracker.busy(T) == frozenset({2})
        tracker.topics[T].ok[2] = 4
        report(tracker, 2, 4)
        tracker.checkpoint(1.05)
        assert list(tracker.drain()) == [(T, 2, 4, 0, 0)]
        tracker.checkpoint(1.1)
        assert tracker.busy(T) == frozenset()
