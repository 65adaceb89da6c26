"""OutstandingTracker: per-partition outstanding messages, bytes, stuck-prefix ages and removal in any order."""

from __future__ import annotations

import pytest

from mutepro.detect.model import PartitionLoad
from mutepro.producer.tracker import UNASSIGNED, OutstandingTracker


@pytest.fixture
def tracker() -> OutstandingTracker:
    return OutstandingTracker(buffer_max_messages=1000, buffer_max_bytes=1_048_576)


def fill(tracker: OutstandingTracker, topic: str, partition: int, sent: list[tuple[int, float, int]]) -> None:
    """Add (seq, sent_at, size) entries in order."""
    for seq, sent_at, size in sent:
        tracker.add(topic, partition, seq, sent_at, size)


class TestAddRemove:
    def test_empty(self, tracker: OutstandingTracker) -> None:
        """A new tracker counts nothing anywhere."""
        assert (tracker.total, tracker.count("t", 0), tracker.counts("t"), list(tracker.partitions())) == (
            0, 0, {}, []
        )

    def test_add_counts_per_partition_and_topic(self, tracker: OutstandingTracker) -> None:
        """count/counts/total follow adds per (topic, partition); other topics are not mixed in."""
        fill(tracker, "t", 0, [(1, 0.0, 10), (2, 0.1, 10)])
        fill(tracker, "t", 3, [(3, 0.2, 10)])
        fill(tracker, "u", 0, [(4, 0.3, 10)])
        assert tracker.count("t", 0) == 2
        assert tracker.count("t", 3) == 1
        assert tracker.count("t", 1) == 0
        assert tracker.counts("t") == {0: 2, 3: 1}
        assert tracker.counts("u") == {0: 1}
        assert tracker.total == 4
        assert sorted(tracker.partitions()) == [("t", 0), ("t", 3), ("u", 0)]

    def test_remove_returns_true_once(self, tracker: OutstandingTracker) -> None:
        """Removing a tracked message succeeds; removing it again (a duplicate report) is a no-op returning False."""
        fill(tracker, "t", 0, [(1, 0.0, 10), (2, 0.1, 20)])
        assert tracker.remove("t", 0, 1) is True
        assert tracker.remove("t", 0, 1) is False
        assert (tracker.count("t", 0), tracker.total) == (1, 1)
        assert tracker.load("t", 0, now=1.0).outstanding_bytes == 20

    def test_remove_unknown(self, tracker: OutstandingTracker) -> None:
        """Unknown partitions and sequence numbers are reported as not tracked and change nothing."""
        fill(tracker, "t", 0, [(1, 0.0, 10)])
        assert tracker.remove("t", 1, 1) is False  # wrong partition
        assert tracker.remove("u", 0, 1) is False  # wrong topic
        assert tracker.remove("t", 0, 99) is False
        assert tracker.total == 1

    def test_unassigned_partition(self, tracker: OutstandingTracker) -> None:
        """Messages librdkafka partitions itself are tracked under UNASSIGNED (-1) like any partition."""
        fill(tracker, "t", UNASSIGNED, [(1, 0.0, 5)])
        assert tracker.counts("t") == {-1: 1}
        assert tracker.remove("t", UNASSIGNED, 1) is True
        assert tracker.total == 0

    def test_emptied_partition_still_listed_with_zero(self, tracker: OutstandingTracker) -> None:
        """A partition whose messages were all delivered reads as 0 outstanding and an empty load."""
        fill(tracker, "t", 2, [(1, 0.0, 10)])
        tracker.remove("t", 2, 1)
        assert tracker.counts("t") == {2: 0}
        assert tracker.load("t", 2, now=5.0, stuck_after_s=1.0) == PartitionLoad(0, 0, None, 1000, 1_048_576)


class TestBytes:
    def test_bytes_follow_adds_and_removes(self, tracker: OutstandingTracker) -> None:
        """outstanding_bytes is the sum of the sizes still outstanding."""
        fill(tracker, "t", 0, [(1, 0.0, 100), (2, 0.1, 250), (3, 0.2, 50)])
        assert tracker.load("t", 0, now=1.0).outstanding_bytes == 400
        tracker.remove("t", 0, 2)
        assert tracker.load("t", 0, now=1.0).outstanding_bytes == 150
        tracker.remove("t", 0, 1)
        tracker.remove("t", 0, 3)
        assert tracker.load("t", 0, now=1.0).outstanding_bytes == 0

    def test_buffer_limits_passed_through(self) -> None:
        """The producer's buffer limits are copied into every load (the congestion detector divides by them)."""
        tracker = OutstandingTracker(buffer_max_messages=7, buffer_max_bytes=4096)
        fill(tracker, "t", 0, [(1, 0.0, 1)])
        load = tracker.load("t", 0, now=0.0)
        assert (load.buffer_max_messages, load.buffer_max_bytes) == (7, 4096)
        empty = tracker.load("t", 9, now=0.0)
        assert (empty.buffer_max_messages, empty.buffer_max_bytes) == (7, 4096)


