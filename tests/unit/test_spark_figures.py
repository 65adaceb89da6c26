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
            TaskFigures(rows=5, held=3, muted=["t:1", "t:2"], seconds=0.5, producer="7/mutepro-1"),
        ])
        assert (b.batch_id, b.tasks, b.rows, b.failed, b.held) == (7, 2, 15, 1, 3)
        assert b.muted_partitions == ("t:1", "t:2")
        assert (b.write_seconds, b.flush_seconds) == (2.0, 1.0)
        assert b.as_dict()["muted_partitions"] == ["t:1", "t:2"]
        assert b.producers == ("7/mutepro-1",)
