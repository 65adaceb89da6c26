"""``mutepro demo --plain``: the producer-only comparison, without Spark.

On a 12-partition topic, the same open-loop load runs twice — once through plain ``confluent_kafka.Producer``,
once through :class:`~mutepro.MuteProducer` — while broker 2 misbehaves (the demo's fault plan) for part of
each run. It consumes everything back, prints what each producer delivered during the fault, the BufferErrors
the application saw, p99 latency and losses, and writes a PNG of throughput over time. Exit code 0 only if
MuteProducer lost nothing and everything it delivered was consumed.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from mutepro.cluster.launcher import LocalCluster
from mutepro.demo.schedule import FAULTY_BROKER, FaultPlan, FaultRunner


@dataclass
class RunResult:
    """What one producer did in one run."""

    name: str
    produced: int = 0
    delivered: int = 0
    failed: int = 0
    buffer_errors: int = 0
    consumed: int = 0
    duplicates: int = 0
    latencies_s: list[float] = field(default_factory=list)
    per_second: list[int] = field(default_factory=list)
    fault_window: tuple[float, float] = (0.0, 0.0)
    during_fault: int = 0
    before_fault_rate: float = 0.0
    mute_after_s: float | None = None

    @property
    def lost(self) -> int:
        return self.produced - self.delivered - self.failed

    @property
    def p99_ms(self) -> float:
        if not self.latencies_s:
            return 0.0
        ordered = sorted(self.latencies_s)
        return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000

    @property
    def fault_ratio(self) -> float:
        start, end = self.fault_window
        if not self.before_fault_rate or end <= start:
            return 0.0
        return (self.during_fault / (end - start)) / self.before_fault_rate


def run_once(
    make_producer: Callable[[], Any],
    name: str,
    cluster: LocalCluster,
    topic: str,
    *,
    rate: int,
    plan: FaultPlan,
) -> RunResult:
    """Produce at ``rate`` msg/s for the plan's duration while its faults happen."""
    duration_s = plan.duration_s
    fault_at_s, fault_end_s = plan.window
    fault_s = fault_end_s - fault_at_s
    result = RunResult(name)
    producer = make_producer()
    lock = threading.Lock()
    start = time.monotonic()
    buckets = [0] * (int(duration_s) + 120)

    def on_delivery(err: Any, msg: Any, sent_at: float) -> None:
        now = time.monotonic()
        with lock:
            if err is None:
                result.delivered += 1
                result.latencies_s.append(now - sent_at)
                second = int(now - start)
                if second < len(buckets):
                    buckets[second] += 1
                if fault_at_s <= now - start < fault_at_s + fault_s:
                    result.during_fault += 1
            else:
                result.failed += 1

    pad = b"x" * 500
    faults = FaultRunner(cluster, plan, start).start()
    n = 0
    try:
        while True:
            elapsed = time.monotonic() - start
            if elapsed >= duration_s:
                break
            due = int(elapsed * rate)
            while n < due:
                sent_at = time.monotonic()
                try:
                    producer.produce(
                        topic, value=b"%011d|" % n + pad, on_delivery=lambda e, m, t=sent_at: on_delivery(e, m, t)
                    )
                    n += 1
                    result.produced += 1
                except BufferError:
                    result.buffer_errors += 1
                    break  # the application backs off until its next slot, as a well-behaved app would
            producer.poll(0.005)
    finally:
        faults.stop()
    if faults.error is not None:
        raise faults.error
    producer.flush(60)
    manager = getattr(producer, "mute_manager", None)
    if manager is not None:
        events = manager.events
        mutes = [e.at for e in events if e.kind == "mute" and e.broker == FAULTY_BROKER]
        if mutes:
            result.mute_after_s = min(mutes) - (start + fault_at_s)
        producer.close()
    result.fault_window = (fault_at_s, fault_end_s)
    result.per_second = buckets[: int(duration_s)]
    before = buckets[1 : int(fault_at_s)]
    result.before_fault_rate = sum(before) / max(1, len(before))
    return result


