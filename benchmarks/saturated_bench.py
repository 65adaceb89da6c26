"""MuteProducer vs confluent_kafka.Producer as a saturated writer (issue 11): a closed loop that produces as fast as
``produce()`` accepts, which is what a Spark batch write, a backfill or a replay does.

    python benchmarks/saturated_bench.py                      # everything below, ~55 minutes
    python benchmarks/saturated_bench.py --sections styles --seconds 20 --reps 2 --cpu-load 2

Sections (``--sections``, comma-separated):

* ``styles``: healthy cluster, 12 partitions, 512-byte values, every calling style a confluent-kafka user writes
  (positional; ``value=``/``key=``/``partition=``/``headers=``/``timestamp=`` keywords; ``on_delivery=`` and
  ``callback=``; keyed and unkeyed). Each style's loop is generated from a template so that the call itself is the
  only thing that differs: no wrapper function per message. Plain and mute alternate (A-B, then B-A) so drift on
  the shared machine hits both. ``--cpu-load N`` runs N busy processes beside the loops (the same for both
  producers): the "CPU shared with the executor JVM" case.
* ``partitions``: the unkeyed keyword loop at 12, 120 and 1,200 partitions: cost per message as partitions grow.
* ``ceiling``: healthy cluster, the unkeyed keyword loop on a 12-partition topic led by all three brokers and on one
  led by brokers 1 and 3 only: what this machine delivers while broker 2 takes no load (the brokers share the two
  cores with the producer). MuteProducer also runs the three-broker topic with broker 2 muted by hand (healthy,
  unused): what the muted state costs by itself. See ``Bench.ceiling``.
* ``faults``: the **default policy** (``MuteProducer(conf)``, nothing tuned), the unkeyed keyword loop
  (``limp_keyed``/``stall_keyed``: the keyed one, 1,000 keys), closed loop for
  ``--fault-run`` seconds on a topic whose 12 leaders are spread evenly (4 per broker), with broker 2 limping
  (stopped 80% of every second) or stalled (SIGSTOP) in the middle third; delivered msg/s before, during and after
  the fault, from the delivery callbacks' times. Kafka's Java
  producer with KIP-794 adaptive partitioning runs the same fault as a third peer (``--no-java`` leaves it out;
  settings and why: ``java_peer.py``). ``--fault-reps`` rounds (default 3) of one run per producer, plain and
  mute alternating which goes first; each ratio is reported with its median and min..max over the rounds.

Before the first figure an unmeasured plain closed loop runs for ``--warmup`` seconds (default 60): a freshly
started cluster is slow for its first minute or so of load (see ``Bench.warm_up``).

Each styles and partitions run goes on in a Python process of its own (``--isolate``, the default; see
``Bench.run``), as an application runs its one producer. Every figure is the median over ``--reps`` repetitions
with its min..max; ratios are mute / plain from the same run.
Healthy runs also report how many partitions MuteProducer muted (the goal: none). Writes
``saturated_bench.json`` to ``--out``.
"""

from __future__ import annotations

import argparse
import bisect
import gc
import json
import logging
import os
import platform
import subprocess
import sys
import threading
import time
import uuid
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import confluent_kafka
from bench_load import DELIVERED, KEYS, VALUE_BYTES, CpuLoad, Recorder
from bench_plot import plot_faults
from bench_report import median
from confluent_kafka.admin import AdminClient
from java_peer import JAVA_PROPS, java_available, run_peer
from rich.console import Console
from rich.table import Table

from mutepro.cluster import ClusterSpec, LocalCluster
from mutepro.cluster.topics import create_topic
from mutepro.producer.producer import MuteProducer

console = Console(stderr=True)
FAULT_BROKER = 2
POLL_EVERY = 500  # the loop: poll(0) every 500 messages
# Bound on messages per run. A saturated loop reaches ~300,000 msg/s on a quiet machine: a 60 s fault run needs
# 18 M (4 M, the former bound, ended every run after ~15 s, before the fault); MuteProducer reached 570,000 msg/s
# before a stall, and 30 M ended its 60 s fault runs ~7 s early, in the after-fault third. Recorder arrays:
# 18 B/message (810 MB at this bound).
CAPACITY = 45_000_000

# Why the benchmark's topics keep little data: a saturated run writes 230 MB/s (450k msg/s of 512 B), 14 GB in a
# 60 s fault run, to brokers that share this machine's two cores. Past the kernel's dirty_background threshold
# (10 % of 23 GB here, reached ~9 s into a run) its writeback threads take CPU from the brokers and the producer:
# a plain warm-up loop fell from 420-465k msg/s in its first 9 s to ~350k for the rest, so every run's first
# seconds were faster than its later ones, and a fault run's pre-fault third was measured on a faster machine
# than its fault. Segments of 32 MB, deleted (unwritten) once 64 MB per partition is behind them and checked
# every second, keep ~1 GB in the page cache at most: one plain run measured 420k msg/s this way against 380k
# with the usual topic, with no drift over its 60 s. Production brokers run on machines of their own.
TOPIC_CONFIG = {"segment.bytes": str(32 << 20), "retention.bytes": str(64 << 20), "file.delete.delay.ms": "0"}
BROKER_CONFIG = {"log.retention.check.interval.ms": "1000"}

