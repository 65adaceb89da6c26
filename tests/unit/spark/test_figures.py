"""Per-task figures and their fold into one batch."""

from __future__ import annotations

from mutepro.spark.figures import BatchFigures, TaskFigures


class TestFigures:
    def test_task_round_trips_as_json(self) -> None:
        """A task's figures survive the trip to the driver (commit message / result row)."""
        t = TaskFigures(partition=3, rows=10, rerouted=2, muted=["t:1"], seconds=1.5)
        assert TaskFigures.from_json(t.to_json()) == t

    def test_batch_sums_counts_and_takes_the_slowest_task(self) -> None:
        """Counts add up, muted partitions are the union, write time is the slowest task's."""
        b = BatchFigures.of(7, [
            TaskFigures(rows=10, failed=1, muted=["t:1"], seconds=2.0, flush_seconds=1.0, producer="7/mutepro-1"),
            TaskFigures(rows=5, held=3, hedged=2, muted=["t:1", "t:2"], seconds=0.5, producer="7/mutepro-1"),
        ])
        assert (b.batch_id, b.tasks, b.rows, b.failed, b.held, b.hedged) == (7, 2, 15, 1, 3, 2)
        assert b.muted_partitions == ("t:1", "t:2")
        assert (b.write_seconds, b.flush_seconds) == (2.0, 1.0)
        assert b.as_dict()["muted_partitions"] == ["t:1", "t:2"]
        assert b.producers == ("7/mutepro-1",)

    def test_batch_merges_task_events_in_time_order_with_their_producer(self) -> None:
        """Mute decisions of every task come out oldest first, each naming the worker producer that made it."""
        b = BatchFigures.of(1, [
            TaskFigures(producer="7/a", events=[["unmute", "t:1", 2, 20.0]]),
            TaskFigures(producer="8/b", events=[["mute", "t:1", 2, 10.0]]),
        ])
        assert b.events == (("mute", "t:1", 2, 10.0, "8/b"), ("unmute", "t:1", 2, 20.0, "7/a"))
        assert b.as_dict()["events"][0] == ["mute", "t:1", 2, 10.0, "8/b"]
        assert TaskFigures.from_json(TaskFigures(events=[["mute", "t:1", 2, 1.5]]).to_json()).events[0][0] == "mute"
