"""``mutepro demo``: the end-to-end job, on the embedded local cluster (or one you point it at).

It starts a real 3-broker, 3-rack KRaft cluster, creates a 12-partition topic, and runs the same open-loop load
twice — once through plain ``confluent_kafka.Producer``, once through :class:`~mutepro.MuteProducer` — while broker
2 is SIGSTOPped for part of each run. It consumes everything back, prints what each producer delivered during the
fault, the BufferErrors the application saw, p99 latency and losses, writes a PNG of throughput over time, and
stops the cluster. Exit code 0 only if MuteProducer lost nothing and everything it delivered was consumed.
"""

from __future__ import annotations

import sys
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
from mutepro.cluster.spec import ClusterSpec

_console = Console(stderr=True)


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
    duration_s: float,
    fault_at_s: float,
    fault_s: float,
) -> RunResult:
    """Produce at ``rate`` msg/s for ``duration_s`` with broker 2 stalled from ``fault_at_s`` for ``fault_s``."""
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
    fault_started = threading.Event()
    fault_done = threading.Event()

    def fault() -> None:
        fault_started.wait(duration_s + 5)
        with cluster.stalled(2):
            fault_done.wait(fault_s)

    stall_thread = threading.Thread(target=fault, daemon=True)
    stall_thread.start()
    n = 0
    try:
        while True:
            elapsed = time.monotonic() - start
            if elapsed >= duration_s:
                break
            if elapsed >= fault_at_s and not fault_started.is_set():
                fault_started.set()
            if elapsed >= fault_at_s + fault_s and not fault_done.is_set():
                fault_done.set()
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
        fault_started.set()
        fault_done.set()
        stall_thread.join(30)
    producer.flush(60)
    manager = getattr(producer, "mute_manager", None)
    if manager is not None:
        events = manager.events
        mutes = [e.at for e in events if e.kind == "mute" and e.broker == 2]
        if mutes:
            result.mute_after_s = min(mutes) - (start + fault_at_s)
        producer.close()
    result.fault_window = (fault_at_s, fault_at_s + fault_s)
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


def plot(results: list[RunResult], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.2))
    for r, colour in zip(results, ("#d62728", "#1f77b4"), strict=False):
        ax.plot(range(len(r.per_second)), r.per_second, label=f"{r.name}", color=colour, linewidth=2)
    start, end = results[0].fault_window
    ax.axvspan(start, end, color="#999999", alpha=0.25, label="broker 2 stalled (SIGSTOP)")
    ax.set_xlabel("seconds since start")
    ax.set_ylabel("messages delivered per second")
    ax.set_title("One stalled broker: plain confluent-kafka vs MuteProducer (12 partitions, 3 brokers)")
    ax.legend(loc="lower left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@click.command("demo")
@click.option("--rate", default=3000, show_default=True, help="Messages per second offered (open loop).")
@click.option("--duration", default=30.0, show_default=True, help="Seconds per run.")
@click.option("--fault-at", default=8.0, show_default=True, help="Second at which broker 2 is stalled.")
@click.option("--fault", "fault_s", default=12.0, show_default=True, help="Seconds broker 2 stays stalled.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("mutepro-demo.png"), show_default=True,
              help="Where to write the throughput plot.")
def demo(rate: int, duration: float, fault_at: float, fault_s: float, out: Path) -> None:
    """Run the end-to-end job on the embedded cluster: plain Producer vs MuteProducer under a stalled broker."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient

    from mutepro.cluster.topics import create_topic
    from mutepro.producer import MuteProducer

    if not 0 < fault_at < fault_at + fault_s < duration:
        raise click.BadParameter("expected 0 < --fault-at < --fault-at + --fault < --duration", param_hint="--fault")
    with _console.status("starting the embedded 3-broker, 3-rack Kafka cluster"):
        cluster = LocalCluster(ClusterSpec(brokers=3)).start()
    try:
        _console.print(f"cluster up: {cluster.bootstrap_servers} racks {cluster.racks}")
        # A small local queue makes the shared-buffer problem visible quickly: 12 partitions, 4 on broker 2.
        conf = cluster.client_config(**{
            "linger.ms": 5, "acks": "1", "queue.buffering.max.messages": 10_000, "message.timeout.ms": 60_000,
        })
        policy = {"defaults": {"slow_call": {"threshold_ms": 1000}, "breaker": {"retry_interval_ms": 4000}}}
        results = []
        for name, make in (
            ("confluent_kafka.Producer", lambda: Producer(dict(conf))),
            ("mutepro.MuteProducer", lambda: MuteProducer(conf, policy=policy)),
        ):
            topic = f"demo-{uuid.uuid4().hex[:6]}"
            create_topic(AdminClient(cluster.client_config()), topic, replica_assignment=[[1], [2], [3]] * 4)
            with _console.status(f"{name}: {duration:.0f} s at {rate} msg/s, broker 2 stalled {fault_s:.0f} s"):
                r = run_once(make, name, cluster, topic, rate=rate, duration_s=duration, fault_at_s=fault_at,
                             fault_s=fault_s)
                records, r.consumed = count_records(cluster.bootstrap_servers, topic, r.delivered)
                r.duplicates = records - r.consumed
            results.append(r)
    finally:
        cluster.stop()

    table = Table(title="mutepro demo: one broker of three stalled")
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
    plot(results, out)
    click.echo(f"plot written to {out}")
    mute = results[-1]
    if mute.lost or mute.failed or mute.consumed != mute.delivered:
        click.secho("demo FAILED: MuteProducer lost or failed messages", fg="red", err=True)
        sys.exit(1)
    click.echo("demo OK: MuteProducer delivered every message, and all of them were consumed back")
