"""The sink's write loop through a plain ``confluent_kafka.Producer``: the ceiling for mutepro's Spark sink.

Benchmark tooling, not a sink: no muting, no rescue, no figures. It writes what mutepro's sink writes (the same
Arrow batches through ``mapInArrow``, the same ``x-mutepro-id`` header per row built by the same C function, the
same client defaults: murmur2, a 128 MB queue, errors-only delivery reports) with one cached producer per Python
worker, so that ``benchmarks/spark_bench.py`` can tell how much of the gap to Spark's Java sink is mutepro's own
cost and how much is librdkafka driven from Python. It lives in the package because Spark's Python workers
import it by name.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

_producers: dict[tuple[tuple[str, str], ...], Any] = {}
_failed: list[int] = [0]


def write(df: Any, topic: str, client: Mapping[str, str]) -> int:
    """Write ``df``'s ``value`` column to ``topic``; the number of rows written (raises if any failed)."""
    task = functools.partial(_write_partition, topic=topic, client=tuple(sorted(client.items())))
    rows = df.mapInArrow(task, "rows long").collect()
    return sum(r.rows for r in rows)


def _producer(client: tuple[tuple[str, str], ...]) -> Any:
    from confluent_kafka import Producer

    producer = _producers.get(client)
    if producer is None:
        def on_error(err: Any, msg: Any) -> None:
            if err is not None:
                _failed[0] += 1

        conf: dict[str, Any] = {
            "partitioner": "murmur2_random", "queue.buffering.max.kbytes": "131072", **dict(client),
            "delivery.report.only.error": True, "on_delivery": on_error,
        }
        producer = _producers[client] = Producer(conf)
    return producer


def _write_partition(batches: Iterator[Any], *, topic: str, client: tuple[tuple[str, str], ...]) -> Iterator[Any]:
    import pyarrow as pa
    from pyspark import TaskContext

    from mutepro.producer.accel import fastpath
    from mutepro.spark.identity import ID_HEADER, task_prefix

    ctx = TaskContext.get()
    part = ctx.partitionId() if ctx is not None else 0
    producer = _producer(client)
    produce, poll, row_id = producer.produce, producer.poll, fastpath.row_id
    prefix = task_prefix("plain:0", part)
    _failed[0] = 0
    rows = 0
    for record_batch in batches:
        values = record_batch.column(record_batch.schema.get_field_index("value")).to_pylist()
        for value in values:
            ids = [(ID_HEADER, row_id(prefix, rows))]
            while True:
                try:
                    produce(topic, value, None, headers=ids)
                    break
                except BufferError:
                    poll(0.05)
            rows += 1
    left = producer.flush(120)
    if left or _failed[0]:
        raise RuntimeError(f"plain ceiling writer: {left} undelivered, {_failed[0]} failed")
    yield pa.RecordBatch.from_pydict({"rows": [rows]})


def forget() -> None:
    """Drop the cached producers (tests)."""
    for producer in _producers.values():
        producer.flush(10)
    _producers.clear()
