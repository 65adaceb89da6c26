"""The write loop every form of the sink shares: one task's Arrow batches through the worker's MuteProducer.

Arrow end to end (the JVM sends Arrow to Python workers anyway): each column is converted once per batch with
``to_pylist()``, then a tight loop produces. No per-row delivery callback: failures come from the producer's
errors-only default callback (:class:`~mutepro.spark.cache.ErrorLog`), the other figures from counter deltas.

The task is the unit of delivery: it ends with a flush (:func:`~mutepro.spark.flushing.flush_task`, which
re-sends what is stuck in flight to a stalled broker) and succeeds only when every row it produced was delivered;
otherwise it raises :class:`~mutepro.spark.errors.SinkDeliveryError` naming topic, partition and the Kafka error,
and Spark retries it (at least once, as with Spark's own sink).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mutepro.errors import ConfigError
from mutepro.logs import get_logger
from mutepro.producer import MuteProducer
from mutepro.spark import cache
from mutepro.spark.errors import SinkDeliveryError
from mutepro.spark.figures import TaskFigures
from mutepro.spark.flushing import flush_task
from mutepro.spark.identity import BATCH_HEADER, ID_HEADER, ROW_HEADER, TaskIds
from mutepro.spark.schema import WritePlan

log = get_logger("mutepro.spark")

__all__ = ["BATCH_HEADER", "ID_HEADER", "ROW_HEADER", "task_labels", "write_task"]
_FULL_QUEUE_PAUSE_S = 0.05
_METADATA_WAIT_S = 10.0
_EVENT_KINDS = frozenset({"mute", "remute", "unmute"})
_EVENTS_PER_TASK = 200  # a flapping partition must not blow up a task's figures


def task_labels(run: str, batch: int | None) -> tuple[str, int, int]:
    """(batch header value, Spark partition id, attempt) of the running task.

    Streaming tasks (data source and ``foreachBatch`` alike) carry the query id and the batch id as local
    properties; a batch write has neither and uses ``run`` (a write id chosen on the driver) and ``batch``.
    """
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:  # called outside a task (unit tests): one partition, first attempt
        return f"{run}:{batch if batch is not None else 0}", 0, 0
    query = ctx.getLocalProperty("sql.streaming.queryId") or run
    local_batch = ctx.getLocalProperty("streaming.sql.batchId")
    batch_id = batch if batch is not None else (int(local_batch) if local_batch is not None else 0)
    return f"{query}:{batch_id}", ctx.partitionId(), ctx.attemptNumber()


def write_task(batches: Iterable[Any], plan: WritePlan, run: str, batch: int | None = None) -> TaskFigures:
    """Produce every row of ``batches`` (``pyarrow.RecordBatch``), flush, and return the task's figures."""
    options = plan.options
    label, part, attempt = task_labels(run, batch)
    worker = cache.worker_for(options)
    if len(worker.producer):
        # Messages left over from a task that never reached its flush (killed mid-way): they must not count
        # for this task. Start from a fresh producer.
        cache.discard(options)
        worker = cache.worker_for(options)
    producer, errors = worker.producer, worker.errors
    if options.topic:
        # a fresh worker learns the topic (and the mutes other workers share through Redis) before its first row
        producer.wait_for_topic(options.topic, _METADATA_WAIT_S)
    errors.reset()
    counters = producer.counters
    before = (counters.rerouted, counters.held, counters.rescued)
    started = time.monotonic()
    rows = 0
    ids = TaskIds.for_task(options.id_format, label, part) if options.id_headers else None
    try:
        for record_batch in batches:
            rows += _write_batch(producer, record_batch, plan, ids, part, rows)
        flush_from = time.monotonic()
        left, inflight_rescues = flush_task(producer, options.flush_timeout_s, options.hedge_after_s)
    except BaseException:
        cache.discard(options)
        raise
    ended = time.monotonic()
    events = _new_events(worker)
    figures = TaskFigures(
        partition=part, attempt=attempt, producer=f"{os.getpid()}/{producer.name}", rows=rows,
        rerouted=counters.rerouted - before[0], held=counters.held - before[1], rescued=counters.rescued - before[2],
        failed=errors.count, inflight_rescues=inflight_rescues, hedged=events.hedged,
        muted=[f"{t}:{p}" for t, ps in producer.mute_manager.muted_partitions().items() for p in ps],
        seconds=round(ended - started, 3), flush_seconds=round(ended - flush_from, 3),
        events=events.rows,
    )
    if errors.count or left:
        message = _failure_message(producer, errors, left, rows, label, part)
        cache.discard(options)
        log.error("spark_task_failed", batch=label, **vars(figures), error=message)
        raise SinkDeliveryError(message)
    log.info("spark_task_written", batch=label, **vars(figures))
    return figures


@dataclass(frozen=True)
class _Events:
    rows: list[list[object]]  # [kind, "topic:partition", broker, epoch s], at most _EVENTS_PER_TASK
    hedged: int  # mutes by the flush hedge among them


