"""MuteProducer vs plain confluent_kafka.Producer on one local 3-broker cluster, in one run (issue 3).

    python benchmarks/producer_bench.py [--quick] [--out benchmarks/results]

Phases (see benchmarks/README.md):
1. happy path: closed-loop capacity (delivered msg/s) of both producers, unkeyed and keyed, 512-byte values,
   interleaved plain/mute so drift on the shared machine hits both;
2. fault scenarios at a fixed offered rate (a share of the plain producer's capacity measured in phase 1):
   broker 2 stalled (SIGSTOP) and limping (stopped 80% of every second), each producer on its own fresh topic,
   one after the other, never both at once.
Writes ``producer_bench.json`` and ``producer_bench.png`` to ``--out``.

The saturated closed loops (every calling style, the partitions sweep, limping and stalled brokers, unkeyed and
keyed, with the Java producer as third peer) are ``saturated_bench.py``; this script runs them too:

    python benchmarks/producer_bench.py saturated [saturated_bench.py's options, e.g. --sections faults]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import confluent_kafka
from bench_load import KEYS, VALUE_BYTES, Recorder, closed_loop, open_loop
from bench_plot import plot
from bench_report import FaultWindow, event_log, median, mute_timing, ratio, summarize_run
from confluent_kafka.admin import AdminClient
from java_peer import JAVA_PROPS, java_available, run_peer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from mutepro.cluster import ClusterSpec, LocalCluster
from mutepro.cluster.topics import create_topic
from mutepro.producer.producer import MuteProducer

FAULT_BROKER = 2
PARTITIONS = 12
console = Console(stderr=True)


@dataclass(frozen=True)
class Durations:
    happy_s: float  # one closed-loop capacity run
    happy_reps: int  # interleaved repetitions per producer and mode
    run_s: float  # one fault-scenario run (load part)
    fault_start_s: float
    fault_s: float
    flush_s: float  # bound on the flush after the load


FULL = Durations(happy_s=6.0, happy_reps=3, run_s=60.0, fault_start_s=20.0, fault_s=20.0, flush_s=30.0)
QUICK = Durations(happy_s=4.0, happy_reps=1, run_s=20.0, fault_start_s=7.0, fault_s=6.0, flush_s=20.0)


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # "stall" | "limp"
    replication_factor: int
    acks: str
    description: str
    #: acks=all on RF=3: every partition has a replica on the faulted broker and waits for it, not only those it leads
    all_partitions_affected: bool = False
    #: messages carry one of 1,000 keys (MuteProducer's default keyed_policy reroutes a muted home's keys; Java's
    #: adaptive partitioning leaves keyed records on their hash partition: it is the plain client there)
    keyed: bool = False


SCENARIOS = {
    "stalled": Scenario(
        "stalled", "stall", 1, "1", f"broker {FAULT_BROKER} SIGSTOPped; {PARTITIONS} partitions, RF=1, acks=1"
    ),
    "limping": Scenario(
        "limping", "limp", 1, "1",
        f"broker {FAULT_BROKER} stopped 800 ms of every 1 s; {PARTITIONS} partitions, RF=1, acks=1",
    ),
    "stalled_keyed": Scenario(
        "stalled_keyed", "stall", 1, "1",
        f"broker {FAULT_BROKER} SIGSTOPped; keyed (1,000 keys); {PARTITIONS} partitions, RF=1, acks=1", keyed=True,
    ),
    "limping_keyed": Scenario(
        "limping_keyed", "limp", 1, "1",
        f"broker {FAULT_BROKER} stopped 800 ms of every 1 s; keyed (1,000 keys); {PARTITIONS} partitions, RF=1, "
        "acks=1", keyed=True,
    ),
    "stalled_rf3_acks_all": Scenario(
        "stalled_rf3_acks_all", "stall", 3, "all",
        f"broker {FAULT_BROKER} SIGSTOPped; {PARTITIONS} partitions, RF=3, acks=all (every partition waits on it)",
        all_partitions_affected=True,
    ),
}
DEFAULT_SCENARIOS = ("stalled", "limping", "stalled_rf3_acks_all")

QUEUE_NOTE = (
    "queue.buffering.max.messages={queue} for both producers (librdkafka's default is 100000): at the offered rate "
    "the third of the traffic bound for the stalled broker piles up at about rate/3 msg/s, so a 20 s stall fills "
    "this queue the way a longer one would fill the default, and the plain producer's BufferErrors show"
)
RF_NOTE = (
    "Main scenarios use RF=1 with acks=1: only the partitions broker 2 leads (4 of 12) depend on it, so the fault "
    "hits one third of the traffic and nothing else, which is what muting is for. With RF=3 and acks=all a "
    "stalled follower also stalls every partition it replicates (all 12 here) until it leaves the ISR "
    "(replica.lag.time.max.ms=10 s on this cluster; broker.session.timeout.ms=9 s fences it first), so no "
    "partition is healthy to move to; that is the stalled_rf3_acks_all scenario, where every partition counts as "
    "faulted."
)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["saturated"]:  # the closed-loop scenarios live in their own module (shared Bench helpers)
        import saturated_bench

        return saturated_bench.main(argv[1:])
    args = _parse(argv)
    if args.replot:
        source = Path(args.replot)
        plot(json.loads(source.read_text()), source.with_suffix(".png"))
        console.print(f"wrote {source.with_suffix('.png')}")
        return 0
    dur = QUICK if args.quick else FULL
    names = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        console.print(f"--scenarios: unknown {unknown}; choose from {sorted(SCENARIOS)}")
        return 2
    # Defaults are the product (issue 11): MuteProducer(conf) with no policy unless --tuned asks for the
    # benchmark's former tuned policy (a faster slow threshold and shorter breaker waits).
    policy: dict[str, Any] | None = (
        {
            "defaults": {
                "slow_call": {"threshold_ms": args.slow_ms},
                "breaker": {"retry_interval_ms": args.retry_ms, "max_retry_interval_ms": args.max_retry_ms},
            }
        }
        if args.tuned
        else None
    )
    out_dir = Path(args.out)
    started = time.time()
    result: dict[str, Any] = {
        "meta": {
            "title": "mutepro MuteProducer vs confluent_kafka.Producer (same cluster, same run)",
            "command": "python benchmarks/producer_bench.py " + " ".join(argv),
            "quick": args.quick,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
            "machine": {
                "cpus": os.cpu_count(), "loadavg_at_start": list(os.getloadavg()), "python": platform.python_version(),
                "note": "2 cores shared with other engineers' tests: absolute numbers are noisy, read the ratios",
            },
            "confluent_kafka": confluent_kafka.version()[0], "librdkafka": confluent_kafka.libversion()[0],
            "durations": dur.__dict__, "fault_repeats": args.repeats,
            "value_bytes": VALUE_BYTES, "keys": KEYS, "partitions": PARTITIONS,
            "fault_broker": FAULT_BROKER, "policy": policy, "replication_note": RF_NOTE,
            "client_config": {"acks": "1 (acks=all in *_acks_all)", "linger.ms": 5,
                              "queue.buffering.max.messages": args.queue_messages},
            "queue_note": QUEUE_NOTE.format(queue=args.queue_messages),
        },
    }
    with LocalCluster(ClusterSpec(brokers=3)) as cluster, _progress() as progress:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        bench = _Bench(
            cluster, admin, progress, dur, policy, args.queue_messages,
            java=not args.no_java and java_available(), repeats=args.repeats,
        )
        result["meta"]["java_peer"] = (
            {"props": JAVA_PROPS, "why": "see benchmarks/java_peer.py: KIP-794 adaptive partitioning with a 1 s "
             "availability timeout; acks and linger.ms as the Python producers, buffer.memory = queue x 600 B"}
            if bench.java else None
        )
        result["happy_path"] = bench.happy_path()
        plain_cap = result["happy_path"]["unkeyed"]["plain_msgs_s"]
        mute_cap = result["happy_path"]["unkeyed"]["mute_msgs_s"]
        rate = args.rate or _choose_rate(plain_cap, mute_cap, args.rate_share)
        result["meta"]["target_rate"] = rate
        result["meta"]["rate_note"] = (
            f"open-loop offered rate {rate} msg/s = {args.rate_share:.0%} of the plain producer's unkeyed capacity "
            f"({plain_cap:.0f} msg/s) or of MuteProducer's ({mute_cap:.0f} msg/s), whichever is lower, so both "
            "run well below saturation (a saturated producer queues for itself and hides the fault)"
            if not args.rate else f"offered rate {rate} msg/s given by --rate"
        )
        # keyed scenarios offer the same share of the *keyed* capacity (lower: every message is hashed, and the
        # plain client's keyed loop is ~35 % slower), or they would run near saturation
        keyed_plain = result["happy_path"]["keyed"]["plain_msgs_s"]
        keyed_mute = result["happy_path"]["keyed"]["mute_msgs_s"]
        rate_keyed = args.rate or _choose_rate(keyed_plain, keyed_mute, args.rate_share)
        result["meta"]["target_rate_keyed"] = rate_keyed
        result["scenarios"] = {}
        for name in names:
            sc = SCENARIOS[name]
            result["scenarios"][name] = bench.scenario(sc, rate_keyed if sc.keyed else rate)
            _write(result, out_dir)  # a partial result survives a later failure
        del bench, admin
        gc.collect()  # destroy the clients before the brokers go, or they log connection errors at shutdown
    result["meta"]["elapsed_s"] = round(time.time() - started, 1)
    result["goals"] = _goals(result, args.slow_ms if args.tuned else 1000)
    _write(result, out_dir)
    plot(result, out_dir / "producer_bench.png")
    _print_summary(result)
    console.print(f"wrote {out_dir / 'producer_bench.json'} and {out_dir / 'producer_bench.png'}")
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="scaled-down durations (20 s runs, 6 s fault) for a smoke test")
    p.add_argument("--out", default="benchmarks/results", help="directory for producer_bench.json/.png")
    p.add_argument(
        "--scenarios", default=",".join(DEFAULT_SCENARIOS),
        help=f"comma-separated fault scenarios from {sorted(SCENARIOS)}; empty for the happy path only",
    )
    p.add_argument("--replot", metavar="JSON", help="only redraw the PNG next to an existing results JSON")
    p.add_argument("--rate", type=int, default=0, help="offered msg/s in fault scenarios (default: measured)")
    p.add_argument("--rate-share", type=float, default=0.5, help="share of plain capacity to offer (default 0.5)")
    p.add_argument(
        "--queue-messages", type=int, default=50_000,
        help="queue.buffering.max.messages for both producers (default 50000; why: benchmarks/README.md)",
    )
    p.add_argument(
        "--repeats", type=int, default=1, metavar="N",
        help="runs of each fault scenario per producer, interleaved, order reversed each repetition; the first is "
        "kept whole and plotted, scenarios.<name>.spread holds median/min/max of the headline figures (default 1)",
    )
    p.add_argument("--no-java", action="store_true", help="leave out the Java producer peer (KIP-794 adaptive)")
    p.add_argument("--tuned", action="store_true", help="a tuned policy (--slow-ms, --retry-ms, --max-retry-ms) "
                   "instead of MuteProducer's defaults")
    p.add_argument("--slow-ms", type=int, default=500, help="with --tuned: slow_call.threshold_ms (default 500)")
    p.add_argument("--retry-ms", type=int, default=2000, help="with --tuned: breaker.retry_interval_ms (default 2000)")
    p.add_argument("--max-retry-ms", type=int, default=8000, help="with --tuned: breaker.max_retry_interval_ms (8000)")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats: at least 1 run per producer, got {args.repeats}")
    return args


def _choose_rate(plain_cap: float, mute_cap: float, share: float) -> int:
    return int(min(plain_cap, mute_cap) * share // 100 * 100)


class _Bench:
    def __init__(
        self, cluster: LocalCluster, admin: AdminClient, progress: Progress, dur: Durations,
        policy: dict[str, Any] | None, queue: int, *, java: bool, repeats: int,
    ) -> None:
        self.cluster = cluster
        self.admin = admin
        self.progress = progress
        self.dur = dur
        self.policy = policy
        self.queue = queue
        self.java = java  # the Java peer runs beside the two Python producers
        self.repeats = repeats  # runs of each fault scenario per producer

    # -- producers and topics --------------------------------------------------------------------------

    def _config(self, acks: str, who: str) -> dict[str, Any]:
        return self.cluster.client_config(
            **{"acks": acks, "linger.ms": 5, "client.id": f"bench-{who}", "queue.buffering.max.messages": self.queue}
        )

    def _producer(self, who: str, acks: str) -> Any:
        conf = self._config(acks, who)
        if who == "mute":
            return MuteProducer(conf, policy=self.policy)
        return confluent_kafka.Producer(conf)

    def _topic(self, label: str, rf: int) -> str:
        name = f"bench-{label}-{uuid.uuid4().hex[:6]}"
        # Leaders balanced, partition p led by broker p % 3 + 1: the faulted broker leads exactly a third. Left to
        # the controller's placement it led 4 of 12 in one run and 5 in another, and with 5 the messages sent to
        # it before the first mute passed 1 % of the fault's, which moved the limp's p99 from ~30 ms to ~700 ms.
        assignment = [[(p + i) % 3 + 1 for i in range(rf)] for p in range(PARTITIONS)]
        create_topic(self.admin, name, partitions=PARTITIONS, replication_factor=rf, replica_assignment=assignment)
        return name

    def _drop_topic(self, topic: str) -> None:
        try:
            self.admin.delete_topics([topic], operation_timeout=10)[topic].result(timeout=15)
        except Exception as err:  # a leftover topic only costs disk in a cluster about to be deleted
            console.print(f"[yellow]could not delete {topic}: {err}")

    def _warm(self, producer: Any, topic: str) -> None:
        """Load metadata and open connections before the clock starts (bounded)."""
        for i in range(PARTITIONS):
            producer.produce(topic, b"warmup", partition=i)
        producer.flush(15)
        if isinstance(producer, MuteProducer):
            deadline = time.monotonic() + 10
            while producer.mute_manager.snapshot(topic) is None and time.monotonic() < deadline:
                producer.poll(0.05)  # the driver thread loads the topic's metadata in the background

    def _finish(self, producer: Any) -> None:
        if len(producer):
            producer.purge(in_queue=True, in_flight=True)
            producer.poll(0.5)
        if isinstance(producer, MuteProducer):
            producer.close(5)
        else:
            producer.flush(5)

    def _leaders(self, topic: str) -> dict[int, int]:
        md = self.admin.list_topics(topic, timeout=10)
        return {p: pm.leader for p, pm in md.topics[topic].partitions.items()}

    def _task(self, label: str, total: float) -> Callable[[float], None]:
        task = self.progress.add_task(label, total=total)

        def tick(elapsed: float) -> None:
            self.progress.update(task, completed=min(elapsed, total))

        self._current = task
        return tick

    def _done(self) -> None:
        task = self._current
        self.progress.update(task, completed=self.progress.tasks[task].total)

    # -- phase 1: happy path -------------------------------------------------------------------------------

    def happy_path(self) -> dict[str, Any]:
        runs: list[dict[str, Any]] = []
        out: dict[str, Any] = {
            "method": (
                "closed loop: produce() as fast as it accepts for the run, BufferError -> poll(1 ms) and go on, then "
                "a bounded flush; delivered msg/s = delivered / (load + flush time). Runs alternate plain/mute "
                "(order reversed each repetition); the figure per producer is the median over repetitions, and "
                "the ratio is the median of the per-repetition ratios (each repetition's two runs are back to "
                "back, so they share the machine's state of the moment; the medians of the two producers' runs "
                "taken separately are in ratio_of_medians)."
            ),
            "acks": "1", "replication_factor": 1,
        }
        for mode in ("unkeyed", "keyed"):
            for rep in range(self.dur.happy_reps):
                order = ("plain", "mute") if rep % 2 == 0 else ("mute", "plain")
                for who in order:
                    runs.append(self._capacity_run(who, mode, rep))
                if self.java:
                    runs.append(self._java_capacity_run(mode, rep))
            plain = [r["delivered_msgs_s"] for r in runs if r["mode"] == mode and r["producer"] == "plain"]
            mute = [r["delivered_msgs_s"] for r in runs if r["mode"] == mode and r["producer"] == "mute"]
            paired = [ratio(m, p) for m, p in zip(mute, plain, strict=True)]
            paired_ok = [r for r in paired if r is not None]
            out[mode] = {
                "plain_msgs_s": round(median(plain), 1), "mute_msgs_s": round(median(mute), 1),
                "ratio": round(median(paired_ok), 3) if paired_ok else None,
                "paired_ratios": paired,
                "ratio_of_medians": ratio(median(mute), median(plain)),
                "plain_runs": plain, "mute_runs": mute,
                "java_msgs_s": (
                    round(median(java), 1)
                    if (java := [r["delivered_msgs_s"] for r in runs if r["mode"] == mode and r["producer"] == "java"])
                    else None
                ),
                # partitions MuteProducer muted while merely saturated (no fault at all): its own queueing
                # latency passes the slow-call threshold in a closed loop
                "mute_runs_mutes": [
                    r["mute_counters"]["mutes"] for r in runs if r["mode"] == mode and r["producer"] == "mute"
                ],
            }
        out["runs"] = runs
        return out

    def _capacity_run(self, who: str, mode: str, rep: int) -> dict[str, Any]:
        gc.collect()  # destroy the previous run's clients now, not during this run
        topic = self._topic(f"happy-{mode}-{who}", 1)
        producer = self._producer(who, "1")
        try:
            self._warm(producer, topic)
            rec = Recorder(int(self.dur.happy_s * 250_000))
            tick = self._task(f"happy {mode} {who} #{rep + 1}", self.dur.happy_s)
            res = closed_loop(
                producer, topic, seconds=self.dur.happy_s, keyed=mode == "keyed", recorder=rec,
                flush_timeout_s=self.dur.flush_s, tick=tick,
            )
            self._done()
            summary = summarize_run(rec, res, warmup_s=1.0)
            row = {
                "producer": who, "mode": mode, "rep": rep,
                "delivered_msgs_s": summary["delivered_msgs_s"],
                "steady_msgs_s": summary["throughput"]["steady_msgs_s"],
                "accepted": summary["accepted"], "delivered": summary["delivered"], "lost": summary["lost"],
                "buffer_errors": summary["buffer_errors"], "latency_ms": summary["latency_ms"],
                "load_s": summary["load_s"], "flush_s": summary["flush_s"],
            }
            if isinstance(producer, MuteProducer):
                row["mute_counters"] = producer.counters.as_dict()
                row["mutes"] = [
                    {"t": round(e.at - res.t0, 3), "kind": e.kind, "partition": e.partition, "reason": e.reason}
                    for e in producer.mute_manager.events if e.at >= res.t0
                ][:20]
            return row
        finally:
            self._finish(producer)
            self._drop_topic(topic)

    # -- phase 2: faults -------------------------------------------------------------------------------

    def scenario(self, sc: Scenario, rate: int) -> dict[str, Any]:
        dur = self.dur
        out: dict[str, Any] = {
            "description": sc.description, "target_rate": rate, "replication_factor": sc.replication_factor,
            "acks": sc.acks,
        }
        producers = ("plain", "mute", "java") if self.java else ("plain", "mute")
        runs: dict[str, list[dict[str, Any]]] = {who: [] for who in producers}
        for rep in range(self.repeats):
            # the order is reversed each repetition, so that no producer always runs right after the other's fault
            for who in producers if rep % 2 == 0 else producers[::-1]:
                run = self._fault_run(sc, who, rate)
                fault = run.pop("fault")
                if rep == 0:
                    out[who], out["fault"] = run, fault  # the first repetition is kept whole (and plotted)
                elif "events" in run:
                    # the later ones keep what says why a figure moved: their mute timings and decisions
                    later = out.setdefault("later_repetitions", [{} for _ in range(self.repeats - 1)])
                    later[rep - 1][who] = {
                        "mute_timing": run.get("mute_timing"), "events": run["events"],
                        "leaders_at_fault": fault.get("leaders_at_fault"),
                    }
                runs[who].append(run)
        out["fault"]["start_s"] = dur.fault_start_s
        out["fault"]["end_s"] = dur.fault_start_s + dur.fault_s
        if self.repeats > 1:
            out["spread"] = {who: _headline_spread(rs) for who, rs in runs.items()}
        return out

    def _java_props(self, acks: str) -> dict[str, str]:
        return {**JAVA_PROPS, "acks": acks, "linger.ms": "5", "buffer.memory": str(self.queue * 600),
                "client.id": "bench-java"}  # fmt: skip

    def _java_capacity_run(self, mode: str, rep: int) -> dict[str, Any]:
        """The Java producer's closed loop (send() blocks when its buffer is full: its own back-pressure)."""
        topic = self._topic(f"happy-{mode}-java", 1)
        try:
            rec = Recorder(int(self.dur.happy_s * 400_000))
            tick = self._task(f"happy {mode} java #{rep + 1}", self.dur.happy_s)
            res, _extra = run_peer(
                self.cluster.bootstrap_servers, topic, mode="closed", rate=0, seconds=self.dur.happy_s,
                keyed=mode == "keyed", start_at=0, props=self._java_props("1"), recorder=rec,
                timeout_s=self.dur.happy_s + self.dur.flush_s + 60,
            )
            tick(self.dur.happy_s)
            self._done()
            summary = summarize_run(rec, res, warmup_s=1.0)
            return {
                "producer": "java", "mode": mode, "rep": rep, "delivered_msgs_s": summary["delivered_msgs_s"],
                "accepted": summary["accepted"], "delivered": summary["delivered"], "lost": summary["lost"],
                "latency_ms": summary["latency_ms"],
            }
        finally:
            self._drop_topic(topic)

    def _fault_run(self, sc: Scenario, who: str, rate: int) -> dict[str, Any]:
        if who == "java":
            return self._java_fault_run(sc, rate)
        gc.collect()  # destroy the previous run's clients now, not during this run
        dur = self.dur
        topic = self._topic(f"{sc.name}-{who}", sc.replication_factor)
        leaders_created = self._leaders(topic)
        producer = self._producer(who, sc.acks)
        times: dict[str, Any] = {"topic": topic}
        stop = threading.Event()
        try:
            self._warm(producer, topic)
            rec = Recorder(int(rate * dur.run_s) + 10)
            tick = self._task(f"{sc.name} {who} @ {rate} msg/s", dur.run_s)
            fault = threading.Thread(
                target=self._inject, args=(sc.kind, dur.fault_start_s, dur.fault_s, times, stop), daemon=True
            )
            t_start = time.monotonic()
            times["t0"] = t_start
            fault.start()
            res = open_loop(
                producer, topic, rate=rate, seconds=dur.run_s, keyed=sc.keyed, recorder=rec,
                flush_timeout_s=dur.flush_s, tick=tick,
                events_of=(lambda: producer.mute_manager.events) if who == "mute" else None,
            )
            self._done()
            stop.set()
            fault.join(30)
            # the partitions broker 2 led when the fault began (read by the fault thread just before it)
            leaders = times.get("leaders") or leaders_created
            faulted = tuple(sorted(p for p, b in leaders.items() if b == FAULT_BROKER or sc.all_partitions_affected))
            window = FaultWindow(
                times.get("start", t_start + dur.fault_start_s) - res.t0,
                times.get("end", t_start + dur.fault_start_s + dur.fault_s) - res.t0,
                FAULT_BROKER, faulted,
            )
            summary = summarize_run(rec, res, fault=window, warmup_s=3.0, rate=rate)
            summary["fault"] = {
                "kind": sc.kind, "broker": FAULT_BROKER, "faulted_partitions": list(faulted),
                "leaders_at_create": {str(p): b for p, b in sorted(leaders_created.items())},
                "leaders_at_fault": {str(p): b for p, b in sorted(leaders.items())},
                "measured_start_s": round(window.start_s, 3), "measured_end_s": round(window.end_s, 3),
            }
            if isinstance(producer, MuteProducer):
                summary["mute_timing"] = mute_timing(res.events, res.t0, window)
                summary["mute_counters"] = producer.counters.as_dict()
                summary["events"] = event_log(res.events, res.t0)
            return summary
        finally:
            stop.set()
            self._finish(producer)
            self._recover(topic)
            self._drop_topic(topic)

    def _java_fault_run(self, sc: Scenario, rate: int) -> dict[str, Any]:
        """The same open loop and fault schedule, run by the Java producer in its own JVM."""
        dur = self.dur
        topic = self._topic(f"{sc.name}-java", sc.replication_factor)
        leaders_created = self._leaders(topic)
        times: dict[str, Any] = {"topic": topic}
        stop = threading.Event()
        try:
            rec = Recorder(int(rate * dur.run_s) + 10)
            t_start = time.monotonic() + 4.0  # the JVM starts and loads metadata meanwhile
            times["t0"] = t_start
            fault = threading.Thread(
                target=self._inject, args=(sc.kind, dur.fault_start_s, dur.fault_s, times, stop), daemon=True
            )
            fault.start()
            task = self._task(f"{sc.name} java @ {rate} msg/s", dur.run_s)
            res, extra = run_peer(
                self.cluster.bootstrap_servers, topic, mode="open", rate=rate, seconds=dur.run_s, keyed=sc.keyed,
                start_at=t_start, props=self._java_props(sc.acks), recorder=rec,
                timeout_s=dur.run_s + dur.flush_s + 150,
            )
            task(dur.run_s)
            self._done()
            stop.set()
            fault.join(30)
            leaders = times.get("leaders") or leaders_created
            faulted = tuple(sorted(p for p, b in leaders.items() if b == FAULT_BROKER or sc.all_partitions_affected))
            window = FaultWindow(
                times.get("start", t_start + dur.fault_start_s) - res.t0,
                times.get("end", t_start + dur.fault_start_s + dur.fault_s) - res.t0,
                FAULT_BROKER, faulted,
            )
            summary = summarize_run(rec, res, fault=window, warmup_s=3.0, rate=rate)
            summary["fault"] = {"kind": sc.kind, "broker": FAULT_BROKER, "faulted_partitions": list(faulted)}
            summary["java"] = extra
            return summary
        finally:
            stop.set()
            self._recover(topic)
            self._drop_topic(topic)

    def _inject(
        self, kind: str, delay_s: float, length_s: float, times: dict[str, Any], stop: threading.Event
    ) -> None:
        if stop.wait(max(0.0, times["t0"] + delay_s - 0.5 - time.monotonic())):
            return
        try:
            admin = AdminClient({"bootstrap.servers": self.cluster.bootstrap_servers})
            md = admin.list_topics(times["topic"], timeout=0.4)
            times["leaders"] = {p: pm.leader for p, pm in md.topics[times["topic"]].partitions.items()}
        except Exception as err:  # the creation-time leaders are used instead
            console.print(f"[yellow]leaders at fault start unknown: {err}")
        if stop.wait(max(0.0, times["t0"] + delay_s - time.monotonic())):
            return
        if kind == "stall":
            with self.cluster.stalled(FAULT_BROKER):
                times["start"] = time.monotonic()
                stop.wait(length_s)
        else:
            with self.cluster.limping(FAULT_BROKER, duty=0.8, period_s=1.0, max_duration_s=length_s + 5):
                times["start"] = time.monotonic()
                stop.wait(length_s)
        times["end"] = time.monotonic()

    def _recover(self, topic: str) -> None:
        """After a fault: wait (bounded) until broker 2 is back and leads its partitions again."""
        self.cluster.wait_ready(90, broker_ids={FAULT_BROKER})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if all(b >= 0 for b in self._leaders(topic).values()):
                    return
            except Exception:  # metadata while the broker rejoins; retried until the deadline
                pass
            time.sleep(0.5)  # the cluster converges on its own; polling metadata is the only signal


