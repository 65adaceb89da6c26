"""What the Spark sink's row identity costs: CPU microseconds per row of the sink's write loop with each encoding.

    python benchmarks/identity_cost.py                              # starts a 1-broker cluster, 5 repetitions
    python benchmarks/identity_cost.py --bootstrap 127.0.0.1:9092   # an existing cluster
    python benchmarks/identity_cost.py --nowhere                    # no broker: rows stay queued, loop CPU only

Encodings (``mutepro.idFormat`` / ``mutepro.idHeaders``):

- ``none``: no identity header (``mutepro.idHeaders=false``), the anchor;
- ``strings``: ``x-mutepro-batch`` (the batch label) and ``x-mutepro-row`` (``<partition>:<row>``), the older
  format;
- ``binary``: one ``x-mutepro-id`` header of 29 bytes (mutepro.spark.identity), the default.

Clients: ``mutepro`` (the sink's loop and producer) and ``plain`` (the same rows through
``confluent_kafka.Producer``, headers built per row in Python: what the client library itself spends on them).

One sample writes ``--rows`` rows of ``--size`` bytes, in Arrow batches of 10,000 rows (Spark's
``maxRecordsPerBatch``), through the sink's own loop (``mutepro.spark.core._write_batch``) into the producer a sink
task would use (``mutepro.spark.cache.worker_for``, a queue large enough for every row), then flushes. The figures
are the process's CPU time (``time.process_time``: the loop's thread, librdkafka's and mutepro's) per row over the
loop, and over loop and flush (``total``: librdkafka writes the headers to the wire after the loop); and the loop's
own thread alone (``loop_thread``). The encodings take turns within each repetition, in an order rotated every
repetition, so drift hits each alike; the result gives per encoding the median and the range over repetitions and
the extra cost over ``none`` measured in the same repetition. With ``--nowhere`` nothing is delivered (the queue is
purged after each sample) and the producer routes without a broker's metadata, so only the loop's figure means
anything. Writes ``identity_cost.json`` to ``--out``.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql.types import BinaryType, StructField, StructType

from mutepro.spark import cache
from mutepro.spark.core import _write_batch
from mutepro.spark.identity import TaskIds
from mutepro.spark.options import parse_options
from mutepro.spark.schema import plan_write

ENCODINGS = ("none", "strings", "binary")
ARROW_BATCH_ROWS = 10_000  # spark.sql.execution.arrow.maxRecordsPerBatch's default
LABEL = f"{uuid.uuid4()}:17"  # a streaming query id and batch id, as a task's label


def _options(encoding: str, bootstrap: str, topic: str, rows: int) -> Any:
    raw = {
        "kafka.bootstrap.servers": bootstrap, "topic": topic,
        # every row fits the queue: the loop never waits for room (2x: a slow flush leaves no row behind)
        "kafka.queue.buffering.max.messages": str(2 * rows),
        "kafka.queue.buffering.max.kbytes": "2097151",
        "mutepro.idHeaders": "false" if encoding == "none" else "true",
        "mutepro.idFormat": "strings" if encoding == "strings" else "binary",
    }
    return parse_options(raw)


def _batches(rows: int, size: int) -> list[Any]:
    value = b"x" * size
    out = []
    for start in range(0, rows, ARROW_BATCH_ROWS):
        n = min(ARROW_BATCH_ROWS, rows - start)
        out.append(pa.RecordBatch.from_pydict({"value": pa.array([value] * n, pa.binary())}))
    return out


_plain: dict[str, Any] = {}


def _plain_producer(options: Any) -> Any:
    """The plain client with the sink's client settings, one per run (like the sink's cached producer)."""
    import confluent_kafka

    if "producer" not in _plain:
        conf = {**options.client_config(), "delivery.report.only.error": True, "on_delivery": _plain_report}
        _plain["producer"] = confluent_kafka.Producer(conf)
    return _plain["producer"]


def _plain_report(err: Any, msg: Any) -> None:
    if err is not None:
        _plain["failed"] = _plain.get("failed", 0) + 1


def _plain_loop(producer: Any, batches: list[Any], topic: str, ids: TaskIds | None) -> None:
    """The sink's loop without mutepro (as mutepro.testing.plain_sink writes): the headers built per row in
    Python, produce() until the queue is full (it never is here)."""
    produce = producer.produce
    start = 0
    for batch in batches:
        values = batch.column(0).to_pylist()
        if ids is None:
            for value in values:
                produce(topic, value)
        else:
            headers = ids.headers
            for i, value in enumerate(values, start):
                produce(topic, value, headers=headers(i))
        start += len(values)


def sample(
    client: str, encoding: str, args: argparse.Namespace, bootstrap: str, topic: str, batches: list[Any]
) -> dict[str, float]:
    """One encoding's pass over every row: CPU us per row over the loop and over loop and flush."""
    options = _options(encoding, bootstrap, topic, args.rows)
    plan = plan_write(StructType([StructField("value", BinaryType())]), options)
    ids = TaskIds.for_task(options.id_format, LABEL, 3) if options.id_headers else None
    # one producer for every encoding (the identity options are not in the sink's cache key)
    producer = cache.worker_for(options).producer if client == "mutepro" else _plain_producer(options)
    gc.collect()
    cpu0, wall0, own0 = time.process_time(), time.perf_counter(), time.thread_time()
    if client == "mutepro":
        start = 0
        for batch in batches:
            start += _write_batch(producer, batch, plan, ids, 3, start)
    else:
        _plain_loop(producer, batches, topic, ids)
    cpu1, wall1, own1 = time.process_time(), time.perf_counter(), time.thread_time()
    if args.nowhere:
        producer.purge()
        producer.poll(0)
        cpu2 = cpu1
    else:
        left = producer.flush(args.flush_timeout_s)
        if left:
            raise SystemExit(f"{encoding}: {left} rows not delivered within {args.flush_timeout_s} s")
        cpu2 = time.process_time()
    per_row = 1e6 / args.rows
    return {"loop_us": (cpu1 - cpu0) * per_row, "total_us": (cpu2 - cpu0) * per_row,
            "loop_thread_us": (own1 - own0) * per_row, "loop_wall_us": (wall1 - wall0) * per_row}


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def run(args: argparse.Namespace, bootstrap: str, topic: str) -> dict[str, Any]:
    batches = _batches(args.rows, args.size)
    cells = [(c, e) for c in args.clients for e in args.encodings]
    for client, encoding in cells:  # warm-up: metadata, the producers, allocator pools; not recorded
        sample(client, encoding, args, bootstrap, topic, batches[:2])
    reps: list[dict[str, dict[str, float]]] = []
    for rep in range(args.reps):
        order = cells[rep % len(cells):] + cells[:rep % len(cells)]
        got = {f"{c}/{e}": sample(c, e, args, bootstrap, topic, batches) for c, e in order}
        reps.append(got)
        print(f"rep {rep + 1}/{args.reps}: " + "  ".join(
            f"{c}/{e} {got[f'{c}/{e}']['loop_us']:.3f}" for c, e in cells), file=sys.stderr)
    figures: dict[str, Any] = {}
    for client, encoding in cells:
        cell, anchor = f"{client}/{encoding}", f"{client}/none"
        entry: dict[str, Any] = {}
        for what in ("loop_us", "total_us", "loop_thread_us", "loop_wall_us"):
            entry[what] = _spread([r[cell][what] for r in reps])
            if encoding != "none" and "none" in args.encodings:
                entry[f"extra_{what}"] = _spread([r[cell][what] - r[anchor][what] for r in reps])
        if encoding == "binary" and "strings" in args.encodings:  # the two encodings paired within each repetition
            entry["binary_minus_strings_loop_us"] = _spread(
                [r[cell]["loop_us"] - r[f"{client}/strings"]["loop_us"] for r in reps])
        figures[cell] = entry
    cache.close_all()
    if "producer" in _plain:
        _plain.pop("producer").flush(10)
    return {
        "meta": {
            "command": "python benchmarks/identity_cost.py " + " ".join(sys.argv[1:]),
            "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
        },
        "config": {"rows": args.rows, "size": args.size, "reps": args.reps, "nowhere": args.nowhere,
                   "clients": list(args.clients), "encodings": list(args.encodings)},
        "encodings": figures,
        "runs": reps,
    }