def _new_events(worker: cache.Worker) -> _Events:
    """The producer's mute decisions since the previous task of this worker, stamped with wall-clock time.

    Reported per task, not per batch: a worker's producer decides between tasks too (its tick thread unmutes
    after probes), and those decisions belong to whichever task of this worker comes next. The flush hedge
    only acts inside a task's flush, so its mutes are always this task's.
    """
    events = [e for e in worker.producer.mute_manager.events if e.at > worker.events_seen]
    if not events:
        return _Events([], 0)
    hedged = sum(1 for e in events if e.kind == "mute" and e.detail.get("rule") == "flush_hedge")
    worker.events_seen = events[-1].at
    # the manager's clock is the producer's (time.monotonic unless a test injects one): shift to epoch seconds
    # so that the driver can place the events on its own timeline
    offset = time.time() - time.monotonic()
    rows: list[list[object]] = [
        [e.kind, f"{e.topic}:{e.partition}", e.broker, round(e.at + offset, 3)]
        for e in events if e.kind in _EVENT_KINDS
    ]
    return _Events(rows[-_EVENTS_PER_TASK:], hedged)


def _write_batch(
    producer: MuteProducer, record_batch: Any, plan: WritePlan, ids: TaskIds | None, part: int, start: int
) -> int:
    options = plan.options
    columns = {name.lower(): record_batch.column(i) for i, name in enumerate(record_batch.schema.names)}
    n = record_batch.num_rows
    values = columns["value"].to_pylist()
    keys = columns["key"].to_pylist() if plan.has_key else [None] * n
    produce = producer.produce
    if plan.simple and options.topic is not None:  # simple implies the topic option is set (RowPlan.simple)
        # the whole loop in one call (C on the fast path); it stops at a row the queue has no room for.
        # No identity: a str prefix with fixed None writes no headers.
        fixed_topic = options.topic
        name, prefix, fixed = (ids.name, ids.prefix, ids.fixed) if ids is not None else (ROW_HEADER, "", None)
        row_keys = keys if plan.has_key else None
        # MuteProducer._produce_rows is annotated with the older str prefix; it passes a bytes one through to C
        rows_prefix: Any = prefix
        i = 0
        while i < n:
            i = producer._produce_rows(fixed_topic, values, row_keys, fixed, name, rows_prefix, start, i)
            if i < n:
                row_ids = ids.headers(start + i) if ids is not None else None
                _produce_when_room(producer, fixed_topic, values[i], keys[i], -1, row_ids)
                i += 1
        return n
    topics = columns["topic"].to_pylist() if plan.has_topic_column and not options.topic else None
    partitions = columns["partition"].to_pylist() if plan.has_partition else None
    user_headers = columns["headers"].to_pylist() if plan.has_headers else None
    for i in range(n):
        topic = topics[i] if topics is not None else options.topic
        if topic is None:
            raise ConfigError(
                f"row {start + i} of Spark partition {part}: column 'topic' is null and no 'topic' option "
                "is set; set .option('topic', ...) or fill the column"
            )
        partition = partitions[i] if partitions is not None and partitions[i] is not None else -1
        headers: list[tuple[str, Any]] | None = None
        if user_headers is not None and user_headers[i]:
            headers = [(h["key"], h["value"]) for h in user_headers[i]]
        if ids is not None:
            row_ids = ids.headers(start + i)
            headers = row_ids if headers is None else headers + row_ids
        try:
            produce(topic, values[i], keys[i], partition, headers=headers)
        except BufferError:
            _produce_when_room(producer, topic, values[i], keys[i], partition, headers)
    return n


def _produce_when_room(producer: MuteProducer, topic: str, value: Any, key: Any, partition: int, headers: Any) -> None:
    # librdkafka's queue is full: serve delivery reports until it has room. Bounded by message.timeout.ms in
    # effect: queued messages are delivered or fail by then, and either frees room.
    while True:
        producer.poll(_FULL_QUEUE_PAUSE_S)
        try:
            producer.produce(topic, value, key, partition, headers=headers)
            return
        except BufferError:
            continue


def _failure_message(
    producer: MuteProducer, errors: cache.ErrorLog, left: int, rows: int, label: str, part: int
) -> str:
    parts = [f"mutepro sink: Spark partition {part} of batch {label}: "]
    if errors.count:
        first = "; ".join(f"topic {t!r} partition {p}: {e} x{n}" for (t, p, e), n in errors.first.items())
        parts.append(f"{errors.count} of {rows} rows were not delivered ({first})")
    if left:
        stuck = [
            f"topic {t!r} partition {p} ({info['outstanding']} outstanding)"
            for t, ps in producer.metrics()["partitions"].items() for p, info in ps.items() if info["outstanding"]
        ]
        parts.append(
            f"{'; ' if errors.count else ''}{left} rows still undelivered when mutepro.flushTimeout ran out "
            f"({', '.join(stuck[:5]) or 'unassigned partitions'})"
        )
    parts.append("; the task fails so that Spark retries it")
    return "".join(parts)
