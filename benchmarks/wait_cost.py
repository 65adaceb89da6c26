"""What waiting costs: CPU time per ``poll(t)`` and ``flush(t)`` call, MuteProducer against the plain
``confluent_kafka.Producer`` measured in the same run.

    python benchmarks/wait_cost.py                       # every state, 5 repetitions, starts a 1-broker cluster
    python benchmarks/wait_cost.py --states unreachable,stuck --reps 3     # no cluster needed
    python benchmarks/wait_cost.py --bootstrap 127.0.0.1:9092              # an existing cluster

States (each call and timeout -- 0, 1 ms, 10 ms, 1 s -- in each):

- ``unreachable``: the bootstrap address answers nothing, nothing produced (``poll(t)`` waits ``t``; ``flush(t)``
  has nothing to wait for);
- ``stuck``: the same, with 100 messages queued that cannot leave: ``poll(t)`` and ``flush(t)`` wait ``t``, and
  MuteProducer's detection rounds run (its messages are outstanding);
- ``idle``: a reachable cluster, the topic known and one message delivered, nothing in flight;
- ``busy``: the same cluster, every call preceded by producing 8 messages of 100 bytes, so reports arrive while
  it waits.

Each sample is one fresh producer, the only one alive in the process, warmed up first; the figure is the
process's CPU time (every thread: the application's, librdkafka's and mutepro's own) over the sample divided by
the calls. The two clients take turns, plain then mute, ``--reps`` times; each repetition's ratio is mute / plain
of that repetition, so drift on the machine hits both. The per-thread split of each sample (from
``/proc/self/task/*/schedstat``) shows where the time goes. Writes ``wait_cost.json`` to ``--out``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import socket
import statistics
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import confluent_kafka
from rich.console import Console
from rich.table import Table

from mutepro.producer.producer import MuteProducer

TIMEOUTS = (0.0, 0.001, 0.01, 1.0)
CALLS = ("poll", "flush")
STATES = ("unreachable", "stuck", "idle", "busy")
CLUSTER_STATES = ("idle", "busy")
BUSY_BATCH = 8
STUCK_MESSAGES = 100
VALUE = b"x" * 100
NAME = "waitcost"  # MuteProducer's thread names: waitcost-driver, waitcost-metadata
console = Console(stderr=True, width=160)


@dataclass
class Sample:
    cpu_us: float  # process CPU per call
    wall_us: float  # wall time per call
    calls: int
    threads_us: dict[str, float]  # CPU per call by thread


def _nowhere() -> str:
    """A loopback address nothing listens on (connections are refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def _thread_cpu() -> dict[str, int]:
    """CPU ns per thread of this process, by name (Python threads by their threading name, others by comm)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict[str, int] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/self/task/{tid}/comm") as f:
                comm = f.read().strip()
        except OSError:  # the thread ended meanwhile
            continue
        name = names.get(int(tid), comm)
        name = "application" if name == "MainThread" else name
        if name.startswith("rdk:broker"):
            name = "rdk:broker"  # one per broker and per bootstrap address: summed
        out[name] = out.get(name, 0) + ns
    return out


def _ignore(err: Any, msg: Any) -> None:
    pass


class Bench:
    def __init__(self, args: argparse.Namespace, bootstrap: str | None, topic: str | None) -> None:
        self.args = args
        self.bootstrap = bootstrap
        self.topic = topic
        self.nowhere = _nowhere()

    @contextmanager
    def producer(self, client: str, state: str) -> Iterator[Any]:
        reachable = state in CLUSTER_STATES
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap if reachable else self.nowhere,
            "linger.ms": 5, "message.timeout.ms": 300_000, "log_level": 0,
        }
        p: Any = MuteProducer(conf, name=NAME) if client == "mute" else confluent_kafka.Producer(conf)
        topic = self.topic if reachable else "wait-cost"
        try:
            if reachable:
                assert topic is not None
                p.produce(topic, VALUE, on_delivery=_ignore)
                if p.flush(30) != 0:
                    raise RuntimeError("the warm-up message was not delivered in 30 s")
                if client == "mute" and not p.wait_for_topic(topic, 30):
                    raise RuntimeError(f"MuteProducer did not load {topic}'s metadata in 30 s")
            elif state == "stuck":
                for _ in range(STUCK_MESSAGES):
                    p.produce(topic, VALUE, on_delivery=_ignore)
            p.poll(0.1)
            time.sleep(self.args.settle_s)  # connections made, first metadata and statistics round done
            yield p
        finally:
            p.purge()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                if client == "mute":
                    p.close(0)
                else:
                    p.flush(0)
                    p.close()
            del p
            gc.collect()

    def sample(self, client: str, state: str, call: str, timeout: float) -> Sample:
        with self.producer(client, state) as p:
            fn: Callable[[float], int] = getattr(p, call)
            topic = self.topic if state in CLUSTER_STATES else "wait-cost"
            produce = p.produce
            busy = state == "busy"
            # at least this many calls and this long: a 1 s timeout gets a few calls, poll(0) thousands
            min_calls = 3 if timeout >= 1.0 else 20
            buffer_full = 0
            fn(timeout)  # warm
            threads0 = _thread_cpu()
            cpu0, wall0 = time.process_time(), time.perf_counter()
            calls = 0
            while calls < min_calls or time.perf_counter() - wall0 < self.args.sample_s:
                if busy:
                    for _ in range(BUSY_BATCH):
                        try:
                            produce(topic, VALUE, on_delivery=_ignore)
                        except BufferError:
                            buffer_full += 1
                fn(timeout)
                calls += 1
            cpu1, wall1 = time.process_time(), time.perf_counter()
            threads1 = _thread_cpu()
        if buffer_full:
            console.print(f"[yellow]{client} {state} {call}({timeout}): {buffer_full} BufferErrors[/]")
        threads = {
            name: round((ns - threads0.get(name, 0)) / 1e3 / calls, 2)
            for name, ns in threads1.items()
            if ns - threads0.get(name, 0) > 0
        }
        return Sample((cpu1 - cpu0) / calls * 1e6, (wall1 - wall0) / calls * 1e6, calls, threads)


def _spread(values: list[float], digits: int = 1) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), digits), "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def _threads_median(samples: list[Sample]) -> dict[str, float]:
    names = sorted({n for s in samples for n in s.threads_us})
    return {n: round(statistics.median([s.threads_us.get(n, 0.0) for s in samples]), 1) for n in names}


def _label(timeout: float) -> str:
    """A timeout as a key without dots (the report reads dotted paths): 0, 1ms, 10ms, 1s."""
    return "0" if timeout == 0 else f"{timeout * 1000:g}ms" if timeout < 1 else f"{timeout:g}s"


def run(args: argparse.Namespace, bootstrap: str | None, topic: str | None) -> dict[str, Any]:
    bench = Bench(args, bootstrap, topic)
    cells: dict[str, dict[str, Any]] = {}  # "<state> <call>(<timeout>)" -> the cell: one dotted path per figure
    for state in args.states:
        for call in args.calls:
            for timeout in args.timeouts:
                plain: list[Sample] = []
                mute: list[Sample] = []
                for _ in range(args.reps):
                    plain.append(bench.sample("plain", state, call, timeout))
                    mute.append(bench.sample("mute", state, call, timeout))
                pairs = list(zip(plain, mute, strict=True))
                ratios = [m.cpu_us / p.cpu_us for p, m in pairs if p.cpu_us > 0]
                # CPU per second of waiting: the fair figure where one client's calls end sooner (the plain
                # client's poll(1) returns at its first error event; MuteProducer's own events do not end a wait)
                per_s = [(m.cpu_us / m.wall_us) / (p.cpu_us / p.wall_us) for p, m in pairs if p.cpu_us > 0]
                cell = {
                    "state": state, "call": f"{call}({timeout:g})", "timeout_s": timeout,
                    "plain_cpu_us": _spread([s.cpu_us for s in plain], 2),
                    "mute_cpu_us": _spread([s.cpu_us for s in mute], 2),
                    "ratio": _spread(ratios, 2),
                    "ratio_per_wall_s": _spread(per_s, 2),
                    "plain_wall_us": round(statistics.median([s.wall_us for s in plain]), 1),
                    "mute_wall_us": round(statistics.median([s.wall_us for s in mute]), 1),
                    "calls_per_sample": {"plain": [s.calls for s in plain], "mute": [s.calls for s in mute]},
                    "plain_threads_us": _threads_median(plain),
                    "mute_threads_us": _threads_median(mute),
                }
                cells[f"{state} {call}({_label(timeout)})"] = cell
                console.print(
                    f"{state:11s} {cell['call']:12s} plain {cell['plain_cpu_us']['median']:9.2f} us  "
                    f"mute {cell['mute_cpu_us']['median']:9.2f} us  ratio {cell['ratio']['median']:5.2f} "
                    f"({cell['ratio']['min']:.2f}-{cell['ratio']['max']:.2f})  per wall s "
                    f"{cell['ratio_per_wall_s']['median']:5.2f}"
                )
    return {"cells": cells}


@contextmanager
def _cluster(args: argparse.Namespace) -> Iterator[tuple[str | None, str | None]]:
    """A reachable cluster and a topic on it, when a state needs one."""
    if not any(s in CLUSTER_STATES for s in args.states):
        yield None, None
        return
    from confluent_kafka.admin import AdminClient

    from mutepro.cluster import ClusterSpec, LocalCluster, create_topic

    def with_topic(bootstrap: str) -> str:
        topic = f"wait-cost-{uuid.uuid4().hex[:8]}"
        create_topic(AdminClient({"bootstrap.servers": bootstrap}), topic, partitions=3, replication_factor=1)
        gc.collect()
        return topic

    if args.bootstrap:
        yield args.bootstrap, with_topic(args.bootstrap)
        return
    with LocalCluster(ClusterSpec(brokers=1)) as cluster:
        bootstrap = cluster.bootstrap_servers
        yield bootstrap, with_topic(bootstrap)
        gc.collect()  # destroy the clients before the broker goes


def _print(result: dict[str, Any]) -> None:
    table = Table(title="CPU per call (process, all threads), median of repetitions; ratio = mute / plain "
                  "(per call; per wall second of the calls)")
    for col in ("state", "call", "plain µs", "mute µs", "ratio (min-max)", "per wall s", "wall µs plain/mute"):
        table.add_column(col, justify="right" if "µs" in col or "ratio" in col else "left")
    for c in result["cells"].values():
        r = c["ratio"]
        table.add_row(
            c["state"], c["call"], f"{c['plain_cpu_us']['median']:.2f}", f"{c['mute_cpu_us']['median']:.2f}",
            f"{r['median']:.2f} ({r['min']:.2f}-{r['max']:.2f})", f"{c['ratio_per_wall_s']['median']:.2f}",
            f"{c['plain_wall_us']:.0f} / {c['mute_wall_us']:.0f}",
        )
    Console(width=160).print(table)


def plot(result: dict[str, Any], path: Path) -> None:
    """One bar per cell: the CPU a second of waiting costs, MuteProducer over plain (median, whisker min..max),
    grouped by state, with the 2x goal and parity marked."""
    import matplotlib

    matplotlib.use("Agg")  # no display on the benchmark machine
    import matplotlib.pyplot as plt

    cells = list(result["cells"].items())
    fig, ax = plt.subplots(figsize=(9, 0.8 + 0.26 * len(cells)))
    ys = range(len(cells))
    med = [c["ratio_per_wall_s"]["median"] for _, c in cells]
    lo = [m - c["ratio_per_wall_s"]["min"] for m, (_, c) in zip(med, cells, strict=True)]
    hi = [c["ratio_per_wall_s"]["max"] - m for m, (_, c) in zip(med, cells, strict=True)]
    colors = {"unreachable": "tab:gray", "stuck": "tab:red", "idle": "tab:blue", "busy": "tab:green"}
    ax.barh(list(ys), med, xerr=[lo, hi], color=[colors.get(c["state"], "tab:blue") for _, c in cells], capsize=2)
    ax.set_yticks(list(ys), [k for k, _ in cells], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", lw=0.8)
    ax.axvline(2.0, color="tab:orange", lw=0.8, ls="--", label="goal: within 2x")
    ax.set_xlabel("CPU per second of waiting, MuteProducer / plain client (median, min..max of repetitions)")
    ax.set_title(f"What waiting costs ({result['meta']['date'][:10]})")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--reps", type=int, default=5, help="repetitions per client and cell (default 5)")
    p.add_argument("--sample-s", type=float, default=1.0, help="least wall time of one sample (default 1 s)")
    p.add_argument("--settle-s", type=float, default=0.5, help="pause after warming a producer up (default 0.5 s)")
    p.add_argument("--states", default=",".join(STATES), help=f"comma-separated, of {', '.join(STATES)}")
    p.add_argument("--calls", default=",".join(CALLS), help="poll, flush or both (default both)")
    p.add_argument("--timeouts", default=",".join(f"{t:g}" for t in TIMEOUTS), help="seconds, comma-separated")
    p.add_argument("--bootstrap", help="use this cluster instead of starting a 1-broker one")
    p.add_argument("--out", default="benchmarks/results", help="directory for wait_cost.json")
    p.add_argument("--name", default="wait_cost", help="result file name, without .json (default wait_cost)")
    args = p.parse_args(argv)
    args.states = [s for s in args.states.split(",") if s]
    args.calls = [c for c in args.calls.split(",") if c]
    args.timeouts = [float(t) for t in args.timeouts.split(",") if t]
    bad = [s for s in args.states if s not in STATES] + [c for c in args.calls if c not in CALLS]
    if bad or args.reps < 1 or any(t < 0 for t in args.timeouts):
        p.error(f"--states from {STATES}, --calls from {CALLS}, --reps >= 1, timeouts >= 0 (bad: {bad})")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    started = time.time()
    result: dict[str, Any] = {
        "meta": {
            "benchmark": "wait_cost",
            "command": "python benchmarks/wait_cost.py " + " ".join(sys.argv[1:] if argv is None else argv),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "machine": {
                "cpus": os.cpu_count(), "loadavg_at_start": list(os.getloadavg()),
                "python": platform.python_version(), "platform": platform.platform(),
            },
            "confluent_kafka": confluent_kafka.version()[0], "librdkafka": confluent_kafka.libversion()[0],
            "fast_path": True,  # the C extension is required
            "reps": args.reps, "sample_s": args.sample_s, "busy_batch": BUSY_BATCH, "stuck_messages": STUCK_MESSAGES,
            "measure": "process CPU time (time.process_time) over a sample / calls; ratio per repetition",
        },
    }
    gc.collect()
    with _cluster(args) as (bootstrap, topic):
        result.update(run(args, bootstrap, topic))
    result["meta"]["elapsed_s"] = round(time.time() - started, 1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{args.name}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    plot(result, path.with_suffix(".png"))
    _print(result)
    console.print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