#: style name -> the produce() call as users write it (names in scope: produce, topic, value, key, cb, n, P, H, TS)
STYLES: dict[str, str] = {
    "positional": "produce(topic, value, None, -1, cb)",
    "positional_keyed": "produce(topic, value, key, -1, cb)",
    "keywords": "produce(topic, value=value, key=None, on_delivery=cb)",
    "keywords_keyed": "produce(topic, value=value, key=key, on_delivery=cb)",
    "callback_kw": "produce(topic, value, callback=cb)",
    "partition_kw": "produce(topic, value=value, partition=n % P, on_delivery=cb)",
    "headers_kw": "produce(topic, value=value, key=key, headers=H, on_delivery=cb)",
    "timestamp_kw": "produce(topic, value=value, key=key, timestamp=TS, on_delivery=cb)",
    # confluent-kafka's README loop: poll(0) before every produce() (on top of the loop's poll every 500)
    "poll_each": "poll(0); produce(topic, value, callback=cb)",
    # the documented minimum: poll only when produce() raises BufferError (no poll every 500, see POLLS_EVERY)
    "poll_on_full": "produce(topic, value, callback=cb)",
}
#: styles whose loop does not poll every POLL_EVERY messages (0: only on BufferError)
POLLS_EVERY = {"poll_on_full": 0}

_LOOP = """
def loop(producer, topic, cb, sent, n, cap, stop_at, clock, keys, pad, P, H, TS):
    produce, poll = producer.produce, producer.poll
    errors = 0
    nkeys = len(keys)
    while n < cap:
        key = keys[n % nkeys]
        value = n.to_bytes(8, "big") + pad
        try:
            {call}
        except BufferError:
            errors += 1
            poll(0.001)
            if clock() >= stop_at:
                break
            continue
        sent[n] = clock()
        n += 1
        if {poll_every} and not n % {poll_every}:
            poll(0)
            if clock() >= stop_at:
                break
        elif not {poll_every} and not n & 1023 and clock() >= stop_at:
            break
    return n, errors
"""

_KEYS = [f"key-{i:04d}".encode() for i in range(KEYS)]
_PAD = bytes(VALUE_BYTES - 8)
_LOOPS: dict[str, Callable[..., tuple[int, int]]] = {}


def _loop_for(style: str) -> Callable[..., tuple[int, int]]:
    """The closed loop with ``style``'s call inlined (compiled once per style)."""
    if style not in _LOOPS:
        scope: dict[str, Any] = {}
        source = _LOOP.format(call=STYLES[style], poll_every=POLLS_EVERY.get(style, POLL_EVERY))
        exec(compile(source, f"<saturated loop {style}>", "exec"), scope)  # our own template, compiled once
        _LOOPS[style] = scope["loop"]
    return _LOOPS[style]


def _spread(values: list[float], digits: int = 1) -> dict[str, float]:
    return {"median": round(median(values), digits), "min": round(min(values), digits),
            "max": round(max(values), digits)}  # fmt: skip


