"""``format("mutepro")``: a PySpark Python data source (Spark 4) writing through MuteProducer.

    mutepro.spark.register(spark)                 # once per session
    df.write.format("mutepro").mode("append").option("kafka.bootstrap.servers", ...).option("topic", ...).save()
    df.writeStream.format("mutepro").option(...).option("checkpointLocation", ...).start()

How Spark drives it (PySpark 4.3, see the findings note): ``writer()``/``streamWriter()`` run once per write (per
micro-batch when streaming) in a driver-side Python process, where options and schema are checked, before any
task starts. Each task unpickles its own copy of the writer and calls ``write()`` with Arrow batches; the
commit message carries its figures. ``commit``/``abort`` run on the driver side with every task's message
(``None`` for a failed task): the rows are already in Kafka by then, so commit records the batch's figures and
abort says how much of a failed batch was written (Spark re-runs it, at least once, like its own Kafka sink).
Nothing is kept on the writer object between calls: Spark builds a fresh one for commit.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from mutepro.errors import ConfigError
from mutepro.logs import get_logger
from mutepro.spark.core import write_task
from mutepro.spark.figures import BatchFigures, TaskFigures
from mutepro.spark.options import parse_options
from mutepro.spark.schema import WritePlan, plan_write

log = get_logger("mutepro.spark")

FORMAT = "mutepro"


@dataclass
class FiguresMessage(WriterCommitMessage):
    """A task's commit message: its figures, as JSON (commit messages must pickle)."""

    figures: str


class MuteproDataSource(DataSource):
    """The ``mutepro`` format: Spark's Kafka sink schema and options, written through MuteProducer."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def writer(self, schema: Any, overwrite: bool) -> MuteproBatchWriter:
        _refuse_overwrite(overwrite)
        return MuteproBatchWriter(plan_write(schema, parse_options(self.options)), f"write-{uuid.uuid4().hex[:12]}")

    def streamWriter(self, schema: Any, overwrite: bool) -> MuteproStreamWriter:
        _refuse_overwrite(overwrite)
        return MuteproStreamWriter(plan_write(schema, parse_options(self.options)), "stream")


class MuteproBatchWriter(DataSourceArrowWriter):
    """``df.write.format("mutepro")``: every task writes its partition; commit logs the write's figures."""

    def __init__(self, plan: WritePlan, run: str) -> None:
        self.plan = plan
        self.run = run

    def write(self, iterator: Iterator[Any]) -> FiguresMessage:
        return FiguresMessage(write_task(iterator, self.plan, self.run).to_json())

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        log.info("spark_batch_written", write=self.run, **BatchFigures.of(None, _figures(messages)).as_dict())

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        _log_abort(self.run, None, messages)


class MuteproStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("mutepro")``: one write per micro-batch; commit logs the batch's figures."""

    def __init__(self, plan: WritePlan, run: str) -> None:
        self.plan = plan
        self.run = run

    def write(self, iterator: Iterator[Any]) -> FiguresMessage:
        return FiguresMessage(write_task(iterator, self.plan, self.run).to_json())

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.info("spark_batch_written", **BatchFigures.of(batchId, _figures(messages)).as_dict())

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        _log_abort(self.run, batchId, messages)


def register(spark: Any) -> None:
    """Make ``format("mutepro")`` available in ``spark`` (a SparkSession); call once per session.

    Also makes ``spark`` the JVM's active session on the calling thread: ``writeStream...start()`` finds a Python
    data source only through the active session of the JVM thread serving the call (Spark 4.x,
    ``DataSource.lookupDataSource`` asks ``SparkSession.getActiveSession``), while batch writes look in the session
    itself. The JVM thread behind a Python thread can change (py4j replaced the main thread's connection between a
    pytest fixture and its test), and then ``start()`` fails with ``DATA_SOURCE_NOT_FOUND`` although the source is
    registered. Calling ``register(spark)`` again right before ``start()``, on the thread that starts the stream,
    avoids it (registering again replaces the entry with the same class).

    A Spark Connect session (``SparkSession.builder.remote(...)``) registers the source on the server; it has no
    JVM on the client side, and the server looks sources up in the session itself.
    """
    spark.dataSource.register(MuteproDataSource)
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        return
    spark._jvm.SparkSession.setActiveSession(spark._jsparkSession)


def _refuse_overwrite(overwrite: bool) -> None:
    if overwrite:
        raise ConfigError(
            "save mode 'overwrite': a Kafka topic cannot be overwritten; use .mode('append') "
            "(Spark's Kafka sink refuses overwrite too)"
        )


def _figures(messages: list[WriterCommitMessage | None]) -> list[TaskFigures]:
    return [TaskFigures.from_json(m.figures) for m in messages if isinstance(m, FiguresMessage)]


def _log_abort(run: str, batch_id: int | None, messages: list[WriterCommitMessage | None]) -> None:
    done = _figures(messages)
    log.warning(
        "spark_batch_aborted", write=run, batch_id=batch_id, tasks_failed=sum(m is None for m in messages),
        rows_already_written=sum(t.rows for t in done),
        detail="rows already written stay in Kafka; Spark re-runs the batch (at least once)",
    )
