"""``mutepro demo``: the end-to-end job on an embedded local cluster (or one you point it at).

It starts a real 3-broker, 3-rack KRaft cluster, creates a topic, produces through mutepro's public API,
consumes everything back, checks nothing was lost, and stops the cluster. Exit code 0 only if every message was
delivered and consumed.
"""

from __future__ import annotations

import sys
import time
import uuid
from dataclasses import dataclass

import click
from rich.console import Console
from rich.table import Table

from mutepro.cluster.launcher import LocalCluster
from mutepro.cluster.spec import ClusterSpec

_console = Console(stderr=True)


@dataclass
class DemoResult:
    produced: int = 0
    delivered: int = 0
    failed: int = 0
    consumed: int = 0
    produce_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.delivered == self.produced == self.consumed


def run_demo(bootstrap_servers: str, *, messages: int, partitions: int = 6) -> DemoResult:
    """Produce ``messages`` keyed and unkeyed messages and consume them back; return the accounting."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient

    from mutepro.testing.fixtures import create_topic

    topic = f"mutepro-demo-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap_servers})
    create_topic(admin, topic, partitions=partitions, replication_factor=min(3, len(bootstrap_servers.split(","))))
    result = DemoResult()

    def on_delivery(err: object, _msg: object) -> None:
        if err is None:
            result.delivered += 1
        else:
            result.failed += 1

    producer = Producer({"bootstrap.servers": bootstrap_servers, "linger.ms": 5, "acks": "all"})
    t0 = time.monotonic()
    for i in range(messages):
        key = None if i % 2 else f"user-{i % 100}".encode()
        while True:
            try:
                producer.produce(topic, value=f"event-{i}".encode(), key=key, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.1)  # the local queue is full: serve delivery reports, then retry
        result.produced += 1
        if i % 1000 == 0:
            producer.poll(0)
    producer.flush(60)
    result.produce_s = time.monotonic() - t0

    consumer = Consumer({
        "bootstrap.servers": bootstrap_servers, "group.id": f"{topic}-reader", "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe([topic])
    deadline = time.monotonic() + 60
    while result.consumed < result.delivered and time.monotonic() < deadline:
        for msg in consumer.consume(1000, timeout=1.0):
            if msg.error() is None:
                result.consumed += 1
    consumer.close()
    return result


@click.command("demo")
@click.option("--bootstrap-servers", envvar="MUTEPRO_BOOTSTRAP", default=None,
              help="Use this cluster instead of starting the embedded one.")
@click.option("--messages", default=20_000, show_default=True, type=click.IntRange(1, 5_000_000))
def demo(bootstrap_servers: str | None, messages: int) -> None:
    """Run the end-to-end job on the embedded local cluster (or --bootstrap-servers)."""
    if bootstrap_servers:
        result = run_demo(bootstrap_servers, messages=messages)
    else:
        with _console.status("starting the embedded 3-broker, 3-rack Kafka cluster"):
            cluster = LocalCluster(ClusterSpec(brokers=3)).start()
        try:
            _console.print(f"cluster up: {cluster.bootstrap_servers} racks {cluster.racks}")
            result = run_demo(cluster.bootstrap_servers, messages=messages)
        finally:
            cluster.stop()
    table = Table(title="mutepro demo")
    for col in ("produced", "delivered", "failed", "consumed", "msgs/s"):
        table.add_column(col, justify="right")
    rate = result.delivered / result.produce_s if result.produce_s else 0.0
    counts = (result.produced, result.delivered, result.failed, result.consumed)
    table.add_row(*(str(v) for v in counts), f"{rate:,.0f}")
    Console().print(table)
    if not result.ok:
        click.secho("demo FAILED: messages were lost or not consumed", fg="red", err=True)
        sys.exit(1)
    click.echo("demo OK: every message delivered and consumed back")
