"""The shared write loop, against a recording stand-in for the producer (no broker)."""

from __future__ import annotations

from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructField, StructType  # noqa: E402

from mutepro.errors import ConfigError  # noqa: E402
from mutepro.spark.core import BATCH_HEADER, ID_HEADER, ROW_HEADER, _write_batch, task_labels  # noqa: E402
from mutepro.spark.identity import TaskIds, row_identity, task_prefix  # noqa: E402
from mutepro.spark.options import parse_options  # noqa: E402
from mutepro.spark.schema import plan_write  # noqa: E402
from tests.reference.rows import produce_rows  # noqa: E402

HEADERS = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


class Recorder:
    """produce() records its arguments; the first ``full`` calls raise BufferError like a full queue."""

    def __init__(self, full: int = 0) -> None:
        self.sent: list[tuple[Any, ...]] = []
        self.full = full
        self.polls = 0

    def produce(self, topic: str, value: Any, key: Any = None, partition: int = -1, *, headers: Any = None) -> None:
        if self.full:
            self.full -= 1
            raise BufferError("queue full")
        self.sent.append((topic, value, key, partition, headers))

    def poll(self, timeout: float) -> int:
        self.polls += 1
        return 0

    def _produce_rows(self, *args: Any) -> int:
        return produce_rows(self.produce, *args)


def plan(fields: list[StructField], **options: str) -> Any:
    return plan_write(StructType(fields), parse_options({"kafka.bootstrap.servers": "b:9092", **options}))


class TestWriteBatch:
    def test_simple_path_adds_one_binary_identity_header(self) -> None:
        """By default value-only rows go to the option's topic with one x-mutepro-id header: the task's prefix and
        the row index in the task."""
        rec = Recorder()
        batch = pa.RecordBatch.from_pydict({"value": ["a", "b"]})
        p = plan([StructField("value", StringType())], topic="t")
        n = _write_batch(rec, batch, p, TaskIds.for_task(p.options.id_format, "q:4", 1), 1, 10)
        assert n == 2
        assert rec.sent[1] == ("t", "b", None, -1, [(ID_HEADER, task_prefix("q:4", 1) + (11).to_bytes(8, "big"))])

    def test_strings_format_writes_the_two_older_headers(self) -> None:
        """mutepro.idFormat=strings: x-mutepro-batch and x-mutepro-row, which read back as the same identity."""
        rec = Recorder()
        batch = pa.RecordBatch.from_pydict({"value": ["a", "b"]})
        p = plan([StructField("value", StringType())], topic="t", **{"mutepro.idFormat": "Strings"})
        _write_batch(rec, batch, p, TaskIds.for_task(p.options.id_format, "q:4", 1), 1, 10)
        old = rec.sent[1][4]
        assert old == [(BATCH_HEADER, b"q:4"), (ROW_HEADER, "1:11")]
        assert row_identity([(k, v.encode() if isinstance(v, str) else v) for k, v in old]) == row_identity(
            [(ID_HEADER, task_prefix("q:4", 1) + (11).to_bytes(8, "big"))])

    def test_general_path_keeps_user_headers_partitions_topics(self) -> None:
        """Per-row topics, explicit (or null) partitions and user headers are passed through, ids appended."""
        rec = Recorder()
        fields = [StructField("value", BinaryType()), StructField("key", BinaryType()),
                  StructField("topic", StringType()), StructField("partition", IntegerType()),
                  StructField("headers", HEADERS)]
        batch = pa.RecordBatch.from_pydict({
            "value": [b"v0", b"v1"], "key": [b"k0", None], "topic": ["t1", "t2"], "partition": [3, None],
            "headers": [[{"key": "h", "value": None}], []],
        })
        _write_batch(rec, batch, plan(fields, **{"mutepro.idHeaders": "false"}), None, 0, 0)
        assert rec.sent == [("t1", b"v0", b"k0", 3, [("h", None)]), ("t2", b"v1", None, -1, None)]
        rec.sent.clear()
        _write_batch(rec, batch, plan(fields), TaskIds.for_task("binary", "q:0", 2), 2, 5)
        ids = [(ID_HEADER, task_prefix("q:0", 2) + (5).to_bytes(8, "big"))]
        assert rec.sent[0][4] == [("h", None), *ids]

    def test_null_topic_fails_naming_the_column(self) -> None:
        """A null topic with no topic option fails naming the column and the option."""
        batch = pa.RecordBatch.from_pydict({"value": ["a"], "topic": [None]}, schema=pa.schema(
            [("value", pa.string()), ("topic", pa.string())]))
        fields = [StructField("value", StringType()), StructField("topic", StringType())]
        with pytest.raises(ConfigError, match="'topic' is null"):
            _write_batch(Recorder(), batch, plan(fields), TaskIds.for_task("binary", "q:0", 0), 0, 0)

    @pytest.mark.parametrize("id_format", ["binary", "strings"])
    def test_full_queue_is_served_then_retried(self, id_format: str) -> None:
        """BufferError: delivery reports are served and the same row retried, with the same headers the loop
        writes; nothing lost or reordered."""
        rec, whole = Recorder(full=3), Recorder()
        batch = pa.RecordBatch.from_pydict({"value": ["a", "b"]})
        ids = TaskIds.for_task(id_format, "q:0", 3)
        _write_batch(rec, batch, plan([StructField("value", StringType())], topic="t"), ids, 3, 0)
        _write_batch(whole, batch, plan([StructField("value", StringType())], topic="t"), ids, 3, 0)
        assert [s[1] for s in rec.sent] == ["a", "b"]
        assert rec.polls == 3
        assert rec.sent == whole.sent  # the per-row retry (Python) wrote what the loop writes


class TestTaskLabels:
    def test_outside_a_task(self) -> None:
        """Outside Spark (no TaskContext) the run id and batch make the label; partition 0, attempt 0."""
        assert task_labels("write-1", None) == ("write-1:0", 0, 0)
        assert task_labels("foreachBatch", 5) == ("foreachBatch:5", 0, 0)


class TestNewEvents:
    def test_counts_the_flush_hedges_mutes_among_the_tasks_events(self) -> None:
        """Mutes whose verdict came from the flush hedge are counted; other kinds and rules are not."""
        from types import SimpleNamespace

        from mutepro.mute.events import MuteEvent, MuteEventKind
        from mutepro.spark.core import _new_events

        def event(kind: MuteEventKind, rule: str, at: float) -> MuteEvent:
            return MuteEvent(kind, "t", 1, 2, "slow_call", {"rule": rule}, at)

        events = [event(MuteEventKind.MUTE, "flush_hedge", 1.0), event(MuteEventKind.MUTE, "outlier", 2.0),
                  event(MuteEventKind.REMUTE, "flush_hedge", 3.0), event(MuteEventKind.MUTE, "flush_hedge", 4.0)]
        worker = SimpleNamespace(producer=SimpleNamespace(mute_manager=SimpleNamespace(events=events)),
                                 events_seen=1.5)
        got = _new_events(worker)  # type: ignore[arg-type]
        assert got.hedged == 1 and [r[0] for r in got.rows] == ["mute", "remute", "mute"]
        assert worker.events_seen == 4.0