def count_records(bootstrap: str, topic: str, expected: int, timeout_s: float = 60.0) -> tuple[int, int]:
    """Read the whole topic back: (records, distinct message numbers), so duplicates would show."""
    from confluent_kafka import Consumer

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"{topic}-check", "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe([topic])
    records = 0
    ids: set[bytes] = set()
    deadline = time.monotonic() + timeout_s
    idle = 0
    # read until the expected count is reached and then two quiet polls in a row
    while time.monotonic() < deadline and (records < expected or idle < 2):
        batch = consumer.consume(5000, timeout=0.5)
        idle = 0 if batch else idle + 1
        for m in batch:
            if m.error() is None:
                records += 1
                ids.add((m.value() or b"")[:11])
    consumer.close()
    return records, len(ids)


def plot(results: list[RunResult], path: Path, plan: FaultPlan) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.2))
    for r, colour in zip(results, ("#d62728", "#1f77b4"), strict=False):
        ax.plot(range(len(r.per_second)), r.per_second, label=f"{r.name}", color=colour, linewidth=2)
    for p in plan.phases:
        if p.name in ("limp", "stall"):
            what = "stalled (SIGSTOP)" if p.name == "stall" else "limping"
            ax.axvspan(p.start_s, p.end_s, color="#999999" if p.name == "stall" else "#ff7f0e", alpha=0.25,
                       label=f"broker {FAULTY_BROKER} {what}")
    ax.set_xlabel("seconds since start")
    ax.set_ylabel("messages delivered per second")
    what = {"both": "limping, then stalled", "limp": "limping", "stall": "stalled"}[plan.fault]
    ax.set_title(f"One broker {what}: plain confluent-kafka vs MuteProducer (12 partitions, 3 brokers)")
    ax.legend(loc="lower left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_plain(cluster: LocalCluster, *, rate: int, plan: FaultPlan, out: Path, console: Console) -> bool:
    """Both producers, one after the other, each on its own topic; prints the table, writes ``out``.

    True if MuteProducer lost nothing and everything it delivered was consumed.
    """
    from confluent_kafka import Producer

    from mutepro.demo.setup import create_topic
    from mutepro.producer import MuteProducer

    # A small local queue makes the shared-buffer problem visible quickly: 12 partitions, 4 on broker 2.
    conf = cluster.client_config(**{
        "linger.ms": 5, "acks": "1", "queue.buffering.max.messages": 10_000, "message.timeout.ms": 60_000,
    })
    policy = {"defaults": {"slow_call": {"threshold_ms": 1000}, "breaker": {"retry_interval_ms": 4000}}}
    results = []
    start, end = plan.window
    for name, make in (
        ("confluent_kafka.Producer", lambda: Producer(dict(conf))),
        ("mutepro.MuteProducer", lambda: MuteProducer(conf, policy=policy)),
    ):
        topic = f"demo-{uuid.uuid4().hex[:6]}"
        create_topic(cluster, topic)
        with console.status(f"{name}: {plan.duration_s:.0f} s at {rate} msg/s, broker {FAULTY_BROKER} "
                            f"{plan.fault} from {start:.0f} s to {end:.0f} s"):
            r = run_once(make, name, cluster, topic, rate=rate, plan=plan)
            records, r.consumed = count_records(cluster.bootstrap_servers, topic, r.delivered)
            r.duplicates = records - r.consumed
        results.append(r)

    what = {"both": "limping, then stalled", "limp": "limping", "stall": "stalled"}[plan.fault]
    table = Table(title=f"mutepro demo --plain: broker {FAULTY_BROKER} of three {what}")
    for col in ("producer", "produced", "delivered", "failed", "lost", "consumed", "dups", "BufferErrors",
                "fault/before", "p99 ms", "mute after"):
        table.add_column(col, justify="right", overflow="fold")
    for r in results:
        table.add_row(
            r.name, str(r.produced), str(r.delivered), str(r.failed), str(r.lost), str(r.consumed),
            str(r.duplicates), str(r.buffer_errors), f"{r.fault_ratio:.2f}x", f"{r.p99_ms:,.0f}",
            "-" if r.mute_after_s is None else f"{r.mute_after_s:.2f}s",
        )
    Console(width=max(140, Console().width)).print(table)
    plot(results, out, plan)
    click.echo(f"plot written to {out}")
    mute = results[-1]
    if mute.lost or mute.failed or mute.consumed != mute.delivered:
        console.print("demo FAILED: MuteProducer lost or failed messages", style="red")
        return False
    console.print("demo OK: MuteProducer delivered every message, and all of them were consumed back")
    return True