class Bench:
    def __init__(self, cluster: LocalCluster, args: argparse.Namespace) -> None:
        self.cluster = cluster
        self.args = args
        self.admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        self._made: list[str] = []

    def conf(self) -> dict[str, Any]:
        return self.cluster.client_config(**{"linger.ms": 5, "acks": "1"})

    def topic(self, partitions: int, rf: int = 1, leaders: Sequence[int] | None = None) -> str:
        """A fresh topic; ``leaders`` places partition p's only replica on ``leaders[p % len(leaders)]``."""
        # The previous run's topic goes first: a saturated run writes 5-8 GB (15 M messages of 512 B), and a full
        # section without deletions filled the disk (a broker died of "No space left on device" mid-run).
        if self._made:
            for future in self.admin.delete_topics(self._made, operation_timeout=30).values():
                try:
                    future.result(60)
                except Exception as err:
                    console.print(f"[yellow]could not delete a benchmark topic: {err}")
            self._made.clear()
        name = f"sat-{uuid.uuid4().hex[:8]}"
        self._made.append(name)
        assignment = [[leaders[p % len(leaders)]] for p in range(partitions)] if leaders else None
        create_topic(self.admin, name, partitions=partitions, replication_factor=rf, replica_assignment=assignment,
                     config=TOPIC_CONFIG)  # fmt: skip
        # Deleting the last topic and creating this one go on in the brokers after the admin calls return (with
        # 1,200 partitions, for seconds): a run started at once would be measured against a cluster at work.
        cores = self.cluster.wait_quiet(0.3, timeout_s=90)
        if cores > 0.3:
            console.print(f"[yellow]the brokers still use {cores:.2f} cores after 90 s; measuring anyway")
        return name

    def producer(self, kind: str, topic: str) -> Any:
        """A plain or a default-policy MuteProducer (nothing tuned) that already knows ``topic``'s metadata."""
        return make_producer(kind, self.conf(), topic)

    def fault_context(self, fault: str, seconds: float) -> Any:
        """Broker 2 limping (stopped 80 % of every second, bounded) or stalled, for the ``with`` block."""
        if _fault_kind(fault)[0] == "limp":
            return self.cluster.limping(FAULT_BROKER, max_duration_s=seconds + 5)
        return self.cluster.stalled(FAULT_BROKER)

    def run(
        self, kind: str, style: str, topic: str, partitions: int, seconds: float, timed: bool = False,
        prepare: Callable[[Any], None] | None = None,
    ) -> dict[str, Any]:
        """One closed-loop run; delivered msg/s over the load and the bounded flush after it. ``timed`` also
        keeps deliveries per second (the partitions sweep: where a slow run lost its time); ``prepare`` gets the
        producer before the loop starts.

        With ``--isolate`` (the default) a run without ``prepare`` goes on in a Python process of its own, as an
        application runs its one producer (mutepro's Spark sink keeps one per Python worker). Why: in one long
        benchmark process every run inherits the heap and the allocator state of all runs before it. A plain run
        right after the warm-up reached 448k msg/s and the three after it 346-375k; in one session the positional
        style measured 0.90x (0.87..0.99) in one process and 1.00x (0.86..1.23) isolated. Why a long process
        costs MuteProducer more than the plain client is not known (benchmarks/README, sixteenth session)."""
        if self.args.isolate and prepare is None:
            return _run_isolated(kind, style, topic, partitions, seconds, timed, self.conf())
        return run_loop(kind, style, topic, partitions, seconds, self.conf(), timed, prepare)

    def warm_up(self, partitions: int, seconds: float) -> dict[str, Any]:
        """An unmeasured plain closed loop before the first figure, on a topic of ``partitions``.

        Why: a freshly started cluster is slow for its first minute or so of load. In the first 1,200-partition
        pair of a new cluster the brokers used 1.2-1.3 cores for 118-226k msg/s, in the next pair 0.6 cores for
        350-360k; the plain producer's rate doubled 16 s into its run, with nothing else changing (JIT warm-up,
        presumably). Both producers of the first pair were measured against a different cluster than the rest.
        What MuteProducer does on such a cluster (brokers taking turns to go silent for 1-8 s) is a finding of
        its own, in the benchmarks README; the sweep's figures are for a cluster that has run a while."""
        console.print(f"warm-up: plain closed loop, {partitions} partitions, {seconds:.0f} s (not measured)")
        r = self.run("plain", "keywords", self.topic(partitions), partitions, seconds, timed=True)
        return {"partitions": partitions, "seconds": seconds, "msgs_s": round(r["msgs_s"], 1),
                "delivered_per_s": r["delivered_per_s"]}  # fmt: skip

    def pair(self, style: str, partitions: int, seconds: float, reps: int, timed: bool = False) -> dict[str, Any]:
        """``reps`` plain/mute pairs in alternating order, each on a fresh topic."""
        runs: dict[str, list[dict[str, Any]]] = {"plain": [], "mute": []}
        for rep in range(reps):
            first = ("plain", "mute") if self.args.first == "plain" else ("mute", "plain")
            order = first if rep % 2 == 0 else first[::-1]
            for kind in order:
                topic = self.topic(partitions)
                runs[kind].append(self.run(kind, style, topic, partitions, seconds, timed))
                console.print(f"  {style:18s} {partitions:5d}p rep {rep + 1} {kind:5s} "
                              f"{runs[kind][-1]['msgs_s']:>10,.0f} msg/s  mutes {runs[kind][-1]['mutes']}"
                              f"  avoids {runs[kind][-1]['avoids']}")  # fmt: skip
        plain = [r["msgs_s"] for r in runs["plain"]]
        mute = [r["msgs_s"] for r in runs["mute"]]
        ratios = [m / p for m, p in zip(mute, plain, strict=True)]
        return {
            "plain_msgs_s": _spread(plain), "mute_msgs_s": _spread(mute),
            "ratio": {k: round(v / 1, 3) for k, v in {"median": median(ratios), "min": min(ratios),
                                                      "max": max(ratios)}.items()},
            "mute_us_per_msg": round(1e6 / median(mute), 2), "plain_us_per_msg": round(1e6 / median(plain), 2),
            "healthy_partitions_muted": sum(r["mutes"] for r in runs["mute"]),
            "avoid_episodes": sum(r["avoids"] for r in runs["mute"]),
            "lost": sum(r["accepted"] - r["delivered"] - r["failed"] for rs in runs.values() for r in rs),
            "runs": runs,
        }  # fmt: skip

    def balanced(self) -> list[int]:
        """Every broker leads the same number of partitions (4 of 12 with 3 brokers).

        Why: left to the controller, broker 2 led 2, 3 and 5 of 12 partitions in three topics of one session, so
        a fault took a sixth to five twelfths of the load away from one round to the next."""
        return sorted(self.cluster.brokers)

    def ceiling(self, seconds: float, reps: int) -> dict[str, Any]:
        """What the machine delivers with broker 2 out of the way: closed loops on a topic led by all three brokers
        and on one led by the two others only (broker 2 healthy, unused), both producers, order alternating; and
        MuteProducer on the three-broker topic with broker 2 muted by hand.

        Why: a fault run's during/pre compares a third on three brokers with one on two, on brokers that share
        the producer's two cores. ``two_over_three`` says what that costs any producer here with nothing wrong;
        ``three_muted_over_three`` what MuteProducer's muted state costs by itself (the writable-set check per
        message, picks among fewer partitions), apart from the fault."""
        three = self.balanced()
        two = [b for b in three if b != FAULT_BROKER]
        out: dict[str, Any] = {"seconds": seconds, "reps": reps, "three": three, "two": two}

        def mute_broker_2(producer: MuteProducer) -> None:
            producer.mute_manager.mute_broker(FAULT_BROKER)

        for kind in ("plain", "mute"):
            # MuteProducer also runs the three-broker topic with broker 2 muted by hand (healthy, unused): what
            # the muted state itself costs, apart from the fault
            layouts = ("three", "two") + (("three_muted",) if kind == "mute" else ())
            runs: dict[str, list[float]] = {layout: [] for layout in layouts}
            for rep in range(reps):
                for layout in layouts if rep % 2 == 0 else layouts[::-1]:
                    topic = self.topic(12, leaders=two if layout == "two" else three)
                    prepare = mute_broker_2 if layout == "three_muted" else None
                    r = self.run(kind, "keywords", topic, 12, seconds, prepare=prepare)
                    runs[layout].append(r["msgs_s"])
                    console.print(f"  ceiling {kind:5s} rep {rep + 1} {layout:11s} {r['msgs_s']:>10,.0f} msg/s"
                                  f"  mutes {r['mutes']}")  # fmt: skip
            out[kind] = {f"{layout}_msgs_s": _spread(runs[layout]) for layout in layouts}
            for layout in layouts[1:]:
                ratios = [t / h for t, h in zip(runs[layout], runs["three"], strict=True)]
                out[kind][f"{layout}_over_three"] = _spread(ratios, 3)
            out[kind]["runs"] = runs
        return out

    def java_fault(self, fault: str, run_s: float) -> dict[str, Any]:
        """The Java producer (KIP-794 adaptive partitioning, see java_peer.py) in the same closed-loop fault run:
        ``send()`` as fast as it returns (it blocks on a full buffer: its own back-pressure)."""
        topic = self.topic(12, leaders=self.balanced())
        rec = Recorder(CAPACITY)
        third = run_s / 3
        start_at = time.monotonic() + 8.0  # the JVM starts and connects first; the phases count from start_at

        def inject() -> None:
            time.sleep(max(0.0, start_at + third - time.monotonic()))
            with self.fault_context(fault, third):
                time.sleep(max(0.0, start_at + 2 * third - time.monotonic()))

        injector = threading.Thread(target=inject, daemon=True)
        injector.start()
        props = {**JAVA_PROPS, "acks": "1", "linger.ms": "5", "buffer.memory": str(100_000 * 600),
                 "client.id": "sat-java"}  # fmt: skip
        res, extra = run_peer(self.cluster.bootstrap_servers, topic, mode="closed", rate=0, seconds=run_s,
                              keyed=_fault_kind(fault)[1], start_at=start_at, props=props, recorder=rec,
                              timeout_s=run_s + 300)  # fmt: skip
        injector.join(run_s + 60)
        n = min(res.accepted, CAPACITY)
        times = array("d", sorted(rec.done[i] for i in range(n) if rec.state[i] == DELIVERED))

        def rate(a: float, b: float) -> float:
            return round((bisect.bisect_left(times, b) - bisect.bisect_left(times, a)) / (b - a), 1)

        f0, f1 = start_at + third, start_at + 2 * third
        return {
            "accepted": res.accepted, "delivered": rec.delivered, "failed": rec.failed, "duplicates": rec.duplicates,
            "lost": res.accepted - rec.delivered - rec.failed, "send_blocked_s": extra["send_blocked_s"],
            "pre_msgs_s": rate(start_at, f0), "during_msgs_s": rate(f0, f1), "after_msgs_s": rate(f1, f1 + third),
            "java_props": props, "fault_s": [round(third, 3), round(2 * third, 3)],
            "delivered_per_s": _per_second(times, start_at, f1 + third),
        }  # fmt: skip

    def faults(
        self, fault: str, kinds: Sequence[str], run_s: float, reps: int, save: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any]:
        """``reps`` rounds of one run per producer (plain and mute alternate which goes first). The entry keeps
        the round whose MuteProducer ratio is the median in full (series, events: the plot) and every round's
        figures, with each ratio's median and min..max over the rounds.

        Why rounds: a run's ratio is against its own pre-fault third, and pre-fault rates on this machine swing
        350-460k msg/s between runs while a stalled run's two brokers deliver a steadier 360-380k; one run says
        little about the producer."""
        rounds: list[dict[str, Any]] = []
        entry: dict[str, Any] = {}
        for rep in range(reps):
            order = list(kinds) if rep % 2 == 0 else ["mute", "plain", *kinds[2:]]
            one: dict[str, Any] = {kind: self.fault(kind, fault, run_s) for kind in order}
            for kind in kinds:
                r = one[kind]
                r["during_over_pre"] = round(r["during_msgs_s"] / r["pre_msgs_s"], 3) if r["pre_msgs_s"] else None
                console.print(f"  {fault:6s} rep {rep + 1} {kind:5s} pre {r['pre_msgs_s']:>9,.0f} "
                              f"during {r['during_msgs_s']:>9,.0f} after {r['after_msgs_s']:>9,.0f} msg/s "
                              f"({r['during_over_pre']}x)")  # fmt: skip
            plain_during = one["plain"]["during_msgs_s"]
            over = round(one["mute"]["during_msgs_s"] / plain_during, 3) if plain_during else None
            one["mute_over_plain_during"] = over
            rounds.append(one)
            ranked = sorted(rounds, key=lambda r: r["mute"]["during_over_pre"] or 0.0)
            entry = dict(ranked[(len(ranked) - 1) // 2])  # the median round (the lower one of an even count)
            entry["rounds"] = [
                {kind: {k: v for k, v in r[kind].items() if k not in ("delivered_per_s", "events")} for kind in kinds}
                | {"mute_over_plain_during": r["mute_over_plain_during"]}
                for r in rounds
            ]
            entry["spread"] = {
                **{f"{kind}_during_over_pre": _spread([r[kind]["during_over_pre"] or 0.0 for r in rounds], 3)
                   for kind in kinds},
                "mute_over_plain_during": _spread([r["mute_over_plain_during"] or 0.0 for r in rounds], 3),
            }  # fmt: skip
            entry["reps"] = len(rounds)
            save(entry)  # a long section keeps what it measured if it is stopped part-way
        return entry

    def fault(self, kind: str, fault: str, run_s: float) -> dict[str, Any]:
        """Closed loop for ``run_s``, broker 2 limping or stalled in the middle third; per-phase delivered msg/s."""
        if kind == "java":
            return self.java_fault(fault, run_s)
        partitions = 12
        topic = self.topic(partitions, leaders=self.balanced())
        producer = self.producer(kind, topic)
        rec = TimedRecorder(CAPACITY)
        loop = _loop_for("keywords_keyed" if _fault_kind(fault)[1] else "keywords")
        third = run_s / 3
        args = (time.monotonic, _KEYS, _PAD, partitions, None, 0)
        t0 = time.monotonic()
        n, e1 = loop(producer, topic, rec.on_delivery, rec.sent, 0, CAPACITY, t0 + third, *args)
        f0 = time.monotonic()
        with self.fault_context(fault, third):
            n, e2 = loop(producer, topic, rec.on_delivery, rec.sent, n, CAPACITY, f0 + third, *args)
        f1 = time.monotonic()
        n, e3 = loop(producer, topic, rec.on_delivery, rec.sent, n, CAPACITY, f1 + third, *args)
        left = producer.flush(120)
        _warn_if_capped(n)
        counters: dict[str, Any] = {}
        events: list[dict[str, Any]] = []
        if isinstance(producer, MuteProducer):
            counters = producer.counters.as_dict()
            events = _mute_events(producer, t0)
            producer.close()
        del producer
        gc.collect()
        return {
            "accepted": n, "delivered": rec.delivered, "failed": rec.failed, "duplicates": rec.duplicates,
            "lost": n - rec.delivered - rec.failed, "left_after_flush": left, "buffer_errors": e1 + e2 + e3,
            "pre_msgs_s": _DeliveryCounter.rate(rec, t0, f0), "during_msgs_s": _DeliveryCounter.rate(rec, f0, f1),
            "after_msgs_s": _DeliveryCounter.rate(rec, f1, f1 + third), "counters": counters, "events": events[:200],
            "fault_s": [round(f0 - t0, 3), round(f1 - t0, 3)],
            "delivered_per_s": _per_second(rec.times, t0, f1 + third),
        }  # fmt: skip


#: fault name -> (what happens to broker 2, keyed loop?): ``limp_keyed`` / ``stall_keyed`` run the keyed keyword
#: loop (1,000 keys; MuteProducer's default ``keyed_policy: reroute``; the Java producer hashes keys, which KIP-794's
#: adaptive partitioning never moves)
FAULTS = {"limp": ("limp", False), "stall": ("stall", False), "limp_keyed": ("limp", True),
          "stall_keyed": ("stall", True)}  # fmt: skip


def make_producer(kind: str, conf: dict[str, Any], topic: str) -> Any:
    """A plain or a default-policy MuteProducer (nothing tuned) that already knows ``topic``'s metadata."""
    if kind == "plain":
        plain = confluent_kafka.Producer(conf)
        plain.list_topics(topic, timeout=15)
        return plain
    producer = MuteProducer(conf)
    producer.wait_for_topic(topic, 15)
    return producer


def run_loop(
    kind: str, style: str, topic: str, partitions: int, seconds: float, conf: dict[str, Any], timed: bool = False,
    prepare: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """One closed-loop run in this process (``Bench.run``)."""
    producer = make_producer(kind, conf, topic)
    if prepare is not None:
        prepare(producer)
    rec = TimedRecorder(CAPACITY) if timed else Recorder(CAPACITY)
    loop = _loop_for(style)
    gc.collect()
    t0 = time.monotonic()
    n, errors = loop(producer, topic, rec.on_delivery, rec.sent, 0, CAPACITY, t0 + seconds, time.monotonic,
                     _KEYS, _PAD, partitions, [("h", b"v")], int(time.time() * 1000))  # fmt: skip
    left = producer.flush(60)
    end = time.monotonic()
    _warn_if_capped(n)
    mutes = avoids = 0
    events: list[dict[str, Any]] = []
    counters: dict[str, Any] = {}
    if isinstance(producer, MuteProducer):
        counters = producer.counters.as_dict()
        mutes, avoids = counters["mutes"], counters["avoids"]
        events = _first_events(_mute_events(producer, t0))
        producer.close()
    del producer
    gc.collect()
    return {
        "accepted": n, "delivered": rec.delivered, "failed": rec.failed, "left": left, "buffer_errors": errors,
        "msgs_s": rec.delivered / (end - t0), "mutes": mutes, "avoids": avoids,
        "events": events, "counters": counters,
        **({"delivered_per_s": _per_second(rec.times, t0, end)} if isinstance(rec, TimedRecorder) else {}),
    }  # fmt: skip


#: the line before a child run's JSON result on its stdout
_CHILD_MARK = "saturated-run-result:"


def _run_isolated(
    kind: str, style: str, topic: str, partitions: int, seconds: float, timed: bool, conf: dict[str, Any]
) -> dict[str, Any]:
    """``run_loop`` in a fresh Python process (``--isolate``); its result comes back as JSON on its stdout."""
    spec = json.dumps({"kind": kind, "style": style, "topic": topic, "partitions": partitions, "seconds": seconds,
                       "timed": timed, "conf": conf})  # fmt: skip
    code = "import sys, saturated_bench; sys.exit(saturated_bench.child(sys.argv[1]))"
    path = [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    done = subprocess.run([sys.executable, "-c", code, spec], stdout=subprocess.PIPE, env=env,
                          timeout=seconds + 180, check=False)  # fmt: skip
    out = done.stdout.decode(errors="replace").splitlines()
    if done.returncode != 0 or _CHILD_MARK not in out:
        raise RuntimeError(f"the isolated {kind} run ({style}) failed with exit code {done.returncode}")
    return dict(json.loads(out[out.index(_CHILD_MARK) + 1]))


def child(spec_json: str) -> int:
    """A ``--isolate`` run's process: one ``run_loop``, its result printed after ``_CHILD_MARK``."""
    logging.getLogger("mutepro").setLevel(logging.ERROR)
    spec = json.loads(spec_json)
    result = run_loop(spec["kind"], spec["style"], spec["topic"], spec["partitions"], spec["seconds"], spec["conf"],
                      spec["timed"])  # fmt: skip
    print(_CHILD_MARK)
    print(json.dumps(result, default=str), flush=True)
    return 0


def _fault_kind(fault: str) -> tuple[str, bool]:
    try:
        return FAULTS[fault]
    except KeyError:
        raise SystemExit(f"--faults: unknown fault {fault!r}; choose from {sorted(FAULTS)}") from None


def _mute_events(producer: MuteProducer, t0: float) -> list[dict[str, Any]]:
    """The producer's mute decisions, timed from the run's start, with the verdict's figures."""
    return [{"t": round(e.at - t0, 3), "kind": str(e.kind), "partition": e.partition, "broker": e.broker,
             "reason": str(e.reason), "detail": dict(e.detail)} for e in list(producer.mute_manager.events)]


def _first_events(events: list[dict[str, Any]], own: int = 50, broker: int = 10) -> list[dict[str, Any]]:
    """The first ``own`` events of partitions judged on their own and the first ``broker`` of a broker verdict.

    A broker verdict mutes every partition the broker leads (400 at 1,200 partitions): kept in full they would
    crowd out the few partition verdicts that led to it.
    """
    mine = [e for e in events if e["reason"] != "broker"][:own]
    theirs = [e for e in events if e["reason"] == "broker"][:broker]
    return sorted(mine + theirs, key=lambda e: e["t"])


def _warn_if_capped(n: int) -> None:
    if n >= CAPACITY:
        console.print(f"[red]a run reached CAPACITY ({CAPACITY:,} messages) before its time: its figures are cut short")


def _per_second(times: Sequence[float], t0: float, end: float) -> list[int]:
    """Deliveries per whole second from ``t0`` to ``end`` (``times`` sorted): the plot's series."""
    return [bisect.bisect_left(times, t0 + i + 1) - bisect.bisect_left(times, t0 + i) for i in range(int(end - t0))]


class _DeliveryCounter:
    @staticmethod
    def rate(rec: TimedRecorder, a: float, b: float) -> float:
        """Delivered msg/s with a delivery callback time in [a, b) (callback times only grow)."""
        times = rec.times
        return round((bisect.bisect_left(times, b) - bisect.bisect_left(times, a)) / (b - a), 1)


class TimedRecorder(Recorder):
    """A recorder that also keeps every successful delivery's time, in order (the fault runs' phases)."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.times = array("d")  # 8 B per delivery (a list of floats took 32)

    def on_delivery(self, err: Any, msg: Any) -> None:
        if err is None:
            self.times.append(self.clock())
        super().on_delivery(err, msg)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sections", default="styles,partitions,faults")
    p.add_argument("--styles", default=",".join(STYLES), help=f"comma-separated, from {list(STYLES)}")
    p.add_argument("--seconds", type=float, default=20.0, help="one closed-loop run (default 20)")
    p.add_argument("--reps", type=int, default=2, help="plain/mute pairs per figure (default 2)")
    p.add_argument("--warmup", type=float, default=60.0,
                   help="unmeasured plain load on the fresh cluster before the first figure (default 60 s; 0: none)")
    p.add_argument("--isolate", action=argparse.BooleanOptionalAction, default=True,
                   help="each styles/partitions run in a Python process of its own (default; see Bench.run)")
    p.add_argument("--first", choices=("plain", "mute"), default="plain",
                   help="which producer runs first in the first pair of each figure (default plain)")
    p.add_argument("--cpu-load", type=int, default=0, help="busy processes beside the styles loops (default 0)")
    p.add_argument("--partitions", default="12,120,1200")
    p.add_argument("--faults", default="limp,stall", help=f"comma-separated, from {sorted(FAULTS)}")
    p.add_argument("--no-java", action="store_true", help="leave out the Java producer (KIP-794) in fault runs")
    p.add_argument("--fault-run", type=float, default=60.0, help="seconds per fault run, fault in the middle third")
    p.add_argument("--fault-reps", type=int, default=3,
                   help="rounds per fault, each one run per producer (default 3; ~4.5 min per round without Java)")
    p.add_argument("--out", default="benchmarks/results",
                   help="a directory (saturated_bench.json, saturated_faults.png) or a .json file (the PNG beside it)")
    args = p.parse_args(argv)
    logging.getLogger("mutepro").setLevel(logging.ERROR)
    sections = {s.strip() for s in args.sections.split(",") if s.strip()}
    result: dict[str, Any] = {"meta": {
        "command": "python benchmarks/saturated_bench.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count(),
        "loadavg_at_start": list(os.getloadavg()), "python": platform.python_version(),
        "confluent_kafka": confluent_kafka.version()[0], "librdkafka": confluent_kafka.libversion()[0],
        "value_bytes": VALUE_BYTES, "poll_every": POLL_EVERY, "client": {"acks": "1", "linger.ms": 5},
        "policy": "MuteProducer defaults (no policy given)", "seconds": args.seconds, "reps": args.reps,
        "cpu_load": args.cpu_load, "fault_reps": args.fault_reps, "first": args.first, "isolate": args.isolate,
        "topic_config": TOPIC_CONFIG, "broker_config": BROKER_CONFIG,
    }}  # fmt: skip
    out = Path(args.out)
    # a directory (saturated_bench.json and saturated_faults.png inside) or the JSON file itself (the PNG beside it)
    path = out if out.suffix == ".json" else out / "saturated_bench.json"
    png = path.with_suffix(".png") if out.suffix == ".json" else out / "saturated_faults.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    with LocalCluster(ClusterSpec(brokers=3, broker_config=BROKER_CONFIG)) as cluster:
        bench = Bench(cluster, args)
        if args.warmup > 0:
            counts = [int(x) for x in args.partitions.split(",") if x.strip()] if "partitions" in sections else [12]
            result["meta"]["warmup"] = bench.warm_up(max(counts), args.warmup)
        if "styles" in sections:
            result["styles"] = {}
            styles = [s.strip() for s in args.styles.split(",") if s.strip()]
            with CpuLoad(args.cpu_load, max_s=len(styles) * args.reps * 2 * (args.seconds + 30)):
                for style in styles:
                    result["styles"][style] = bench.pair(style, 12, args.seconds, args.reps)
                    path.write_text(json.dumps(result, indent=1, default=str))
        if "partitions" in sections:
            result["partitions"] = {}
            for count in (int(x) for x in args.partitions.split(",") if x.strip()):
                result["partitions"][str(count)] = bench.pair("keywords", count, args.seconds, args.reps, timed=True)
                path.write_text(json.dumps(result, indent=1, default=str))
        if "ceiling" in sections:
            result["ceiling"] = bench.ceiling(args.seconds, args.reps)
            path.write_text(json.dumps(result, indent=1, default=str))
        if "faults" in sections:
            result["faults"] = {}
            faults = [f.strip() for f in args.faults.split(",") if f.strip()]
            for fault in faults:
                _fault_kind(fault)  # every name checked before the first run
            for fault in faults:
                kinds = ("plain", "mute") + (("java",) if not args.no_java and java_available() else ())

                def save(entry: dict[str, Any], fault: str = fault) -> None:
                    result["faults"][fault] = entry
                    path.write_text(json.dumps(result, indent=1, default=str))

                bench.faults(fault, kinds, args.fault_run, args.fault_reps, save)
        del bench
        gc.collect()
    _summary(result)
    path.write_text(json.dumps(result, indent=1, default=str))
    console.print(f"wrote {path}")
    if "faults" in result:
        plot_faults(result, png)
        console.print(f"wrote {png}")
    return 0


def _summary(result: dict[str, Any]) -> None:
    for section in ("styles", "partitions"):
        if section not in result:
            continue
        table = Table(title=f"saturated closed loop: {section} (median, min..max over reps)")
        for col in ("case", "plain msg/s", "mute msg/s", "mute/plain", "mute us/msg", "muted", "avoids"):
            table.add_column(col)
        for name, r in result[section].items():
            pl, mu, ra = r["plain_msgs_s"], r["mute_msgs_s"], r["ratio"]
            table.add_row(name, f"{pl['median']:,.0f} ({pl['min']:,.0f}..{pl['max']:,.0f})",
                          f"{mu['median']:,.0f} ({mu['min']:,.0f}..{mu['max']:,.0f})",
                          f"{ra['median']:.2f} ({ra['min']:.2f}..{ra['max']:.2f})", f"{r['mute_us_per_msg']}",
                          str(r["healthy_partitions_muted"]), str(r.get("avoid_episodes", "-")))  # fmt: skip
        console.print(table)
    if "ceiling" in result:
        c = result["ceiling"]
        table = Table(title="healthy cluster, closed loop: topic led by brokers "
                            f"{c['two']} against {c['three']} (median, min..max over reps)")
        for col in ("producer", "layout", "msg/s", "over 3 brokers"):
            table.add_column(col)
        for kind in ("plain", "mute"):
            r = c[kind]
            for layout in ("three", "two", "three_muted"):
                if f"{layout}_msgs_s" not in r:
                    continue
                t, ra = r[f"{layout}_msgs_s"], r.get(f"{layout}_over_three")
                table.add_row(kind, layout, f"{t['median']:,.0f} ({t['min']:,.0f}..{t['max']:,.0f})",
                              f"{ra['median']:.3f} ({ra['min']:.3f}..{ra['max']:.3f})" if ra else "-")  # fmt: skip
        console.print(table)
    if "faults" in result:
        table = Table(title="saturated closed loop, default policy, broker 2 faulted in the middle third "
                            "(the median round's rates; during/pre: median (min..max) over the rounds)")
        for col in ("fault", "producer", "pre msg/s", "during msg/s", "after msg/s", "during/pre", "mutes"):
            table.add_column(col)
        for fault, entry in result["faults"].items():
            for kind in ("plain", "mute", "java"):
                r = entry.get(kind)
                if r is None:
                    continue
                sp = entry.get("spread", {}).get(f"{kind}_during_over_pre")
                ratio = f"{sp['median']:.3f} ({sp['min']:.3f}..{sp['max']:.3f})" if sp else str(r["during_over_pre"])
                table.add_row(fault, kind, f"{r['pre_msgs_s']:,.0f}", f"{r['during_msgs_s']:,.0f}",
                              f"{r['after_msgs_s']:,.0f}", ratio,
                              str(r.get("counters", {}).get("mutes", "-")))  # fmt: skip
        console.print(table)


if __name__ == "__main__":
    sys.exit(main())
