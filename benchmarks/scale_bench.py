"""How MuteProducer's costs scale with partitions and with muted partitions (issue 14, item 3). No broker.

    python benchmarks/scale_bench.py                   # ~5 minutes
    python benchmarks/scale_bench.py --partitions 12,120,1200 --wide 10000,50000 --reps 7

Two figures per size, each the median of ``--reps`` repetitions with its min..max:

* **decision**: one detection round of the driver thread (the tracker's checkpoint and
  ``ProducerMuteManager.evaluate()`` with the busy partitions, as the driver calls them) with every partition
  written to within the last second, in two shapes: ``all``, every partition sent a message and holding it each
  round (the most a round can have to judge), and ``sparse``, ``--sparse`` partitions a round (500: a producer
  moving to 10,000 partitions a second, sticky or keyed), the rest written lately with nothing outstanding; and
  the time from a mute decision to the new snapshot published (``mute()``: breaker trip plus snapshot rebuild).
  A muted partition is decided within one tick (``tick_interval_s``, 50 ms) plus one round, so the round's time
  is what grows with the partition count; ``share_of_core`` is the round over the 50 ms tick.
* **per message**: ``produce()`` of 512-byte unkeyed and keyed messages through MuteProducer around a stand-in
  librdkafka producer (``mutepro.testing.fakes.FakeInnerProducer``: a list append), with
  0, 10 % and 50 % of the partitions muted. The stand-in costs the same at every size, so what grows is mutepro's.

Writes ``scale_bench.json`` to ``--out``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from mutepro import MuteProducer
from mutepro.mute.manager import ProducerMuteManager
from mutepro.policy.schema import TopicPolicy
from mutepro.producer.tracker import OutstandingTracker
from mutepro.testing.fakes import FakeClock, FakeInnerProducer

console = Console(stderr=True)
TOPIC = "scale"
VALUE = b"x" * 512
TICK_US = 50_000.0  # the driver's tick (tick_interval_s): a round's share of one core is its time over this


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def decision(partitions: int, muted: int, rounds: int, busy_per_round: int | None = None) -> dict[str, float]:
    """Median microseconds of one round (checkpoint + evaluate) and of one mute() (decision -> snapshot published).

    ``busy_per_round``: how many partitions are sent a message each round, in turn (``None``: every one); every
    message is delivered (a fast report) before the next round. Every partition was written to and delivered once
    before."""
    now = [1000.0]
    tracker = OutstandingTracker(buffer_max_messages=100_000, buffer_max_bytes=1 << 30)
    manager = ProducerMuteManager(lambda _t: TopicPolicy(), clock=lambda: now[0], wall_clock=lambda: now[0])
    manager.rounds.ensure_topic(TOPIC, partitions, {p: p % 3 + 1 for p in range(partitions)})
    for p in range(muted):
        manager.mute(TOPIC, p)
    tally = tracker.ensure(TOPIC, partitions, 1.0)
    per_round = partitions if busy_per_round is None else min(busy_per_round, partitions)
    rounds_us: list[float] = []
    start_at = 0
    for r in range(rounds + 2):  # two rounds to write and deliver every partition once, not timed
        now[0] += 0.05
        batch = range(partitions) if r == 0 else [(start_at + i) % partitions for i in range(per_round)]
        for p in batch:
            tally.sent[p] += 1
            tally.sent_bytes[p] += 512
        if r > 0:
            start_at = (start_at + per_round) % partitions
        start = time.perf_counter()
        tracker.checkpoint(now[0])  # the driver's round (ProducerDriver.tick): checkpoint, reports, judgement
        for topic, p, calls, failures, slow in list(tracker.drain()):
            manager.rounds.record_many(topic, p, calls, failures, slow, now[0])
        manager.rounds.evaluate(tracker.load, busy_of=tracker.busy)
        if r >= 2:
            rounds_us.append((time.perf_counter() - start) * 1e6)
        for p in batch:  # delivered before the next round, fast
            tally.ok[p] += tally.sent[p] - tally.reported[p]
            tally.reported[p] = tally.sent[p]
    mutes_us = []
    for p in range(muted, min(partitions, muted + 20)):
        start = time.perf_counter()
        manager.mute(TOPIC, p)
        mutes_us.append((time.perf_counter() - start) * 1e6)
    return {"evaluate_us": statistics.median(rounds_us), "mute_publish_us": statistics.median(mutes_us)}


def per_message(partitions: int, muted: int, keyed: bool, messages: int) -> float:
    """Nanoseconds per produce() through MuteProducer around the stand-in producer (reports served in batches)."""
    fake = FakeInnerProducer({TOPIC: partitions}, capacity=messages + partitions + 10)
    clock = FakeClock()
    producer = MuteProducer(
        {"bootstrap.servers": "127.0.0.1:1", "linger.ms": 5}, clock=clock,
        _inner_factory=fake.factory, _threads=False,
    )
    producer.wait_for_topic(TOPIC, 0)  # asks for the metadata, which the driver's metadata round loads
    producer._load_metadata(clock())
    for p in range(partitions):  # one delivered message per partition, as after a warm start
        producer.produce(TOPIC, b"warm", partition=p)
    fake.deliver(TOPIC)
    producer._tick(clock.advance(0.05))
    for p in range(muted):
        producer.mute_manager.mute(TOPIC, p)
    keys = [f"key-{i}".encode() for i in range(1000)]
    produce = producer.produce
    gc.collect()
    start = time.perf_counter()
    if keyed:
        for i in range(messages):
            produce(TOPIC, VALUE, keys[i % 1000])
    else:
        for _ in range(messages):
            produce(TOPIC, VALUE)
    elapsed = time.perf_counter() - start
    fake.deliver()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        producer.close(0.05)
    return elapsed / messages * 1e9


def _anchor_ms() -> float:
    """Milliseconds of a fixed pure-Python loop (``sum(range(10**6))``, best of 5): the machine's speed on the
    day, so that figures from different days compare (the result records it as ``meta.anchor_ms``)."""
    best = math.inf
    for _ in range(5):
        start = time.perf_counter()
        sum(range(10**6))
        best = min(best, time.perf_counter() - start)
    return round(best * 1000, 2)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--partitions", default="12,120,1200")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--rounds", type=int, default=100,
                   help="timed rounds per repetition (fewer at large sizes: at most 400,000 partition-rounds)")
    p.add_argument("--sparse", type=int, default=500, help="partitions sent a message per round in the sparse shape")
    p.add_argument("--wide", default="10000",
                   help="sizes measured for the round only, with nothing muted (muting thousands one by one and "
                   "producing through them would take minutes)")
    p.add_argument("--messages", type=int, default=50_000, help="produce() calls per per-message figure")
    p.add_argument("--out", default="benchmarks/results")
    args = p.parse_args(argv)
    sizes = [int(x) for x in args.partitions.split(",") if x.strip()]
    wide = [int(x) for x in args.wide.split(",") if x.strip()]
    paths = ["c"]  # MuteProducer's one per-message path (the C extension)
    # command, date and machine in the result itself: the report states them (benchmarks/make_report.py)
    result: dict[str, Any] = {"meta": {
        "command": "python benchmarks/scale_bench.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "reps": args.reps, "anchor_ms": _anchor_ms(),
    }, "decision": {}, "per_message": {}}  # fmt: skip
    for n in [*sizes, *wide]:
        rounds = max(5, min(args.rounds, 400_000 // n))
        for share in (0.0, 0.1, 0.5) if n not in wide else (0.0,):
            muted = int(n * share)
            for shape, busy in (("all", None), ("sparse", args.sparse)):
                if shape == "sparse" and args.sparse >= n:
                    continue  # the same as all
                reps = [decision(n, muted, rounds, busy) for _ in range(args.reps)]
                ev = _spread([r["evaluate_us"] for r in reps])
                result["decision"][f"{n}/{muted}/{shape}"] = {
                    "partitions": n, "muted": muted, "shape": shape, "busy_per_round": busy or n,
                    "evaluate_us": ev, "share_of_core": round(ev["median"] / TICK_US, 4),
                    "mute_publish_us": _spread([r["mute_publish_us"] for r in reps]),
                }  # fmt: skip
                console.print(f"  {n:6d} partitions, {muted:5d} muted, {shape:6s}: round {ev['median']:,.0f} us")
            for name in paths if n not in wide else ():
                for keyed in (False, True):
                    ns = [per_message(n, muted, keyed, args.messages) for _ in range(args.reps)]
                    key = f"{n}/{muted}/{name}/{'keyed' if keyed else 'unkeyed'}"
                    result["per_message"][key] = {"partitions": n, "muted": muted, "path": name, "keyed": keyed,
                                                  "ns": _spread(ns)}  # fmt: skip
    _summary(result)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scale_bench.json").write_text(json.dumps(result, indent=1))
    console.print(f"wrote {out / 'scale_bench.json'}")
    return 0


def _summary(result: dict[str, Any]) -> None:
    table = Table(title="decision: one round and mute() -> snapshot, microseconds (median, min..max)")
    for col in ("partitions", "muted", "busy a round", "round us", "share of a core", "mute() us"):
        table.add_column(col)
    for r in result["decision"].values():
        ev, mu = r["evaluate_us"], r["mute_publish_us"]
        spread = f"{ev['median']:,.0f} ({ev['min']:,.0f}..{ev['max']:,.0f})"
        table.add_row(str(r["partitions"]), str(r["muted"]), str(r["busy_per_round"]), spread,
                      f"{r['share_of_core']:.1%}", f"{mu['median']:,.0f}")  # fmt: skip
    console.print(table)
    table = Table(title="produce() through MuteProducer around a stand-in producer, ns per message (median)")
    for col in ("partitions", "muted", "path", "unkeyed", "keyed"):
        table.add_column(col)
    rows: dict[tuple[int, int, str], dict[str, float]] = {}
    for r in result["per_message"].values():
        rows.setdefault((r["partitions"], r["muted"], r["path"]), {})["keyed" if r["keyed"] else "unkeyed"] = (
            r["ns"]["median"]
        )
    for (n, muted, path), v in rows.items():
        table.add_row(str(n), str(muted), path, f"{v.get('unkeyed', 0):,.0f}", f"{v.get('keyed', 0):,.0f}")
    console.print(table)


if __name__ == "__main__":
    sys.exit(main())
