"""Does the plain idempotent producer write duplicates under a broker stall? A side-by-side check.

    flock /tmp/mutepro-cluster.lock python3 benchmarks/epoch_dups.py                # 10 rounds, ~8 minutes
    flock /tmp/mutepro-cluster.lock python3 benchmarks/epoch_dups.py --rounds 3 --eos-log /tmp/eos.log

Per round, on a fresh pair of topics (6 partitions, RF 3, min.insync.replicas 2): a plain
``confluent_kafka.Producer`` and a MuteProducer (``keyed_policy: hold``), both ``acks=all`` +
``enable.idempotence=true``, each with three threads at 40 messages/s (two keyed, one unkeyed that also sends
``--bad-share`` oversized messages to a topic limited to 4 KB, and messages to a topic that does not exist).
Five seconds in, one broker (1, 2, 3 in turn) is SIGSTOPped for ``--stall`` seconds. After 25 s both are flushed
and every topic is read back: duplicates, inversions of every copy and of first copies, and each duplicated
message's copies (partition, offset) with its delivery reports.

Why: the soak's idempotent ``hold`` producer once had a run of messages written twice. A rejected message
(MSG_SIZE_TOO_LARGE) makes librdkafka bump the producer epoch ("message sequence gap"); a run being retried
after the stall is then re-sent under the new epoch, so the broker cannot recognise it (librdkafka issue
#4953). ``--eos-log`` keeps librdkafka's ``debug=eos`` lines to see it happen. Not a benchmark: no timing.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import random
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from soak_ledger import decode, encode, key_order, read_back

from mutepro.cluster import ClusterSpec, LocalCluster
from mutepro.cluster.topics import create_topic
from mutepro.producer.producer import MuteProducer

RATE = 40.0  # messages/s per thread, as in the soak
ROUND_S = 25.0
STALL_AT_S = 5.0


def _worker(
    producer: Any, topic: str, small: str, index: int, thread: int, stop_at: float, bad_share: float,
    reports: dict[tuple[str, int, int], list[tuple[str, int, int]]],
) -> None:
    rng = random.Random(index * 10 + thread)
    keys = [f"k{index}-{thread}-{i}".encode() for i in range(30)]
    key_seq = [0] * len(keys)
    seq = 0
    next_at = time.monotonic()

    def report(err: Any, msg: Any, seq: int) -> None:
        outcome = (err.name() if err else "ok", msg.partition(), msg.offset())
        reports.setdefault((topic, thread, seq), []).append(outcome)

    while time.monotonic() < stop_at:
        if thread == 2 and rng.random() < bad_share:
            # an unknown topic may raise at produce(): not what is measured here
            with contextlib.suppress(Exception):
                producer.produce(small if rng.random() < 0.5 else f"{small}-missing", bytes(10_000))
        k = rng.randrange(len(keys))
        value = encode(index, thread, seq, key_seq[k], bytes(200))
        for _ in range(40):  # bounded: a full queue is served and retried
            try:
                producer.produce(topic, value, key=keys[k] if thread < 2 else None,
                                 on_delivery=lambda e, m, s=seq: report(e, m, s))
                break
            except BufferError:
                producer.poll(0.05)
        key_seq[k] += 1
        seq += 1
        if seq % 16 == 0:
            producer.poll(0)
        next_at += 1.0 / RATE
        delay = next_at - time.monotonic()
        if delay > 0.005:
            time.sleep(delay)  # pacing an open loop: the time is the point


def _copies(bootstrap: str, topic: str, wanted: set[tuple[int, int, int]]) -> dict[Any, list[Any]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex, "enable.auto.commit": False})
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        found: dict[Any, list[Any]] = collections.defaultdict(list)
        idle = 0
        while idle < 3:  # bounded: three empty polls of 1 s end it
            batch = consumer.consume(1000, timeout=1.0)
            idle = 0 if batch else idle + 1
            for msg in batch:
                ids = decode(msg.value()) if msg.error() is None else None
                if ids is not None and ids[:3] in wanted:
                    found[ids[:3]].append((msg.partition(), msg.offset()))
        return dict(found)
    finally:
        consumer.close()


def run(rounds: int, stall_s: float, bad_share: float) -> dict[str, dict[str, int]]:
    totals = {kind: collections.Counter[str]() for kind in ("plain", "mute")}
    with LocalCluster(ClusterSpec(brokers=3)) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        for r in range(rounds):
            run_id = uuid.uuid4().hex[:6]
            small = f"dups-{run_id}-small"
            create_topic(admin, small, partitions=2, replication_factor=3, config={"max.message.bytes": "4096"})
            producers: list[tuple[str, str, Any]] = []
            for kind in ("plain", "mute"):
                topic = f"dups-{run_id}-{kind}"
                create_topic(admin, topic, partitions=6, replication_factor=3, config={"min.insync.replicas": "2"})
                conf = {
                    "bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 5, "message.timeout.ms": 30_000,
                    "acks": "all", "enable.idempotence": True, "allow.auto.create.topics": False,
                    "client.id": f"{kind}-r{r}", "debug": "eos",
                }
                producer = Producer(conf) if kind == "plain" else MuteProducer(
                    conf, policy={"defaults": {"keyed_policy": "hold"}}
                )
                producers.append((kind, topic, producer))
            reports: dict[tuple[str, int, int], list[tuple[str, int, int]]] = {}
            stop_at = time.monotonic() + ROUND_S
            threads = [
                threading.Thread(target=_worker, args=(p, t, small, i, th, stop_at, bad_share, reports), daemon=True)
                for i, (_, t, p) in enumerate(producers)
                for th in range(3)
            ]
            for t in threads:
                t.start()
            time.sleep(STALL_AT_S)  # the fault's start time: there is no event to await
            victim = 1 + r % 3
            with cluster.stalled(victim):
                time.sleep(stall_s)  # the fault's length
            for t in threads:
                t.join(ROUND_S + 60)
            for _, _, p in producers:
                p.flush(60)
            for kind, topic, p in producers:
                read = read_back(cluster.bootstrap_servers, topic)
                dup_ids = {ids for ids, n in read.copies.items() if n > 1}
                order = key_order(read)
                line = (f"round {r} broker {victim} stalled {stall_s:.1f}s  {kind:5s} records {read.records:5d}  "
                        f"duplicated {sum(read.copies[i] - 1 for i in dup_ids):4d}  inversions {order.inversions:4d}"
                        f"  first-copy inversions {order.first_copy_inversions:3d}")
                print(line, flush=True)
                if dup_ids:
                    where = _copies(cluster.bootstrap_servers, topic, dup_ids)
                    for ids in sorted(dup_ids)[:5]:
                        print(f"    {ids}: copies {where.get(ids)}, reports {reports.get((topic, ids[1], ids[2]))}")
                totals[kind]["rounds"] += 1
                totals[kind]["rounds_with_duplicates"] += bool(dup_ids)
                totals[kind]["duplicated"] += sum(read.copies[i] - 1 for i in dup_ids)
                totals[kind]["first_copy_inversions"] += order.first_copy_inversions
                if kind == "mute":
                    p.close(10)
            del producers
    return {kind: dict(c) for kind, c in totals.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="rounds of 25 s (default 10)")
    parser.add_argument("--stall", type=float, default=9.4, help="seconds each stall lasts (default 9.4)")
    parser.add_argument("--bad-share", type=float, default=0.02, help="share of bad messages on the unkeyed thread")
    parser.add_argument("--eos-log", type=Path, default=Path(os.devnull), help="librdkafka's debug=eos lines go here")
    args = parser.parse_args(argv)
    if not 1 <= args.rounds <= 100:
        parser.error("--rounds: between 1 and 100")
    if not 0.5 <= args.stall <= 15:
        parser.error("--stall: between 0.5 and 15 seconds (a round lasts 25 s)")
    if not 0 <= args.bad_share <= 0.5:
        parser.error("--bad-share: between 0 and 0.5")
    saved = os.dup(2)
    with open(args.eos_log, "wb") as log:
        os.dup2(log.fileno(), 2)  # librdkafka logs to fd 2
        try:
            totals = run(args.rounds, args.stall, args.bad_share)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    print(f"totals: {totals}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
