"""Rack-aware partitioning (KIP-1123) on the real 3-rack cluster: where unkeyed bytes go, what it costs, and what
happens when the producer's own rack's broker stalls.

    python3 benchmarks/rack_bench.py                      # 3 interleaved reps of 20 s, then the stall run
    python3 benchmarks/rack_bench.py --reps 1 --seconds 5 --stall-seconds 20   # a smoke run

Healthy section: the same saturated closed loop of unkeyed 512-byte messages (keyword calls, one callback) through
the plain ``confluent_kafka.Producer``, a default MuteProducer, and a MuteProducer with ``client.rack`` = broker
1's rack and ``partitioner.rack.aware=true``; each run on a fresh 12-partition topic (RF ``--rf``, leaders
balanced over the three brokers, one rack each), in rotating order. Where the messages went is read from the
brokers: each partition's end offset after the run, summed by its leader's rack. Rates are delivered messages
per second, as ratios to the plain client of the same repetition (median and range over the repetitions).

Stall section: the rack-aware MuteProducer alone, an open loop at ``--rate`` msg/s for ``--stall-seconds`` on a
topic of RF ``--stall-rf`` (default 1); broker 1 (the producer's rack) is stopped (SIGSTOP) for the middle third.
With RF 3 on three brokers and acks=all every partition has a follower on the stalled broker and waits for it
until Kafka drops it from the ISR (``replica.lag.time.max.ms``), whatever the producer does. Per second: messages
delivered to the local rack and to the others; when rack-a's partitions were muted; every accepted message's final
report, and the end offsets against the delivered count (nothing lost).

Java's producer has ``partitioner.rack.aware`` only from the release after 4.3 (KIP-1123); the 4.3.1 jars this
project runs have no such setting (``ProducerConfig`` in kafka-clients-4.3.1.jar), so there is no Java peer here.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import confluent_kafka
from bench_report import median
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from rich.console import Console

from mutepro.cluster import ClusterSpec, LocalCluster
from mutepro.cluster.topics import create_topic
from mutepro.producer import MuteProducer

console = Console(stderr=True)
PARTITIONS = 12
VALUE = bytes(512)
#: short-lived segments: a saturated run writes GBs (see saturated_bench.TOPIC_CONFIG for why)
TOPIC_CONFIG = {"segment.bytes": str(32 << 20), "retention.bytes": str(64 << 20), "file.delete.delay.ms": "0"}
BROKER_CONFIG = {"log.retention.check.interval.ms": "1000"}
KINDS = ("plain", "mute", "mute_rack")


def assignment(rf: int) -> list[list[int]]:
    """Partition p led by broker p % 3 + 1, its followers on the next brokers: leaders balanced over the racks."""
    return [[(p + i) % 3 + 1 for i in range(rf)] for p in range(PARTITIONS)]


class Bench:
    def __init__(self, cluster: LocalCluster, rf: int) -> None:
        self.cluster = cluster
        self.rf = rf
        self.admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        self.rack = cluster.racks[1]
        self.made: list[str] = []

    def topic(self, rf: int | None = None) -> str:
        if self.made:  # the last run's topic goes first (disk)
            for future in self.admin.delete_topics(self.made, operation_timeout=30).values():
                future.result(60)
            self.made.clear()
        name = f"rack-{uuid.uuid4().hex[:8]}"
        self.made.append(name)
        rf = self.rf if rf is None else rf
        create_topic(self.admin, name, partitions=PARTITIONS, replication_factor=rf,
                     replica_assignment=assignment(rf), config=TOPIC_CONFIG)  # fmt: skip
        self.cluster.wait_quiet(0.3, timeout_s=60)
        return name

    def conf(self, kind: str) -> dict[str, Any]:
        conf = self.cluster.client_config(**{"linger.ms": 5})
        if kind == "mute_rack":
            conf.update({"client.rack": self.rack, "partitioner.rack.aware": "true"})
        return conf

    def producer(self, kind: str, topic: str) -> Any:
        if kind == "plain":
            plain = confluent_kafka.Producer(self.conf(kind))
            plain.list_topics(topic, timeout=15)
            return plain
        producer = MuteProducer(self.conf(kind))
        producer.wait_for_topic(topic, 15)
        if kind == "mute_rack":  # the brokers' racks come with the first metadata round
            deadline = time.monotonic() + 15
            while producer.mute_manager.racks.local_partitions(topic) != self.local() and time.monotonic() < deadline:
                producer.poll(0.05)
        return producer

    def local(self) -> frozenset[int]:
        return frozenset(p for p in range(PARTITIONS) if p % 3 == 0)  # led by broker 1

    def end_offsets(self, topic: str) -> dict[int, int]:
        consumer = Consumer({"bootstrap.servers": self.cluster.bootstrap_servers, "group.id": "rack-bench"})
        deadline = time.monotonic() + 30
        try:
            while True:
                try:
                    return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=15)[1]
                            for p in range(PARTITIONS)}  # fmt: skip
                except KafkaException as e:
                    # a fresh consumer's first metadata may come from a broker that has not learned the topic
                    # yet (UNKNOWN_PARTITION right after a stall): retriable, as Kafka's clients treat it
                    if e.args[0].code() != KafkaError._UNKNOWN_PARTITION or time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        finally:
            consumer.close()

    def healthy(self, kind: str, seconds: float) -> dict[str, Any]:
        topic = self.topic()
        producer = self.producer(kind, topic)
        delivered = [0, 0]

        def cb(err: Any, _msg: Any) -> None:
            delivered[0 if err is None else 1] += 1

        produce, poll = producer.produce, producer.poll
        sent = buffer_errors = 0
        t0 = time.monotonic()
        end = t0 + seconds
        while sent < 50_000_000:
            if sent & 1023 == 0 and time.monotonic() >= end:
                break
            try:
                produce(topic, value=VALUE, on_delivery=cb)
                sent += 1
            except BufferError:
                buffer_errors += 1
                poll(0.001)
        left = producer.flush(60)
        elapsed = time.monotonic() - t0
        events: list[dict[str, Any]] = []
        if isinstance(producer, MuteProducer):
            mutes = producer.counters.as_dict()["mutes"]
            rack = producer.metrics()["rack"]
            events = _events(producer, topic, t0)
            producer.close()
        else:
            mutes, rack = 0, None
        offsets = self.end_offsets(topic)
        local = sum(n for p, n in offsets.items() if p in self.local())
        total = sum(offsets.values())
        return {
            "kind": kind, "sent": sent, "delivered": delivered[0], "failed": delivered[1], "left": left,
            "buffer_errors": buffer_errors, "msgs_s": delivered[0] / elapsed, "mutes": mutes, "events": events,
            "broker_side": {"total": total, "local": local, "local_share": local / total if total else None},
            "producer_side": rack,
        }  # fmt: skip

    def stall(self, rate: float, seconds: float, rf: int) -> dict[str, Any]:
        topic = self.topic(rf)
        producer = self.producer("mute_rack", topic)
        local = self.local()
        per_second: dict[int, Counter[str]] = {}
        reports = Counter[str]()
        t0 = time.monotonic()

        def cb(err: Any, msg: Any) -> None:
            if err is not None:
                reports["failed"] += 1
                return
            reports["delivered"] += 1
            second = int(time.monotonic() - t0)
            per_second.setdefault(second, Counter())["local" if msg.partition() in local else "remote"] += 1

        stall_at, resume_at = seconds / 3, 2 * seconds / 3
        stalled = False
        sent = 0
        step = 0.01
        next_at = t0
        while True:
            now = time.monotonic()
            if now - t0 >= seconds:
                break
            if not stalled and now - t0 >= stall_at and now - t0 < resume_at:
                self.cluster.stall(1)
                stalled = True
            elif stalled and now - t0 >= resume_at:
                self.cluster.resume(1)
                stalled = False
                resume_at = float("inf")
            if now >= next_at:
                for _ in range(int(rate * step)):
                    try:
                        producer.produce(topic, value=VALUE, on_delivery=cb)
                        sent += 1
                    except BufferError:
                        reports["buffer_errors"] += 1
                next_at += step
            producer.poll(max(0.0, min(step, next_at - time.monotonic())))
        if stalled:
            self.cluster.resume(1)
        left = producer.flush(60)
        events = _events(producer, topic, t0)
        counters = producer.counters.as_dict()
        producer.close()
        offsets = self.end_offsets(topic)
        return {
            "rate": rate, "seconds": seconds, "rf": rf, "stall_s": [round(stall_at, 1), round(2 * seconds / 3, 1)],
            "sent": sent, "delivered": reports["delivered"], "failed": reports["failed"], "left": left,
            "buffer_errors": reports["buffer_errors"], "end_offsets_total": sum(offsets.values()),
            "per_second": {str(s): dict(c) for s, c in sorted(per_second.items())}, "events": events,
            "counters": counters,
        }  # fmt: skip


def _events(producer: MuteProducer, topic: str, t0: float) -> list[dict[str, Any]]:
    return [
        {"at_s": round(e.at - t0, 3), "kind": str(e.kind), "partition": e.partition, "broker": e.broker,
         "reason": e.reason, "detail": {k: str(v) for k, v in e.detail.items()}}
        for e in producer.mute_manager.events if e.topic == topic
    ]  # fmt: skip


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    by_rep: dict[int, dict[str, dict[str, Any]]] = {}
    for run in runs:
        by_rep.setdefault(run["rep"], {})[run["kind"]] = run
    out: dict[str, Any] = {}
    for kind in KINDS:
        ratios = [r[kind]["msgs_s"] / r["plain"]["msgs_s"] for r in by_rep.values() if kind in r and "plain" in r]
        shares = [r[kind]["broker_side"]["local_share"] for r in by_rep.values() if kind in r]
        rates = [r[kind]["msgs_s"] for r in by_rep.values() if kind in r]
        out[kind] = {
            "msgs_s": {"median": round(median(rates)), "min": round(min(rates)), "max": round(max(rates))},
            "vs_plain": {"median": round(median(ratios), 3), "min": round(min(ratios), 3),
                         "max": round(max(ratios), 3)},
            "local_share": {"median": round(median(shares), 4), "min": round(min(shares), 4),
                            "max": round(max(shares), 4)},
        }  # fmt: skip
    return out


def plot(result: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    summary = result["summary"]
    kinds = list(summary)
    shares = [summary[k]["local_share"]["median"] * 100 for k in kinds]
    ratios = [summary[k]["vs_plain"]["median"] for k in kinds]
    bars = left.bar(kinds, shares, color=["#999999", "#6a9fd4", "#2b7a2b"])
    for bar, ratio in zip(bars, ratios, strict=True):
        left.text(bar.get_x() + bar.get_width() / 2, bar.get_height() + 1, f"{ratio:.2f}x rate", ha="center")
    left.set_ylim(0, 110)
    left.set_ylabel("unkeyed messages on rack-a leaders (%, broker side)")
    left.set_title(f"Healthy, saturated, RF {result['meta']['rf']}: where the bytes go")
    stall = result.get("stall")
    if stall:
        seconds = sorted(int(s) for s in stall["per_second"])
        local = [stall["per_second"][str(s)].get("local", 0) for s in seconds]
        remote = [stall["per_second"][str(s)].get("remote", 0) for s in seconds]
        right.plot(seconds, local, label="delivered to rack-a (local)", color="#2b7a2b")
        right.plot(seconds, remote, label="delivered to other racks", color="#d47a2b")
        right.axvspan(*stall["stall_s"], color="red", alpha=0.1, label="broker 1 (rack-a) stalled")
        right.set_xlabel("seconds")
        right.set_ylabel("messages delivered per second")
        right.set_title(f"Rack-aware MuteProducer, {stall['rate']:.0f} msg/s, RF {stall['rf']}: local broker stalled")
        right.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rf", type=int, default=3, choices=(1, 2, 3))
    parser.add_argument("--rate", type=float, default=5000.0, help="the stall run's open-loop rate (msg/s)")
    parser.add_argument("--stall-seconds", type=float, default=30.0)
    parser.add_argument("--stall-rf", type=int, default=1, choices=(1, 2, 3),
                        help="the stall run's replication factor (default 1: with RF 3 on three brokers and acks=all "
                        "every partition waits for the stalled follower until Kafka drops it from the ISR, so no "
                        "producer can route around it)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "rack_bench.json"))
    args = parser.parse_args(argv)
    if not 1 <= args.reps <= 20 or not 1 <= args.seconds <= 120 or not 6 <= args.stall_seconds <= 300:
        parser.error("--reps 1-20, --seconds 1-120, --stall-seconds 6-300")
    out = Path(args.out)
    result: dict[str, Any] = {"meta": {
        "command": " ".join(["python3", "benchmarks/rack_bench.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {_cores()} cores",
        "confluent_kafka": confluent_kafka.__version__, "librdkafka": confluent_kafka.libversion()[0],
        "rf": args.rf, "seconds": args.seconds, "reps": args.reps, "value_bytes": len(VALUE),
        "partitions": PARTITIONS,
    }, "runs": []}  # fmt: skip
    with LocalCluster(ClusterSpec(brokers=3, broker_config=BROKER_CONFIG)) as cluster:
        bench = Bench(cluster, args.rf)
        result["meta"]["client_rack"] = bench.rack
        for rep in range(args.reps):
            order = KINDS[rep % 3:] + KINDS[: rep % 3]
            for kind in order:
                console.print(f"rep {rep + 1}/{args.reps}: {kind}, {args.seconds:g} s")
                run = bench.healthy(kind, args.seconds)
                run["rep"] = rep
                result["runs"].append(run)
                console.print(f"  {run['msgs_s']:,.0f} msg/s, local share {run['broker_side']['local_share']:.3f}")
        result["summary"] = summarise(result["runs"])
        console.print(f"stall run: {args.rate:g} msg/s for {args.stall_seconds:g} s")
        result["stall"] = bench.stall(args.rate, args.stall_seconds, args.stall_rf)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    plot(result, out.with_suffix(".png"))
    console.print_json(json.dumps({"summary": result["summary"], "stall": {
        k: v for k, v in result["stall"].items() if k != "per_second"}}, default=str))  # fmt: skip
    return 0


def _cores() -> int:
    import os

    return os.cpu_count() or 0


if __name__ == "__main__":
    sys.exit(main())
