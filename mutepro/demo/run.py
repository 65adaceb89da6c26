"""``mutepro demo``: the Spark job, twice side by side, while broker 2 limps and then stalls.

Two Structured Streaming queries in one local SparkSession read the same kind of keyed ``rate`` stream and
write it to two topics: one through mutepro's ``foreachBatch`` sink (:class:`~mutepro.spark.KafkaSink`), one
through Spark's built-in Kafka sink (``spark-sql-kafka-0-10``, the Java producer). Both get the same delivery
timeout. A plain consumer reads both topics while they run (the live view's rates) and to the end afterwards
(losses and duplicates). At the end: the table, ``demo.png`` and ``demo.json`` in the output directory.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from rich.console import Console

from mutepro.cluster.launcher import LocalCluster
from mutepro.demo.live import LiveView
from mutepro.demo.readback import ReadBack
from mutepro.demo.report import plot, table, write_json
from mutepro.demo.samples import JobSamples, summarize
from mutepro.demo.schedule import FAULTY_BROKER, FaultPlan, FaultRunner
from mutepro.demo.setup import PARTITIONS, create_topic
from mutepro.errors import MuteproError

MUTEPRO_JOB = "mutepro sink"
BUILTIN_JOB = "Spark built-in Kafka sink"
#: The same on both clients: the Java name, which the mutepro sink translates to librdkafka's
#: message.timeout.ms. Shorter than the stall, as a production job's timeout is shorter than a bad outage.
DELIVERY_TIMEOUT_MS = 10_000
_BACKOFF_CAP_MS = 10_000
#: The mutepro sink's defaults (slow-call threshold 5 s, ...), but for two things: a failed probe doubles the
#: wait before the next one up to 60 s by default, which would put the unmute after the end of a 2-minute run;
#: and the executors' JSON logs are off (the live view and the per-batch figures say what happened).
DEMO_POLICY = {"defaults": {"breaker": {"max_retry_interval_ms": _BACKOFF_CAP_MS}}, "logging": {"level": "error"}}
_POLL_S = 0.5
_WARM_UP_S = 120.0


def run_spark(
    cluster: LocalCluster, *, plan: FaultPlan, rate: int, out: Path, console: Console, master: str | None = None,
) -> bool:
    """Run both jobs through the plan on ``master`` (None: ``local[4]``); print the table, write the plot and JSON.
    True if the mutepro job lost no committed row."""
    from mutepro.demo.sparkjob import LOCAL_MASTER, StreamJob, session
    from mutepro.spark.jars import resolve_spark_kafka

    with console.status("resolving Spark's built-in Kafka sink (spark-sql-kafka-0-10) from Maven Central"):
        jars = resolve_spark_kafka()
    if jars.fell_back:
        console.print(f"spark-sql-kafka-0-10 {jars.wanted} is not published; using {jars.version}")
    master = master or LOCAL_MASTER
    with console.status(f"starting Spark ({master})"):
        spark = session(jars.spark_jars, master)
    try:
        suffix = uuid.uuid4().hex[:6]
        topics = {MUTEPRO_JOB: f"demo-mutepro-{suffix}", BUILTIN_JOB: f"demo-builtin-{suffix}"}
        for name in topics.values():
            # the broker stamps each row when it appends it: both jobs measured by the same clock
            create_topic(cluster, name, {"message.timestamp.type": "LogAppendTime"})
        samples = {job: JobSamples(job) for job in topics}
        options = {
            "kafka.bootstrap.servers": cluster.bootstrap_servers,
            "kafka.delivery.timeout.ms": str(DELIVERY_TIMEOUT_MS),
            # Java requires delivery.timeout.ms >= linger.ms + request.timeout.ms
            "kafka.request.timeout.ms": str(DELIVERY_TIMEOUT_MS * 2 // 3),
        }
        mutepro_options = {**options, "policy": json.dumps(DEMO_POLICY)}
        console.print(
            f"two streaming jobs, {rate:,} keyed rows/s each, 1 s micro-batches, {plan.duration_s:.0f} s; "
            f"broker {FAULTY_BROKER} {plan.fault} from {plan.window[0]:.0f} s to {plan.window[1]:.0f} s; "
            f"delivery timeout {DELIVERY_TIMEOUT_MS / 1000:g} s on both; the mutepro sink with its defaults, the "
            f"breaker's backoff capped at {_BACKOFF_CAP_MS / 1000:g} s"
        )
        readback = ReadBack(cluster.bootstrap_servers, {topics[j]: samples[j] for j in topics}, PARTITIONS).start()
        jobs = [
            StreamJob(spark, samples[job], sink="mutepro" if job == MUTEPRO_JOB else "kafka", topic=topics[job],
                      rate=rate, options=mutepro_options if job == MUTEPRO_JOB else options).start()
            for job in topics
        ]
        tick = threading.Event()  # never set: a bounded pause between looks at the queries
        with console.status("warming up: Spark plans and compiles both queries' first micro-batches"):
            _warm_up(jobs, rate, tick)
        # The timeline (and the fault plan) starts once both jobs write: Spark's first batches take seconds to
        # plan and compile, which is not what the demo compares
        t0, t0_epoch = time.monotonic(), time.time()
        readback.begin(t0_epoch)
        for job in jobs:
            job.t0_epoch = t0_epoch
        faults = FaultRunner(cluster, plan, t0).start()
        try:
            with LiveView(plan, jobs, readback, console) as view:
                while (now := time.monotonic() - t0) < plan.duration_s:
                    for job in jobs:
                        job.poll(now)
                    view.update(now)
                    tick.wait(_POLL_S)
        finally:
            faults.stop()
            with console.status("letting the last micro-batches finish"):
                for job in jobs:
                    job.stop()
        if faults.error is not None:
            raise faults.error
        with console.status("reading both topics back to the end"):
            caught_up = readback.finish()
    finally:
        spark.stop()
    if not caught_up:
        console.print("warning: the read-back did not reach the end of every partition within 90 s")
    return _report(list(samples.values()), plan, rate, out, console, faults.marks,
                   {"rate": rate, "delivery_timeout_ms": DELIVERY_TIMEOUT_MS, "spark_kafka": jars.version,
                    "mutepro_policy": DEMO_POLICY,
                    "topics": topics, "restarts": {j.samples.name: j.restarts for j in jobs}})


def _warm_up(jobs: list[Any], rate: int, tick: threading.Event, timeout_s: float = _WARM_UP_S) -> None:
    """Wait until every job has rows in Kafka and has worked off the rows the rate source piled up meanwhile
    (its last batch is about one second's worth); a query that stops fails the demo, naming its error."""
    deadline = time.monotonic() + timeout_s
    while not all(job.samples.read_back and 0 < job.last_rows() <= 1.5 * rate for job in jobs):
        for job in jobs:
            if not job.query.isActive:
                raise MuteproError(f"{job.samples.name}: the streaming query stopped before writing: "
                                   f"{job.query.exception()}")
        if time.monotonic() > deadline:
            raise MuteproError(f"the streaming jobs wrote nothing within {timeout_s:.0f} s of starting")
        tick.wait(_POLL_S)


def _report(jobs: list[JobSamples], plan: FaultPlan, rate: int, out: Path, console: Console,
            marks: list[tuple[str, float, float]], config: dict[str, Any]) -> bool:
    summaries = [summarize(job, plan) for job in jobs]
    what = {"both": "limps, then stalls", "limp": "limps", "stall": "stalls"}[plan.fault]
    title = (f"Spark Structured Streaming to Kafka while broker {FAULTY_BROKER} of 3 {what}: "
             f"mutepro sink vs Spark's built-in Kafka sink ({rate:,} keyed rows/s each)")
    console.print(table(summaries, plan, title))
    png, data = out / "demo.png", out / "demo.json"
    plot(jobs, summaries, plan, rate, png, title.replace(": ", ":\n", 1))
    write_json(data, config, plan, jobs, summaries, marks)
    console.print(f"plot written to {png}")
    console.print(f"figures written to {data}")
    ours = summaries[0]
    if ours.lost:
        console.print(f"demo FAILED: the mutepro job lost {ours.lost} committed rows", style="red")
        return False
    ratio = "-" if ours.fault_vs_before is None else f"{ours.fault_vs_before:.2f}x"
    console.print(f"demo OK: the mutepro job lost no committed row; during the fault it wrote {ratio} its rows/s "
                  "before the fault")
    return True
