"""The demo's two Structured Streaming jobs: the same keyed rate stream, written through mutepro's sink and
through Spark's built-in Kafka sink, as two queries of one local SparkSession.

``local[4]``: four task slots on however many cores. Each query runs two tasks per micro-batch; a task of the
built-in sink blocked on a stalled broker holds its slot (it waits, it does not compute), and with only two
slots it would starve the other query of slots — the comparison would then measure Spark's scheduler, not the
sinks.

A query that fails (a task's delivery timed out) is restarted from its checkpoint a second later, as a job
supervisor would, at most :data:`MAX_RESTARTS` times; the failure and the restart are recorded.
"""

from __future__ import annotations

import json
import tempfile
import time
from datetime import datetime
from typing import Any

from mutepro.demo.readback import encode_value_sql
from mutepro.demo.samples import BatchSample, Event, JobSamples
from mutepro.errors import PrerequisiteError
from mutepro.spark.standalone import on_cluster
from mutepro.spark.workerenv import workers_import_this_mutepro

MAX_RESTARTS = 10
KEYS = 1000  # distinct keys: every partition gets rows, and keys keep their partition while it is healthy
_PAD = "x" * 180  # ~210-byte values
_RESTART_PAUSE_S = 1.0


#: the demo's own Spark: four task slots in this process (see the module docstring)
LOCAL_MASTER = "local[4]"


def session(jars: str, master: str = LOCAL_MASTER) -> Any:
    """A SparkSession on ``master`` (``local[4]``, or a cluster's URL such as the one ``mutepro spark cluster
    start`` prints) with the built-in Kafka sink's jars on its class path (shipped to executors too), quiet logs."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as err:
        raise PrerequisiteError(
            "the Spark demo needs PySpark: pip install 'mutepro[spark]' (or run `mutepro demo --plain`)"
        ) from err
    builder = (
        # Python workers import the same mutepro as this process
        workers_import_this_mutepro(SparkSession.builder).master(master).appName("mutepro-demo")
        .config("spark.jars", jars)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.streaming.numRecentProgressUpdates", "2000")
        .config("spark.sql.streaming.forceDeleteTempCheckpointLocation", "true")
        .config("spark.ui.showConsoleProgress", "false")  # the live view owns the terminal
        # stop() waits for the running micro-batch; bounded, so a batch stuck on the stalled broker cannot hang
        .config("spark.sql.streaming.stopTimeout", "30s")
    )
    spark = on_cluster(builder, master).getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    return spark


class StreamJob:
    """One streaming query writing the rate stream to ``topic``, restarted from its checkpoint if it fails."""

    def __init__(
        self, spark: Any, samples: JobSamples, *, sink: str, topic: str, rate: int, options: dict[str, str],
    ) -> None:
        self.spark = spark
        self.samples = samples
        self.sink = sink  # "mutepro" (foreachBatch KafkaSink) or "kafka" (Spark's built-in sink)
        self.topic = topic
        self.rate = rate
        self.options = options
        self.t0_epoch = 0.0  # set when the demo's timeline starts (after the warm-up)
        self.checkpoint = tempfile.mkdtemp(prefix=f"mutepro-demo-{sink}-")
        self.query: Any = None
        self.restarts = 0
        self.muted: tuple[str, ...] = ()
        self.last_batch_s: float | None = None
        self._committed: dict[int, int] = {}  # batch id -> rows (a replayed batch counts once)
        self._seen_progress: set[tuple[str, int]] = set()
        self._figures: list[Any] = []  # BatchFigures of every batch the mutepro sink wrote (driver side)
        self._figures_done = 0
        self._failed_at: float | None = None
        self._kafka_sink: Any = None

    def start(self) -> StreamJob:
        from mutepro.spark import KafkaSink

        source = (self.spark.readStream.format("rate").option("rowsPerSecond", self.rate)
                  .option("numPartitions", 2).load())
        rows = source.selectExpr(f"cast(value % {KEYS} as string) as key",
                                 f"{encode_value_sql(_PAD)} as value")
        writer = rows.writeStream.option("checkpointLocation", self.checkpoint).trigger(processingTime="1 second")
        if self.sink == "mutepro":
            if self._kafka_sink is None:
                self._kafka_sink = KafkaSink(topic=self.topic, options=self.options)
            writer = writer.foreachBatch(self._write)
        else:
            writer = writer.format("kafka").options(**self.options).option("topic", self.topic)
        self.query = writer.queryName(f"demo_{self.sink}").start()
        return self

    def last_rows(self) -> int:
        """Rows of the query's last completed micro-batch (0 before the first)."""
        last = self.query.lastProgress if self.query is not None else None
        return 0 if last is None else int(json.loads(last.json).get("numInputRows", 0))

    def _write(self, df: Any, batch_id: int) -> None:
        # foreachBatch runs this on the driver: the sink writes from the executors and returns the figures
        self._figures.append(self._kafka_sink(df, batch_id))

    def poll(self, now_s: float) -> None:
        """Collect new progress and sink figures; restart a failed query after a pause."""
        query = self.query
        if query is None:
            return
        self._collect(query)
        if query.isActive:
            return
        if self._failed_at is None:
            error = query.exception()
            text = "stopped" if error is None else str(error)
            self.samples.events.append(Event(round(now_s, 2), "failed", _first_line(text)))
            self._failed_at = now_s
        elif now_s - self._failed_at >= _RESTART_PAUSE_S and self.restarts < MAX_RESTARTS:
            self.restarts += 1
            self._failed_at = None
            self.samples.events.append(Event(round(now_s, 2), "restarted"))
            self.start()

    def stop(self, wait_s: float = 20.0) -> None:
        """Let a running micro-batch finish (bounded), then stop the query and record the last figures."""
        query = self.query
        if query is None:
            return
        deadline = time.monotonic() + wait_s
        while query.isActive and query.status.get("isTriggerActive") and time.monotonic() < deadline:
            query.awaitTermination(0.2)
        query.stop()
        self._collect(query)
        self.samples.committed = sum(self._committed.values())

    def _collect(self, query: Any) -> None:
        for progress in query.recentProgress:
            key = (progress.runId, progress.batchId)
            if key in self._seen_progress:
                continue
            self._seen_progress.add(key)
            p = json.loads(progress.json)
            rows = int(p.get("numInputRows", 0))
            seconds = p.get("durationMs", {}).get("triggerExecution", 0) / 1000.0
            start = _epoch(p["timestamp"]) - self.t0_epoch
            self._committed[int(p["batchId"])] = rows
            self.samples.batches.append(BatchSample(int(p["batchId"]), round(start, 2), round(seconds, 3), rows))
            self.last_batch_s = seconds
        self.samples.committed = sum(self._committed.values())
        new = self._figures[self._figures_done:]
        self._figures_done += len(new)
        at = round(time.time() - self.t0_epoch, 2)
        for figures in new:
            self.muted = figures.muted_partitions
            self.samples.muted.append((at, len(figures.muted_partitions)))
            for kind, where, _broker, at, who in figures.events:
                self.samples.events.append(Event(round(float(at) - self.t0_epoch, 2), str(kind), str(where), str(who)))


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if "Exception" in line or "Error" in line:
            return line.strip()[:240]
    return text.strip()[:240]
