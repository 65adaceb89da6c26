"""Record the trace corpus (tests/traces/) on the real local cluster: one MuteProducer per scenario, default
policy, a fresh topic, a real fault (SIGSTOP, a limp, SIGKILL) at a known time, written into the trace.

    flock /tmp/mutepro-cluster.lock python benchmarks/record_traces.py [--only name,name] [--out tests/traces]

Each scenario is bounded in time (its ``seconds``) and in messages (rate x seconds, or the closed loop's queue).
The replay tests (tests/unit/trace/test_corpus.py) run the detection model over these files.
"""

from __future__ import annotations

import argparse
import itertools
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient

from mutepro.cluster import ClusterSpec, LocalCluster
from mutepro.cluster.topics import create_topic
from mutepro.producer.producer import MuteProducer
from mutepro.trace import append_records


@dataclass(frozen=True)
class Scenario:
    name: str
    seconds: float
    rate: int  # messages per second; 0: closed loop (as fast as the producer takes them)
    fault: str | None = None  # "stall", "limp", "kill"
    broker: int = 2
    fault_at: float = 8.0
    fault_for: float = 10.0
    duty: float = 0.8
    period_s: float = 1.0
    rf: int = 1
    acks: str = "1"
    keyed: bool = False
    value_bytes: int = 512
    partitions: int = 12
    idempotent: bool = False
    brokers: int = 3
    #: brokers whose first-led partition is written, in turn (explicit partitions); empty: the partitioner picks
    write_to: tuple[int, ...] = ()
    #: instead of a rate: bursts of (at seconds, brokers, messages), written over every partition those brokers lead
    #: (explicit partitions), then nothing until the next -- what a Spark task's write and flush look like; a fourth
    #: element "first" writes only the lowest partition each broker leads, "others" every one but that
    bursts: tuple[tuple[float, tuple[int, ...], int] | tuple[float, tuple[int, ...], int, str], ...] = ()


SCENARIOS = (
    Scenario("healthy_saturated", 20, 0),
    Scenario("healthy_quiet_50", 15, 50),
    Scenario("healthy_saturated_1200", 20, 0, partitions=1200),
    Scenario("stall_rf1_5000", 26, 5000, "stall"),
    Scenario("stall_rf1_50", 26, 50, "stall"),
    Scenario("limp_short_saturated", 28, 0, "limp", fault_for=14),
    Scenario("limp_long_open", 30, 20_000, "limp", fault_for=16, duty=0.5, period_s=4.0),
    Scenario("stall_rf3_acks_all_keyed_50", 34, 50, "stall", fault_for=20, rf=3, acks="all", keyed=True),
    # a producer that has written only two partitions lately (a Spark task's last rows), one led by the broker
    # that stalls and one by a healthy broker: with acks=all both wait for the stalled follower until the ISRs
    # shrink, and muting either moves nothing
    Scenario("stall_rf3_acks_all_two_partitions_20", 34, 20, "stall", fault_for=20, rf=3, acks="all",
             write_to=(1, 2)),
    Scenario("kill_rf3_idempotent", 30, 5000, "kill", fault_for=12, rf=3, acks="all", idempotent=True),
    # a sink-like writer (RF 1, acks=all): bursts of 1,000 rows every 0.5 s, to every broker until 4 s, then to
    # brokers 1 and 3 only until 5.5 s; broker 2 stalls at 6 s and gets one burst at 6.2 s, then nothing more is
    # written until the stall ends: all the producer waits on is broker 2, and no other broker can answer, since
    # nothing is sent to them (brokers 1 and 3 were written 0.7 s before the last write: "written lately"); after
    # it, bursts to every broker again (the next tasks)
    Scenario("stall_rf1_burst_sole_leader", 26, 0, "stall", fault_at=6.0, fault_for=12, acks="all",
             bursts=(*((0.5 * i, (1, 2, 3), 1000) for i in range(1, 9)),
                     *((0.5 * i, (1, 3), 1000) for i in range(9, 12)), (6.2, (2,), 1000),
                     *((0.5 * i, (1, 2, 3), 1000) for i in range(38, 50)))),
    # more brokers than the 2 cores allow, a keyed rate above what they take: every broker slow in turns, then a
    # real stall of one on top
    Scenario("overloaded_5_brokers_keyed", 40, 20_000, "stall", broker=3, fault_at=20.0, fault_for=10.0, rf=3,
             acks="all", keyed=True, partitions=20, brokers=5),
    # RF 3, acks=all, an open loop at 60,000 msg/s (producer_bench's rate): every partition waits for the stalled
    # follower until the ISRs shrink (~10 s), then drains a 10 s backlog while the leaderships of the stalled broker
    # move to the others
    Scenario("stall_rf3_acks_all_60k", 36, 60_000, "stall", fault_for=20, rf=3, acks="all"),
    # a partition never written before on a broker that has delivered (RF 1, acks=all): bursts of 600 every 0.5 s
    # to the lowest partition each broker leads; broker 2 stalls at 6 s, and at 6.2 s a burst goes to its *other*
    # partitions, never written before, while brokers 1 and 3 keep answering theirs
    Scenario("stall_cold_partition_warm_leader", 24, 0, "stall", fault_at=6.0, fault_for=10, acks="all",
             bursts=(*((0.5 * i, (1, 2, 3), 600, "first") for i in range(1, 12)), (6.2, (2,), 600, "others"),
                     *((0.5 * i, (1, 3), 600, "first") for i in range(13, 32)),
                     *((0.5 * i, (1, 2, 3), 600, "first") for i in range(33, 46)))),
)