# -- output -------------------------------------------------------------------------------------------------


#: a fault run's headline figures, by the name its spread carries: where each sits in the run's record
_HEADLINES: dict[str, tuple[str, ...]] = {
    "p99_ms_sent_during_fault": ("latency_ms_sent_during_fault", "p99"),
    "during_over_before": ("throughput", "during_over_before"),
    "buffer_errors": ("buffer_errors",),
    "lost": ("lost",),
    "time_to_first_mute_s": ("mute_timing", "time_to_first_mute_s"),
    "time_to_last_unmute_s": ("mute_timing", "time_to_last_unmute_s"),
}


def _headline_spread(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """{figure: {median, min, max, runs}} over one producer's repetitions of a fault scenario (figures a run does
    not have, e.g. mute timings of the plain client, are left out)."""
    spread: dict[str, Any] = {}
    for name, path in _HEADLINES.items():
        values = []
        for run in runs:
            v: Any = run
            for key in path:
                v = v.get(key) if isinstance(v, dict) else None
            if isinstance(v, int | float) and not isinstance(v, bool):
                values.append(v)
        if values:
            spread[name] = {"median": median(values), "min": min(values), "max": max(values), "runs": values}
    return spread


def _goals(result: dict[str, Any], slow_ms: int) -> dict[str, Any]:
    goals: dict[str, Any] = {}
    happy = result.get("happy_path", {})
    for mode in ("unkeyed", "keyed"):
        r = happy.get(mode, {}).get("ratio")
        goals[f"happy_{mode}_ratio>=0.9"] = {"value": r, "met": r is not None and r >= 0.9}
    limit = 1.5 * slow_ms / 1000.0
    for name, sc in result.get("scenarios", {}).items():
        m = sc.get("mute", {})
        # with --repeats, a goal is judged on the median over the repetitions, not on the first run
        runs = sc.get("spread", {}).get("mute", {})
        spread = {k: v["median"] for k, v in runs.items()}

        def worst(key: str, m: dict[str, Any] = m, runs: dict[str, Any] = runs) -> Any:
            """A count that must be 0 in every run: the largest over the repetitions."""
            return runs[key]["max"] if key in runs else m.get(key)

        tp = spread.get("during_over_before", m.get("throughput", {}).get("during_over_before"))
        tm = spread.get("time_to_first_mute_s", m.get("mute_timing", {}).get("time_to_first_mute_s"))
        goals[name] = {
            "during_over_before>=0.9": {"value": tp, "met": tp is not None and tp >= 0.9},
            "buffer_errors==0": {"value": worst("buffer_errors"), "met": worst("buffer_errors") == 0},
            "lost==0": {"value": worst("lost"), "met": worst("lost") == 0},
            f"mute_within_{limit:g}s": {"value": tm, "met": tm is not None and tm <= limit},
        }
        p99 = spread.get("p99_ms_sent_during_fault", m.get("latency_ms_sent_during_fault", {}).get("p99"))
        goals[name]["p99_sent_during_fault<=100ms"] = {"value": p99, "met": p99 is not None and p99 <= 100}
    return goals


def _write(result: dict[str, Any], out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "producer_bench.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1, sort_keys=False) + "\n")
    tmp.replace(path)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description:<42}"), BarColumn(), TextColumn("{task.completed:>5.0f}/{task.total:.0f} s"),
        TimeElapsedColumn(), console=console, transient=False,
    )