@contextmanager
def _cluster(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    if args.nowhere:
        yield "127.0.0.1:1", "identity-cost"
        return
    from confluent_kafka.admin import AdminClient

    from mutepro.cluster import ClusterSpec, LocalCluster, create_topic

    def with_topic(bootstrap: str) -> str:
        topic = f"identity-cost-{uuid.uuid4().hex[:8]}"
        create_topic(AdminClient({"bootstrap.servers": bootstrap}), topic, partitions=6, replication_factor=1)
        return topic

    if args.bootstrap:
        yield args.bootstrap, with_topic(args.bootstrap)
        return
    with LocalCluster(ClusterSpec(brokers=1)) as cluster:
        yield cluster.bootstrap_servers, with_topic(cluster.bootstrap_servers)
        cache.close_all()  # the producers go before the broker


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--rows", type=int, default=200_000, help="rows per sample (default 200,000)")
    p.add_argument("--size", type=int, default=512, help="bytes per row's value (default 512)")
    p.add_argument("--reps", type=int, default=5, help="repetitions; each encoding once per repetition (default 5)")
    p.add_argument("--clients", default="mutepro,plain",
                   help="mutepro (the sink's loop), plain (the same loop through confluent_kafka.Producer), or both")
    p.add_argument("--encodings", default=",".join(ENCODINGS), help=f"of {', '.join(ENCODINGS)} (default all)")
    p.add_argument("--bootstrap", help="use this cluster instead of starting a 1-broker one")
    p.add_argument("--nowhere", action="store_true", help="no broker: loop CPU only, rows purged")
    p.add_argument("--flush-timeout-s", type=float, default=120.0, help="per sample (default 120 s)")
    p.add_argument("--out", default="benchmarks/results", help="directory for identity_cost.json")
    args = p.parse_args(argv)
    args.clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    if not args.clients or set(args.clients) - {"mutepro", "plain"}:
        p.error(f"--clients: mutepro, plain or both, got {args.clients}")
    args.encodings = [e.strip() for e in args.encodings.split(",") if e.strip()]
    if not args.encodings or set(args.encodings) - set(ENCODINGS):
        p.error(f"--encodings: of {', '.join(ENCODINGS)}, got {args.encodings}")
    if args.rows < ARROW_BATCH_ROWS or args.reps < 1 or args.size < 1:
        p.error(f"--rows must be >= {ARROW_BATCH_ROWS}, --reps and --size >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    with _cluster(args) as (bootstrap, topic):
        result = run(args, bootstrap, topic)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "identity_cost.json").write_text(json.dumps(result, indent=2) + "\n")
    for cell, entry in result["encodings"].items():
        loop, total = entry["loop_us"], entry["total_us"]
        extra = entry.get("extra_loop_us")
        more = f"  extra over none: {extra['median']:.3f} [{extra['min']:.3f}, {extra['max']:.3f}]" if extra else ""
        print(f"{cell:16s} loop {loop['median']:.3f} [{loop['min']:.3f}, {loop['max']:.3f}] us/row   "
              f"total {total['median']:.3f} [{total['min']:.3f}, {total['max']:.3f}]{more}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
