"""Spark sinks compared: mutepro's (foreachBatch and format("mutepro")) vs Spark's built-in Kafka sink.

    flock /tmp/mutepro-cluster.lock python benchmarks/spark_bench.py            # full run (~15 min, 2 cores)
    flock /tmp/mutepro-cluster.lock python benchmarks/spark_bench.py --quick    # smoke test (~3 min)

Starts its own cluster (``--brokers``, 3 by default) and one local[2] SparkSession (the built-in sink's jars from
``mutepro spark jars``), and writes ``<out>/<name>.json`` (``--name``, ``spark_bench`` by default). Same DataFrame,
same cluster, same run for all sinks; each run writes a fresh topic (12 partitions, ``--replication-factor``, 1 by
default) and is read back (count, distinct ids, missing). ``--acks`` sets both clients' acks (``all`` by default,
both clients' default too). With RF 3 and acks=all a stalled broker holds up every partition it follows as well as
those it leads, until the leaders drop it from their ISR (``replica.lag.time.max.ms``: 10 s on this cluster, 30 s
by Kafka's default):

    flock /tmp/mutepro-cluster.lock python benchmarks/spark_bench.py --replication-factor 3 --name spark_bench_rf3 \
        --scenarios stream_stalled

``--standalone`` runs the same on a Spark standalone cluster started for the run from PySpark's own jars (a master
and two 1-core workers, each task in its own executor JVM with its own Python workers):

    flock /tmp/mutepro-cluster.lock python benchmarks/spark_bench.py --standalone --scenarios happy \
        --name spark_bench_standalone

Batch writes (``spark.range(rows)`` of 512-byte values, 2 tasks), repetitions interleaved:

- ``happy``: nothing wrong. Goals: mutepro >= 1.5x built-in (defaults) and >= 0.9x built-in (tuned).
- ``stalled``: broker 2 SIGSTOPped 1 s into the write for ``--stall-s``. Goal: every row present.
- ``limping``: broker 2 stopped 80 % of every second for the whole write. Goal: every row present.

Streaming (``rate-micro-batch`` source, trigger 1 s), ``stream_stalled``: broker 2 stalled for ``--stall-s``
after a warm-up. Per-batch write times (``addBatch``) before/during the stall and rows/s during vs before.
Goals: an affected batch < 3x an unaffected one; rows/s during >= 0.8x before.

Sinks: ``builtin_default`` (Java defaults: 16 KB batches, linger 0), ``builtin_tuned`` (``kafka.batch.size``
1 MB, ``kafka.linger.ms`` 5 like librdkafka's), ``mutepro_ds`` (format "mutepro"), ``mutepro_fb``
(foreachBatch ``KafkaSink``). Fault scenarios give both clients the same delivery timeout.
Every loop is bounded in rows and time; every fault is a context manager that always resumes the broker.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from mutepro.cluster.launcher import LocalCluster
from mutepro.cluster.spec import ClusterSpec
from mutepro.cluster.topics import create_topic
from mutepro.spark import KafkaSink, register
from mutepro.spark.jars import resolve_spark_kafka
from mutepro.spark.workerenv import workers_import_this_mutepro
from mutepro.testing import plain_sink

SINKS = ("builtin_default", "builtin_tuned", "mutepro_ds", "mutepro_fb")
#: Not run unless asked (``--sinks ...,plain_ceiling``): the sink's loop through a plain confluent_kafka.Producer.
EXTRA_SINKS = ("plain_ceiling",)
BATCH_SCENARIOS = ("happy", "stalled", "limping")
VALUE_PAD = "x" * 500  # + a 12-digit id = 512 bytes
PARTITIONS = 12


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jars = resolve_spark_kafka()
    if jars.fell_back:
        print(f"note: spark-sql-kafka-0-10 {jars.wanted} is not published; using {jars.version}", file=sys.stderr)
    result: dict[str, Any] = {
        "config": {
            **vars(args), "connector": jars.version, "spark": jars.wanted, "load_before": os.getloadavg(),
            # command, date and machine in the result itself: the report states them (benchmarks/make_report.py)
            "command": "python benchmarks/spark_bench.py " + " ".join(sys.argv[1:] if argv is None else argv),
            "date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        },
        "batch": {}, "stream": {},
    }
    with LocalCluster(ClusterSpec(brokers=args.brokers)) as cluster, _spark_master(args) as master:
        result["config"]["master"] = master
        spark = _session(jars.spark_jars, master)
        try:
            bench = Bench(spark, cluster, args)
            for scenario in args.scenarios:
                if scenario == "stream_stalled":
                    result["stream"] = {sink: bench.stream(sink) for sink in args.stream_sinks}
                    continue
                runs: dict[str, list[dict[str, Any]]] = {sink: [] for sink in args.sinks}
                for rep in range(args.reps if scenario == "happy" else 1):
                    order = args.sinks if rep % 2 == 0 else list(reversed(args.sinks))
                    for sink in order:
                        runs[sink].append(bench.batch(sink, scenario))
                        print(json.dumps({"scenario": scenario, "sink": sink, **runs[sink][-1]}), file=sys.stderr)
                result["batch"][scenario] = {"runs": runs, "summary": _summary(runs)}
        finally:
            spark.stop()
    result["config"]["load_after"] = os.getloadavg()
    path = out / f"{args.name}.json"
    path.write_text(json.dumps(result, indent=2))
    print(_report(result))
    print(f"written: {path}")
    return 0


class Bench:
    """One SparkSession and one cluster; each run on a fresh topic."""

    def __init__(self, spark: Any, cluster: LocalCluster, args: argparse.Namespace) -> None:
        self.spark = spark
        self.cluster = cluster
        self.args = args
        self.bootstrap = cluster.bootstrap_servers
        self.admin = AdminClient({"bootstrap.servers": self.bootstrap})

    def topic(self) -> str:
        name = f"spark-bench-{uuid.uuid4().hex[:8]}"
        create_topic(self.admin, name, partitions=PARTITIONS, replication_factor=self.args.replication_factor)
        return name

    def df(self, rows: int) -> Any:
        from pyspark.sql import functions as F

        return self.spark.range(rows, numPartitions=2).select(
            F.concat(F.lpad(F.col("id").cast("string"), 12, "0"), F.lit(VALUE_PAD)).alias("value")
        )

    def options(self, sink: str, topic: str, faulty: bool) -> dict[str, str]:
        opts = {"kafka.bootstrap.servers": self.bootstrap, "topic": topic, "kafka.acks": self.args.acks}
        if sink == "builtin_tuned":
            opts.update({"kafka.batch.size": "1048576", "kafka.linger.ms": "5"})
        if sink.startswith("mutepro") or sink == "plain_ceiling":
            opts.update(self.args.sink_options)
        if faulty:  # the same delivery timeout on both clients (Java accepts the names, the sink translates)
            opts.update({"kafka.delivery.timeout.ms": str(self.args.timeout_ms),
                         "kafka.request.timeout.ms": str(self.args.timeout_ms * 2 // 3)})
        return opts

    def batch(self, sink: str, scenario: str) -> dict[str, Any]:
        topic = self.topic()
        rows = self.args.rows
        opts = self.options(sink, topic, scenario != "happy")
        df = self.df(rows)
        write = _writer(sink, df, opts)
        error = None
        started = time.monotonic()
        with self.fault(scenario):
            try:
                write()
            except Exception as err:  # the built-in sink fails under a stall: that is a result, not a crash
                error = str(err).strip().splitlines()[0][:300]
        wall = time.monotonic() - started
        check = self.read_back(topic, rows)
        return {"wall_s": round(wall, 3), "rows_per_s": round(rows / wall), "error": error, **check}

    def fault(self, scenario: str) -> Any:
        if scenario == "limping":
            return self.cluster.limping(2, duty=0.8, period_s=1.0, max_duration_s=300)
        if scenario == "stalled":
            return _DelayedStall(self.cluster, 2, delay_s=1.0, hold_s=self.args.stall_s)
        return _Nothing()

    def stream(self, sink: str) -> dict[str, Any]:
        topic = self.topic()
        opts = self.options(sink, topic, True)
        rows_per_batch = self.args.stream_rows
        source = (self.spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch)
                  .option("numPartitions", 2).load())
        from pyspark.sql import functions as F

        df = source.select(F.concat(F.lpad(F.col("value").cast("string"), 12, "0"), F.lit(VALUE_PAD)).alias("value"))
        writer = df.writeStream.option("checkpointLocation", tempfile.mkdtemp(prefix="spark-bench-ckpt-"))
        if sink == "mutepro_ds":
            register(self.spark)  # on the starting thread, right before start() (see register's docstring)
            writer = writer.format("mutepro").options(**opts)
        elif sink == "mutepro_fb":
            writer = writer.foreachBatch(KafkaSink(options=opts))
        elif sink == "plain_ceiling":
            raise ValueError("plain_ceiling writes batches only, not a stream")
        else:
            writer = writer.format("kafka").options(**opts)
        query = writer.trigger(processingTime="1 second").start()
        marks: dict[str, float] = {}
        error = None
        try:
            _run_for(query, self.args.warmup_s)
            marks["stall"] = time.time()
            with self.cluster.stalled(2):
                _run_for(query, self.args.stall_s)
            marks["resume"] = time.time()
            _run_for(query, self.args.warmup_s)
        except Exception as err:
            error = str(err).strip().splitlines()[0][:300]
        finally:
            progress = [json.loads(p.json) for p in query.recentProgress]
            query.stop()
        batches = [
            {"batch": p["batchId"], "at": _epoch(p["timestamp"]), "rows": p["numInputRows"],
             "add_batch_s": p["durationMs"].get("addBatch", 0) / 1000.0}
            for p in progress if p["numInputRows"]
        ]
        # a batch is affected when its write overlaps the stall (the one running when the broker stopped too)
        stall, resume = marks.get("stall", float("inf")), marks.get("resume", 0.0)
        before = [b for b in batches if b["at"] + b["add_batch_s"] < stall]
        during = [b for b in batches if b["at"] < resume and b["at"] + b["add_batch_s"] >= stall]
        committed = sum(b["rows"] for b in batches)
        check = self.read_back(topic, committed)
        return {
            "error": error, "batches": batches, "committed_rows": committed, **check,
            "before_median_batch_s": _median([b["add_batch_s"] for b in before]),
            "worst_batch_s": max((b["add_batch_s"] for b in batches), default=None),
            "worst_during_vs_before": _ratio(max((b["add_batch_s"] for b in during), default=None),
                                             _median([b["add_batch_s"] for b in before])),
            "rows_per_s_before": _rate(before), "rows_per_s_during": _rate(during),
        }

    def read_back(self, topic: str, expected: int) -> dict[str, int]:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe([topic])
        ids: set[int] = set()
        total = 0
        deadline = time.monotonic() + self.args.read_timeout_s
        idle_since = time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - idle_since < 5:
            msgs = consumer.consume(5000, timeout=0.5)
            if msgs:
                idle_since = time.monotonic()
            for m in msgs:
                if m.error() is None:
                    total += 1
                    ids.add(int((m.value() or b"")[:12]))  # every row has a value; None would be a bug
        consumer.close()
        missing = sum(1 for i in range(expected) if i not in ids)
        return {"read_back": total, "distinct": len(ids), "missing": missing, "duplicates": total - len(ids)}


def _writer(sink: str, df: Any, opts: dict[str, str]) -> Callable[[], object]:
    """The write of one batch; what it returns is not used (the topic is read back instead)."""
    if sink == "plain_ceiling":
        client = {k[len("kafka."):]: v for k, v in opts.items() if k.startswith("kafka.")}
        return lambda: plain_sink.write(df, opts["topic"], client)
    if sink == "mutepro_fb":
        sink_fn = KafkaSink(options=opts)
        return lambda: sink_fn(df, 0)
    fmt = "mutepro" if sink == "mutepro_ds" else "kafka"
    return lambda: df.write.format(fmt).mode("append").options(**opts).save()


class _DelayedStall:
    """Stall a broker ``delay_s`` into the block for ``hold_s`` (a bounded thread; always resumed on exit)."""

    def __init__(self, cluster: LocalCluster, broker: int, delay_s: float, hold_s: float) -> None:
        self.cluster, self.broker, self.delay_s, self.hold_s = cluster, broker, delay_s, hold_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        if self._done.wait(self.delay_s):
            return
        with self.cluster.stalled(self.broker):
            self._done.wait(self.hold_s)

    def __enter__(self) -> _DelayedStall:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(30)


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _run_for(query: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not query.isActive:
            raise RuntimeError(f"query stopped: {query.exception()}")
        query.awaitTermination(max(0.1, min(1.0, deadline - time.monotonic())))


#: ``--standalone``: each application two 1-core executors, one per worker (spark.deploy.spreadOut), so that a
#: batch write's two tasks run in two executor JVMs with their own Python workers, as local[2] runs them in one
STANDALONE_APP_CONF = {"spark.cores.max": "2", "spark.executor.cores": "1", "spark.executor.memory": "768m"}


@contextlib.contextmanager
def _spark_master(args: argparse.Namespace) -> Iterator[str]:
    """``local[2]``, or (``--standalone``) a standalone cluster of two 1-core workers started from PySpark's own
    jars for this run and stopped after it (mutepro.spark.standalone)."""
    if not args.standalone:
        yield "local[2]"
        return
    from mutepro.spark.standalone import StandaloneCluster, StandaloneSpec
    from mutepro.spark.workerenv import mutepro_root

    with tempfile.TemporaryDirectory(prefix="spark-bench-standalone-") as run_dir:
        spec = StandaloneSpec(run_dir=Path(run_dir), workers=2, worker_cores=1, worker_memory="1g",
                              python=sys.executable, pythonpath=(mutepro_root(),))
        with StandaloneCluster(spec, progress=lambda line: print(f"spark: {line}", file=sys.stderr)) as sc:
            yield sc.master_url


def _session(jars: str, master: str) -> Any:
    from pyspark.sql import SparkSession

    from mutepro.spark.standalone import on_cluster

    # Python workers import the same mutepro as this process
    builder = (
        workers_import_this_mutepro(SparkSession.builder).master(master).appName("mutepro-spark-bench")
        .config("spark.jars", jars).config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false").config("spark.driver.memory", "2g")
    )
    if not master.startswith("local"):
        for key, value in STANDALONE_APP_CONF.items():
            builder = builder.config(key, value)
    spark = on_cluster(builder, master).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def _epoch(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def _rate(batches: list[dict[str, Any]]) -> float | None:
    if len(batches) < 2:
        return None
    span = batches[-1]["at"] - batches[0]["at"]
    return round(sum(b["rows"] for b in batches[1:]) / span) if span > 0 else None


def _summary(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for sink, items in runs.items():
        rates = [r["rows_per_s"] for r in items if not r["error"]]
        out[sink] = {
            "median_rows_per_s": _median(rates), "min": min(rates, default=None), "max": max(rates, default=None),
            "failed_runs": sum(1 for r in items if r["error"]), "missing": [r["missing"] for r in items],
            "duplicates": [r["duplicates"] for r in items],
        }
    for ours in ("mutepro_ds", "mutepro_fb", "plain_ceiling"):
        for base in ("builtin_default", "builtin_tuned", "plain_ceiling"):
            if base == ours:
                continue
            a, b = out.get(ours, {}).get("median_rows_per_s"), out.get(base, {}).get("median_rows_per_s")
            if a and b:
                out[f"{ours}_vs_{base}"] = round(a / b, 2)
    return out


def _report(result: dict[str, Any]) -> str:
    lines = []
    for scenario, data in result["batch"].items():
        lines.append(f"== batch {scenario}")
        for sink, s in data["summary"].items():
            lines.append(f"  {sink}: {s}")
    for sink, s in result["stream"].items():
        brief = {k: v for k, v in s.items() if k != "batches"}
        lines.append(f"== stream_stalled {sink}: {brief}")
    return "\n".join(lines)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="smoke test: small writes, short faults, 1 repetition")
    p.add_argument("--rows", type=int, default=None, help="rows per batch write (default 500000; quick 20000)")
    p.add_argument("--reps", type=int, default=None, help="happy-path repetitions (default 3; quick 1)")
    p.add_argument("--stall-s", type=float, default=None, help="stall length (default 40; quick 8)")
    p.add_argument("--stream-rows", type=int, default=None,
                   help="rows per micro-batch (default 100000, a writer busy half of each second; quick 2000)")
    p.add_argument("--timeout-ms", type=int, default=None, help="delivery timeout, both clients (30000; quick 10000)")
    p.add_argument("--scenarios", default="happy,stalled,limping,stream_stalled")
    p.add_argument("--sinks", default=",".join(SINKS))
    p.add_argument("--sink-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option for mutepro's sinks only (repeatable), e.g. kafka.linger.ms=20")
    p.add_argument("--stream-sinks", default="builtin_tuned,mutepro_ds", help="the sinks of stream_stalled")
    p.add_argument("--standalone", action="store_true",
                   help="run Spark as a standalone cluster (a master, two 1-core workers, one executor JVM on each) "
                        "started from PySpark's jars for this run, instead of local[2]")
    p.add_argument("--brokers", type=int, default=3, help="brokers in the cluster (default 3)")
    p.add_argument("--replication-factor", type=int, default=1, help="of each run's topic (default 1)")
    p.add_argument("--acks", choices=("all", "1"), default="all", help="both clients' acks (default all)")
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    p.add_argument("--name", default="spark_bench", help="the result's file name in --out, without .json")
    args = p.parse_args(argv)
    bad = [o for o in args.sink_option if "=" not in o]
    if bad:
        p.error(f"--sink-option wants KEY=VALUE, got {bad[0]!r}")
    args.sink_options = dict(o.split("=", 1) for o in args.sink_option)
    quick = args.quick
    args.rows = args.rows or (20_000 if quick else 500_000)
    args.reps = args.reps or (1 if quick else 3)
    args.stall_s = args.stall_s or (8.0 if quick else 40.0)
    args.timeout_ms = args.timeout_ms or (10_000 if quick else 30_000)
    args.stream_rows = args.stream_rows or (2_000 if quick else 100_000)
    args.warmup_s = 8.0 if quick else 20.0
    args.read_timeout_s = 60.0 if quick else 300.0
    args.scenarios = [s for s in args.scenarios.split(",") if s]
    args.sinks = [s for s in args.sinks.split(",") if s]
    args.stream_sinks = [s for s in args.stream_sinks.split(",") if s]
    if args.replication_factor > args.brokers:
        p.error(f"--replication-factor {args.replication_factor} needs at least as many --brokers ({args.brokers})")
    unknown = [s for s in args.scenarios if s not in (*BATCH_SCENARIOS, "stream_stalled")]
    unknown += [s for s in args.sinks + args.stream_sinks if s not in SINKS + EXTRA_SINKS]
    if unknown:
        p.error(f"unknown scenario or sink: {', '.join(unknown)}")
    return args


if __name__ == "__main__":
    sys.exit(main())