def _print_summary(result: dict[str, Any]) -> None:
    happy = result.get("happy_path", {})
    t = Table(title="happy path: delivered msg/s (closed loop)")
    for col in ("mode", "plain", "MuteProducer", "ratio", "Java (KIP-794)"):
        t.add_column(col)
    for mode in ("unkeyed", "keyed"):
        h = happy.get(mode, {})
        t.add_row(mode, str(h.get("plain_msgs_s")), str(h.get("mute_msgs_s")), str(h.get("ratio")),
                  str(h.get("java_msgs_s", "-")))  # fmt: skip
    console.print(t)
    s = Table(title=f"faults at {result['meta'].get('target_rate')} msg/s offered")
    for col in ("scenario", "producer", "during/before", "BufferErrors", "rejected", "lost", "p99 ms",
                "p99 sent in fault", "mute s", "unmute s"):
        s.add_column(col)
    for name, sc in result.get("scenarios", {}).items():
        for who in ("plain", "mute", "java"):
            if who not in sc:
                continue
            r = sc[who]
            mt = r.get("mute_timing", {})
            s.add_row(
                name, who, str(r["throughput"]["during_over_before"]), str(r["buffer_errors"]),
                str(r["rejected_by_app"]), str(r["lost"]), str(r["latency_ms"]["p99"]),
                str(r.get("latency_ms_sent_during_fault", {}).get("p99")),
                str(mt.get("time_to_first_mute_s", "-")), str(mt.get("time_to_last_unmute_s", "-")),
            )
    console.print(s)


if __name__ == "__main__":
    sys.exit(main())