class TestLoad:
    def test_unknown_partition(self, tracker: OutstandingTracker) -> None:
        """A partition never written to has no load and no oldest message."""
        load = tracker.load("t", 0, now=10.0, stuck_after_s=1.0)
        assert (load.outstanding, load.outstanding_bytes, load.oldest_age_s, tuple(load.ages_s)) == (0, 0, None, ())

    def test_oldest_age(self, tracker: OutstandingTracker) -> None:
        """oldest_age_s is measured from the first message still outstanding."""
        fill(tracker, "t", 0, [(1, 10.0, 1), (2, 11.0, 1), (3, 12.0, 1)])
        assert tracker.load("t", 0, now=15.0).oldest_age_s == pytest.approx(5.0)
        tracker.remove("t", 0, 1)
        assert tracker.load("t", 0, now=15.0).oldest_age_s == pytest.approx(4.0)

    def test_without_threshold_no_ages(self, tracker: OutstandingTracker) -> None:
        """Without stuck_after_s nothing is materialised: ages_s is empty even for very old messages."""
        fill(tracker, "t", 0, [(1, 0.0, 1), (2, 1.0, 1)])
        load = tracker.load("t", 0, now=100.0)
        assert tuple(load.ages_s) == ()
        assert load.outstanding == 2

    def test_healthy_partition_has_no_stuck_prefix(self, tracker: OutstandingTracker) -> None:
        """When even the oldest message is younger than the threshold, ages_s is empty."""
        fill(tracker, "t", 0, [(1, 9.5, 1), (2, 9.8, 1)])
        load = tracker.load("t", 0, now=10.0, stuck_after_s=1.0)
        assert tuple(load.ages_s) == ()
        assert load.count_older_than(1.0) == 0

    def test_stuck_prefix_oldest_first(self, tracker: OutstandingTracker) -> None:
        """ages_s lists only the messages older than the threshold, oldest (largest age) first."""
        # sent at 0, 2, 4, 8, 9.5; now = 10, threshold 1.5 -> ages 10, 8, 6, 2 are stuck; 0.5 is not
        fill(tracker, "t", 0, [(1, 0.0, 1), (2, 2.0, 1), (3, 4.0, 1), (4, 8.0, 1), (5, 9.5, 1)])
        load = tracker.load("t", 0, now=10.0, stuck_after_s=1.5)
        assert list(load.ages_s) == pytest.approx([10.0, 8.0, 6.0, 2.0])
        assert load.outstanding == 5
        assert load.oldest_age_s == pytest.approx(10.0)

    def test_threshold_is_strict(self, tracker: OutstandingTracker) -> None:
        """A message exactly as old as the threshold is not stuck."""
        fill(tracker, "t", 0, [(1, 0.0, 1), (2, 1.0, 1)])
        load = tracker.load("t", 0, now=2.0, stuck_after_s=1.0)
        assert list(load.ages_s) == pytest.approx([2.0])

    def test_count_older_than(self, tracker: OutstandingTracker) -> None:
        """count_older_than over the stuck prefix counts the messages strictly older than each age."""
        fill(tracker, "t", 0, [(1, 0.0, 1), (2, 2.0, 1), (3, 4.0, 1), (4, 8.0, 1), (5, 9.5, 1)])
        load = tracker.load("t", 0, now=10.0, stuck_after_s=1.5)
        assert load.count_older_than(1.5) == 4
        assert load.count_older_than(6.0) == 2  # 10 and 8; 6 is not strictly older
        assert load.count_older_than(9.0) == 1
        assert load.count_older_than(10.0) == 0

    def test_out_of_order_removal(self, tracker: OutstandingTracker) -> None:
        """Reports arriving out of send order leave the remaining messages' order (and the oldest) intact."""
        fill(tracker, "t", 0, [(1, 0.0, 1), (2, 1.0, 1), (3, 2.0, 1), (4, 3.0, 1)])
        tracker.remove("t", 0, 3)
        tracker.remove("t", 0, 1)
        load = tracker.load("t", 0, now=10.0, stuck_after_s=0.5)
        assert list(load.ages_s) == pytest.approx([9.0, 7.0])  # seq 2 then seq 4
        assert load.oldest_age_s == pytest.approx(9.0)
        tracker.remove("t", 0, 2)
        assert tracker.load("t", 0, now=10.0).oldest_age_s == pytest.approx(7.0)

    def test_readd_after_remove_goes_to_the_end(self, tracker: OutstandingTracker) -> None:
        """A message re-sent after its report (rescue to the same partition) counts from its new send time."""
        fill(tracker, "t", 0, [(1, 0.0, 10), (2, 1.0, 10)])
        tracker.remove("t", 0, 1)
        tracker.add("t", 0, 1, 5.0, 10)
        load = tracker.load("t", 0, now=6.0, stuck_after_s=0.5)
        assert list(load.ages_s) == pytest.approx([5.0, 1.0])
        assert (load.outstanding, load.outstanding_bytes, tracker.total) == (2, 20, 2)