def run(cluster: LocalCluster, admin: AdminClient, sc: Scenario, out: Path, n: int) -> None:
    topic = f"trace-{sc.name}-{n}"
    create_topic(admin, topic, partitions=sc.partitions, replication_factor=sc.rf)
    conf: dict[str, Any] = {"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 5, "acks": sc.acks}
    if sc.idempotent:
        conf["enable.idempotence"] = True
    path = out / f"{sc.name}.jsonl.gz"
    producer = MuteProducer(conf, trace=path)
    value = bytes(sc.value_bytes)
    faults: list[dict[str, Any]] = []
    start = time.monotonic()
    fault_started = threading.Event()

    def inject() -> None:
        time.sleep(sc.fault_at)  # a schedule, not synchronisation: the fault begins at a known time
        t0 = time.monotonic()
        fault_started.set()
        if sc.fault == "stall":
            with cluster.stalled(sc.broker):
                time.sleep(sc.fault_for)
        elif sc.fault == "limp":
            with cluster.limping(sc.broker, duty=sc.duty, period_s=sc.period_s, max_duration_s=sc.fault_for + 5):
                time.sleep(sc.fault_for)
        elif sc.fault == "kill":
            cluster.kill(sc.broker)
            time.sleep(sc.fault_for)
            cluster.restart(sc.broker)
        faults.append({"kind": "fault", "t": round(t0, 4), "broker": sc.broker, "fault": sc.fault,
                       "end": round(time.monotonic(), 4), "period_s": sc.period_s, "duty": sc.duty})

    injector = threading.Thread(target=inject, daemon=True) if sc.fault else None
    if injector is not None:
        injector.start()
    sent = refused = 0
    keys = itertools.cycle([f"key-{i:04d}".encode() for i in range(1000)])
    targets = itertools.cycle(_led_by(admin, topic, sc.write_to) or [-1])
    try:
        if sc.bursts:
            sent, refused = _write_bursts(producer, admin, topic, sc, start, value)
        while not sc.bursts and (now := time.monotonic()) - start < sc.seconds:
            if sc.rate and sent >= sc.rate * (now - start):
                producer.poll(0.002)
                continue
            try:
                producer.produce(topic, value, next(keys) if sc.keyed else None, next(targets))
                sent += 1
            except BufferError:
                refused += 1
                producer.poll(0.005)
        producer.flush(60.0)
    finally:
        producer.close()
    if injector is not None:
        injector.join(timeout=120.0)
    append_records(path, faults)
    print(f"{sc.name}: {sent:,} sent, {refused:,} refused, mutes {producer.counters.mutes}, "
          f"{path.stat().st_size:,} bytes", flush=True)


def _write_bursts(
    producer: MuteProducer, admin: AdminClient, topic: str, sc: Scenario, start: float, value: bytes,
) -> tuple[int, int]:
    """Each burst of ``sc.bursts`` at its time, round-robin over the partitions its brokers lead; then polls until
    ``sc.seconds`` pass. Returns (sent, refused)."""
    parts = admin.list_topics(topic, timeout=10.0).topics[topic].partitions
    sent = refused = 0
    for at, brokers, count, *which in sc.bursts:
        led = {b: sorted(p for p, pm in parts.items() if pm.leader == b) for b in brokers}
        chosen = {"all": lambda ps: ps, "first": lambda ps: ps[:1], "others": lambda ps: ps[1:]}[(which or ["all"])[0]]
        targets = itertools.cycle(sorted(p for ps in led.values() for p in chosen(ps)))
        while time.monotonic() - start < at:
            producer.poll(0.01)
        for _ in range(count):
            while True:
                try:
                    producer.produce(topic, value, None, next(targets))
                    sent += 1
                    break
                except BufferError:
                    refused += 1
                    producer.poll(0.005)
    while time.monotonic() - start < sc.seconds:
        producer.poll(0.05)
    return sent, refused


def _led_by(admin: AdminClient, topic: str, brokers: tuple[int, ...]) -> list[int]:
    """The lowest partition of ``topic`` each of ``brokers`` leads now (the explicit targets of a scenario)."""
    if not brokers:
        return []
    parts = admin.list_topics(topic, timeout=10.0).topics[topic].partitions
    chosen = [min((p for p, pm in parts.items() if pm.leader == b), default=None) for b in brokers]
    missing = [b for b, p in zip(brokers, chosen, strict=True) if p is None]
    if missing:
        raise SystemExit(f"write_to: brokers {missing} lead no partition of {topic}")
    return [p for p in chosen if p is not None]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated scenario names (default: all)")
    ap.add_argument("--out", default="tests/traces", help="directory for the traces")
    args = ap.parse_args()
    wanted = {s for s in args.only.split(",") if s}
    unknown = wanted - {s.name for s in SCENARIOS}
    if unknown:
        ap.error(f"--only: unknown scenarios {sorted(unknown)}; known: {[s.name for s in SCENARIOS]}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [(n, sc) for n, sc in enumerate(SCENARIOS) if not wanted or sc.name in wanted]
    for brokers in sorted({sc.brokers for _, sc in chosen}):
        with LocalCluster(ClusterSpec(brokers=brokers)) as cluster:
            admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
            for n, sc in chosen:
                if sc.brokers == brokers:
                    run(cluster, admin, sc, out, n)
                    cluster.wait_ready(timeout_s=120.0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
