"""The fault matrix: plain ``confluent_kafka.Producer`` against ``mutepro.MuteProducer`` (default policy, nothing
tuned) in every cell of a declared list of scenarios, on the real local cluster, everything read back.

    python benchmarks/fault_matrix.py                         # every cell in CELLS (~50 minutes)
    python benchmarks/fault_matrix.py --quick                 # the cells marked quick, short phases (~8 minutes)
    python benchmarks/fault_matrix.py --cells stall_rf1_open,limp_long_open [--merge]
    python benchmarks/fault_matrix.py --report                # re-render the PNG, print the markdown table
    python benchmarks/fault_matrix.py --list                  # the cells and what each one is

Each cell runs the two producers one after the other, each on a fresh topic, with the same load and the same
fault schedule: ``before`` seconds healthy, ``fault`` seconds of the cell's fault on broker 2 (SIGSTOP, a limp
of SIGSTOP/SIGCONT, SIGKILL and restart, or every broker limping in turn), ``after`` seconds healthy again. Each
producer runs in a Python process of its own (fault_matrix_load.py); this process owns the cluster, injects the
faults and reads the topic back with a consumer counting every sequence number (lost, duplicates). The figures
and their definitions: fault_matrix_metrics.py.

The cluster comes from mutepro's own launcher (``mutepro.cluster.LocalCluster``), one per broker count, reused by
every cell that needs that many brokers, and always stopped at the end. Each cluster's lifetime holds
``/tmp/mutepro-cluster.lock`` (flock), so other benchmarks and recordings interleave between groups, never beside
one: figures taken while something else ran are not figures.

Writes ``benchmarks/results/fault_matrix.json`` (``fault_matrix_quick.json`` with ``--quick``) after every cell,
the PNG grid beside it, and MuteProducer's detection traces under ``results/traces/`` when this mutepro's
``MuteProducer`` takes ``trace=``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from bench_load import CpuLoad
from fault_matrix_metrics import (
    Event,
    Span,
    delivery_figures,
    lost_acked_by_partition,
    markdown,
    mute_figures,
    readback_figures,
    windows_for,
)

from mutepro.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
LOCK_FILE = "/tmp/mutepro-cluster.lock"
FAULT_BROKER = 2
FAULTS = ("none", "stall", "limp", "kill", "rotate")
WARMUP_S = 2.0  # the "before" window starts this long after the load: the first reports of a fresh producer


@dataclass(frozen=True)
class Cell:
    """One scenario. Defaults: 3 brokers, 12 partitions, RF 1, acks=1, unkeyed, 512-byte values, open loop."""

    name: str
    fault: str  # one of FAULTS; the faulty broker is FAULT_BROKER ("rotate": every broker in turn)
    load: str = "open"  # "open": ``rate`` msg/s on a fixed schedule; "closed": as fast as produce() accepts
    rate: int = 20_000
    brokers: int = 3
    partitions: int = 12
    rf: int = 1
    acks: str = "1"
    idempotent: bool = False
    keyed: bool = False
    value_bytes: int = 512
    duty: float = 0.8  # limp / rotate: stopped this share of every period
    period_s: float = 1.0
    cpu_hogs: int = 0  # busy processes beside the producer for the whole run
    overloaded: bool = False  # the cluster cannot keep up with the load: every broker slow in turns
    quick: bool = False  # part of --quick
    why: str = ""

    @property
    def healthy(self) -> bool:
        return self.fault == "none" and not self.overloaded


#: The matrix. Every axis of the issue is covered by at least one cell; the full cross product would take a day.
#: Middling rate: 20,000 msg/s of 512 B, about a twentieth of what a saturated loop delivers here and the rate of
#: the issue's findings; 10 KB values go at 2,000 msg/s (20 MB/s: the same order of bytes).
# fmt: off
CELLS: tuple[Cell, ...] = (
    # -- healthy: no mute is the only right answer ------------------------------------------------------------
    Cell("healthy_quiet_50", "none", rate=50, why="a low-rate producer on a healthy cluster"),
    Cell("healthy_hogs_keyed", "none", rate=1000, keyed=True, cpu_hogs=2,
         why="two busy processes take the cores from the brokers and the producer: slow everywhere, nothing bad"),
    Cell("healthy_saturated", "none", load="closed", why="a saturated loop queues for itself: no broker is at fault"),
    # -- a limping broker (stopped duty x period of every period) -----------------------------------------------
    Cell("limp_short_saturated", "limp", load="closed", quick=True,
         why="the tuned scenario of saturated_bench: goal >= 0.9x the pre-fault rate"),
    Cell("limp_short_open", "limp", why="stopped 80 % of every 1 s, open loop"),
    Cell("limp_long_open", "limp", duty=0.5, period_s=4.0, why="stopped 2 s of every 4 s: mutes must hold"),
    Cell("limp_long_keyed", "limp", duty=0.5, period_s=4.0, keyed=True, why="the long limp, keyed traffic"),
    Cell("limp_rf3_all_open", "limp", rf=3, acks="all", why="every partition waits for the limping follower"),
    Cell("limp_300p_saturated", "limp", load="closed", partitions=300, why="many partitions, saturated"),
    # -- a stalled broker (SIGSTOP for the whole fault, then SIGCONT) -------------------------------------------
    Cell("stall_rf1_50", "stall", rate=50, why="a leader stall at 50 msg/s: mute within 1.5 s at any rate"),
    Cell("stall_rf1_open", "stall", quick=True, why="the tuned scenario of producer_bench: goal p99 <= 100 ms"),
    Cell("stall_rf1_keyed", "stall", keyed=True, why="keyed traffic through a stall (keyed_policy reroute)"),
    Cell("stall_rf1_saturated", "stall", load="closed", why="a stall under a saturated loop"),
    Cell("stall_10kb", "stall", rate=2000, value_bytes=10_240, why="10 KB values"),
    Cell("stall_300p_open", "stall", partitions=300, why="300 partitions, a hundred of them on the stalled broker"),
    Cell("stall_rf3_all_50_keyed", "stall", rate=50, rf=3, acks="all", keyed=True,
         why="every partition waits for the stalled follower, then leaderships move: blame no heir"),
    Cell("stall_rf3_all_open", "stall", rf=3, acks="all", why="acks=all through a stalled follower"),
    # -- a killed broker (SIGKILL, restarted when the fault ends): leaderships move --------------------------
    Cell("kill_rf3_idem_open", "kill", rf=3, acks="all", idempotent=True, quick=True,
         why="an idempotent producer must wait for its broker: mutepro must cost nothing"),
    Cell("kill_rf3_acks1_keyed", "kill", rate=5000, rf=3, keyed=True, why="a crash with acks=1, keyed"),
    # -- five brokers, 20 partitions ----------------------------------------------------------------------------
    Cell("stall_5b_rf1_open", "stall", brokers=5, partitions=20, why="five brokers, a leader stall"),
    Cell("limp_5b_rf3_all_keyed", "limp", brokers=5, partitions=20, rate=5000, rf=3, acks="all", keyed=True,
         duty=0.5, period_s=4.0, why="five brokers, RF 3, acks=all, keyed, long limp"),
    # -- overloaded: more brokers than cores and a rate above what the cluster takes ----------------------------
    Cell("overload_5b", "none", brokers=5, partitions=20, rate=25_000, rf=3, acks="all", keyed=True, overloaded=True,
         quick=True, why="slowness that moves around is not a bad partition: no mute"),
    Cell("overload_5b_limp", "limp", brokers=5, partitions=20, rate=25_000, rf=3, acks="all", keyed=True,
         overloaded=True, why="an overloaded cluster, and one broker limps on top"),
    Cell("overload_5b_rotating", "rotate", brokers=5, partitions=20, rate=25_000, rf=3, acks="all", keyed=True,
         overloaded=True, duty=0.5, period_s=1.0, why="every broker limps in turn (4 s each): slowness moving around"),
)
# fmt: on


@dataclass(frozen=True)
class Schedule:
    before_s: float
    fault_s: float
    after_s: float
    cluster_warmup_s: float  # unmeasured plain load on a freshly started cluster (its first minute is slow)
    #: MuteProducer only: while a partition is still muted after the load, the load goes on (unmeasured) for up to
    #: this long, so the time to the last unmute is measured rather than "still muted when the run ended"
    tail_s: float = 20.0
    flush_s: float = 60.0

    @property
    def total_s(self) -> float:
        return self.before_s + self.fault_s + self.after_s


FULL = Schedule(before_s=10.0, fault_s=20.0, after_s=10.0, cluster_warmup_s=20.0)
QUICK = Schedule(before_s=5.0, fault_s=8.0, after_s=6.0, cluster_warmup_s=5.0, tail_s=8.0, flush_s=30.0)

#: Messages a closed loop may send per second of load (its bound): MuteProducer reached 570,000 msg/s before a
#: stall in saturated_bench with a leaner loop than this one (~150,000 here); 19 B of recording per message
#: (690 MB for a 40 s run and a 20 s tail at this bound).
CLOSED_LOOP_MAX_RATE = 600_000
#: MuteProducer records its detection trace (when it can): ``--no-trace`` turns it off, to see what it costs
TRACES = True


# -- the cell list ------------------------------------------------------------------------------------------------

_NAME = re.compile(r"^[a-z0-9][a-z0-9_]{0,63}$")


def validate(cells: Sequence[Cell]) -> None:
    """Raise :class:`ConfigError` naming the cell and the field for anything the matrix cannot run."""
    seen: set[str] = set()
    for c in cells:
        where = f"cell {c.name!r}"
        if not _NAME.match(c.name):
            raise ConfigError(f"{where}: name: use lowercase letters, digits and '_' (it names files), e.g. stall_rf1")
        if c.name in seen:
            raise ConfigError(f"{where}: name: given twice; every cell needs a name of its own")
        seen.add(c.name)
        if c.fault not in FAULTS:
            raise ConfigError(f"{where}: fault: expected one of {FAULTS}, got {c.fault!r}")
        if c.brokers not in (3, 5):
            raise ConfigError(f"{where}: brokers: the matrix runs clusters of 3 or 5 brokers, got {c.brokers}")
        if c.brokers < FAULT_BROKER:
            raise ConfigError(f"{where}: brokers: the faulty broker {FAULT_BROKER} must exist")
        if not 1 <= c.rf <= c.brokers:
            raise ConfigError(f"{where}: rf: expected 1 to {c.brokers} (the brokers), got {c.rf}")
        if not 1 <= c.partitions <= 1000:
            raise ConfigError(f"{where}: partitions: expected 1 to 1,000, got {c.partitions}")
        if c.acks not in ("0", "1", "all"):
            raise ConfigError(f"{where}: acks: expected '0', '1' or 'all' (a string, as librdkafka takes it), "
                              f"got {c.acks!r}")  # fmt: skip
        if c.idempotent and c.acks != "all":
            raise ConfigError(f"{where}: idempotent: an idempotent producer needs acks='all', got acks={c.acks!r}")
        if c.load not in ("open", "closed"):
            raise ConfigError(f"{where}: load: expected 'open' or 'closed', got {c.load!r}")
        if c.load == "open" and not 1 <= c.rate <= 200_000:
            raise ConfigError(f"{where}: rate: an open loop needs 1 to 200,000 msg/s, got {c.rate}")
        if not 8 <= c.value_bytes <= 1 << 20:
            raise ConfigError(f"{where}: value_bytes: expected 8 (the sequence number) to 1 MiB, got {c.value_bytes}")
        if c.fault in ("limp", "rotate") and not (0.0 < c.duty < 1.0 and 0.01 <= c.period_s <= 60.0):
            raise ConfigError(f"{where}: duty/period_s: a limp needs 0 < duty < 1 and a period of 0.01 to 60 s, got "
                              f"duty={c.duty}, period_s={c.period_s}")  # fmt: skip
        if not 0 <= c.cpu_hogs <= 4:
            raise ConfigError(f"{where}: cpu_hogs: expected 0 to 4 busy processes, got {c.cpu_hogs}")


def select(cells: Sequence[Cell], names: str | None, quick: bool) -> list[Cell]:
    """The cells to run: ``names`` (comma-separated, in the declared order), else the quick ones or all."""
    if names:
        wanted = [n.strip() for n in names.split(",") if n.strip()]
        known = {c.name for c in cells}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise ConfigError(f"--cells: unknown {unknown}; known cells: {', '.join(c.name for c in cells)}")
        return [c for c in cells if c.name in wanted]
    return [c for c in cells if c.quick] if quick else list(cells)


def groups(cells: Sequence[Cell]) -> list[tuple[int, list[Cell]]]:
    """Cells by broker count, in the order the counts first appear: one cluster per group."""
    out: dict[int, list[Cell]] = {}
    for c in cells:
        out.setdefault(c.brokers, []).append(c)
    return list(out.items())


def cell_params(c: Cell) -> dict[str, Any]:
    return {**asdict(c), "healthy": c.healthy, "fault_broker": None if c.fault in ("none", "rotate") else FAULT_BROKER}


# -- the cluster --------------------------------------------------------------------------------------------------


class ClusterBroken(RuntimeError):
    """The cluster could not be brought back to every broker running: the group starts a fresh one."""


@contextlib.contextmanager
def cluster_lock(path: str = LOCK_FILE, max_wait_s: float = 3600.0) -> Iterator[None]:
    """Hold the machine's cluster lock (the same flock that ``flock /tmp/mutepro-cluster.lock cmd`` takes)."""
    with open(path, "a") as fh:
        deadline = time.monotonic() + max_wait_s
        told = False
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not told:
                    print(f"waiting for {path} (another cluster or benchmark holds it)", flush=True)
                    told = True
                if time.monotonic() >= deadline:
                    raise SystemExit(f"gave up waiting {max_wait_s:.0f} s for {path}") from None
                time.sleep(2.0)  # flock has no timeout of its own; the holder's end is the only signal
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def heal(cluster: Any) -> None:
    """Every broker running and registered: continue a stopped one, restart a dead one (bounded)."""
    try:
        for b, node in cluster.brokers.items():
            if node.is_running():
                node.signal(signal.SIGCONT)
            else:
                cluster.restart(b, timeout_s=90)
        cluster.wait_ready(120)
    except Exception as err:
        raise ClusterBroken(f"could not bring every broker back: {err}") from err


class LeaderWatch:
    """Samples the topic's leaders every second while a run goes on (only changes are kept; bounded)."""

    def __init__(self, bootstrap: str, topic: str, max_s: float) -> None:
        from confluent_kafka.admin import AdminClient

        self._admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
        self.topic, self.max_s = topic, max_s
        self.samples: list[tuple[float, dict[int, int]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> LeaderWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        end = time.monotonic() + self.max_s
        while not self._stop.is_set() and time.monotonic() < end:
            try:
                md = self._admin.list_topics(self.topic, timeout=2.0)
                now = {p: pm.leader for p, pm in md.topics[self.topic].partitions.items()}
                if not self.samples or self.samples[-1][1] != now:
                    self.samples.append((time.monotonic(), now))
            except Exception:  # a stalled broker times the request out: the next sample comes in a second
                pass
            self._stop.wait(1.0)


def inject(cluster: Any, cell: Cell, t0: float, sched: Schedule) -> tuple[list[Span], dict[str, float]]:
    """The cell's fault from ``t0 + before`` for ``fault`` seconds; the spans as measured (absolute times) and,
    for a kill, when the restarted broker was registered again (``back``)."""
    start_at = t0 + sched.before_s
    end_at = start_at + sched.fault_s
    time.sleep(max(0.0, start_at - time.monotonic()))  # a schedule, not synchronisation
    if cell.fault == "none":
        return [], {}
    spans: list[Span] = []
    notes: dict[str, float] = {}
    b = FAULT_BROKER
    if cell.fault == "stall":
        with cluster.stalled(b):
            s = time.monotonic()
            time.sleep(max(0.0, end_at - time.monotonic()))
        spans.append(Span(b, s, time.monotonic(), "stall"))
    elif cell.fault == "limp":
        with cluster.limping(b, duty=cell.duty, period_s=cell.period_s, max_duration_s=sched.fault_s + 5):
            s = time.monotonic()
            time.sleep(max(0.0, end_at - time.monotonic()))
        spans.append(Span(b, s, time.monotonic(), "limp"))
    elif cell.fault == "kill":
        cluster.kill(b)
        s = time.monotonic()
        time.sleep(max(0.0, end_at - time.monotonic()))
        # The fault ends when the restart is asked for, on the same schedule as every other cell. The JVM then
        # takes ~10-15 s here to start and register: a partition that waits for the broker itself (RF 1, or a
        # leader that moved back) has that much more to wait; one whose leader moved during the kill does not.
        e = time.monotonic()
        cluster.restart(b, timeout_s=90)
        notes["back"] = time.monotonic()
        spans.append(Span(b, s, e, "kill"))
    elif cell.fault == "rotate":
        ids = sorted(cluster.brokers)
        turn = sched.fault_s / len(ids)
        for i, broker in enumerate(ids):
            until = start_at + (i + 1) * turn
            with cluster.limping(broker, duty=cell.duty, period_s=cell.period_s, max_duration_s=turn + 5):
                s = time.monotonic()
                time.sleep(max(0.0, until - time.monotonic()))
            spans.append(Span(broker, s, time.monotonic(), "limp"))
    return spans, notes


# -- one producer run ---------------------------------------------------------------------------------------------


def client_config(cell: Cell) -> dict[str, Any]:
    """Both producers' librdkafka settings: the cell's acks (and idempotence), linger.ms 5, nothing else tuned."""
    conf: dict[str, Any] = {"acks": cell.acks, "linger.ms": 5}
    if cell.idempotent:
        conf["enable.idempotence"] = True
    return conf


def create(admin: Any, cell: Cell, kind: str) -> str:
    from mutepro.cluster.topics import create_topic

    topic = f"fm-{cell.name}-{kind}-{uuid.uuid4().hex[:6]}"
    create_topic(admin, topic, partitions=cell.partitions, replication_factor=cell.rf, timeout_s=60)
    return topic


def drop(admin: Any, topic: str) -> None:
    try:
        admin.delete_topics([topic], operation_timeout=30)[topic].result(timeout=60)
    except Exception as err:  # a leftover topic costs disk in a cluster that is deleted at the end
        print(f"  could not delete {topic}: {err}", flush=True)


def read_back(bootstrap: str, topic: str, n: int, max_s: float) -> tuple[np.ndarray, dict[str, Any]]:
    """Every message of ``topic`` from the beginning: how many copies of each sequence number below ``n``."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"fm-read-{uuid.uuid4().hex[:8]}", "enable.auto.commit": False,
        "enable.partition.eof": False, "fetch.max.bytes": 64 << 20, "queued.max.messages.kbytes": 256 << 10,
        "log_level": 0,
    })  # fmt: skip
    try:
        md = consumer.list_topics(topic, timeout=15)
        parts = sorted(md.topics[topic].partitions)
        expected = 0
        for p in parts:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=15)
            expected += high - low
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
        chunks: list[np.ndarray] = []
        read = 0
        t_start = time.monotonic()
        deadline = t_start + max_s
        while read < expected and time.monotonic() < deadline:
            batch = consumer.consume(100_000, timeout=1.0)
            values = [m.value() for m in batch if m.error() is None]
            read += len(values)
            heads = b"".join(v[:8] for v in values if v is not None and len(v) >= 8)
            if heads:
                chunks.append(np.frombuffer(heads, dtype=">u8").astype(np.int64))
        seqs = np.concatenate(chunks) if chunks else np.zeros(0, np.int64)
        seqs = seqs[seqs < n]
        copies = np.bincount(seqs, minlength=n).astype(np.int32) if n else np.zeros(0, np.int32)
        info = {"expected": int(expected), "read": read, "complete": read >= expected,
                "seconds": round(time.monotonic() - t_start, 1)}  # fmt: skip
        return copies, info
    finally:
        consumer.close()


def run_producer(cluster: Any, admin: Any, cell: Cell, kind: str, sched: Schedule, out: Path) -> dict[str, Any]:
    """One producer through the cell's schedule: its figures (and raw partitions, for the keyed check)."""
    heal(cluster)
    topic = create(admin, cell, kind)
    cluster.wait_quiet(0.3, timeout_s=30)
    md = admin.list_topics(topic, timeout=15).topics[topic]
    replicas = {p: list(pm.replicas) for p, pm in md.partitions.items()}
    leaders0 = {p: pm.leader for p, pm in md.partitions.items()}
    work = Path(tempfile.mkdtemp(prefix="fault-matrix-"))
    trace = out.parent / "traces" / f"{cell.name}.jsonl.gz" if kind == "mute" and TRACES else None
    seconds = sched.total_s + sched.tail_s
    capacity = int(cell.rate * seconds) + 10 if cell.load == "open" else int(CLOSED_LOOP_MAX_RATE * seconds)
    spec = {
        "kind": kind, "topic": topic, "bootstrap": cluster.bootstrap_servers, "client": client_config(cell),
        "load": cell.load, "rate": cell.rate, "seconds": sched.total_s, "keyed": cell.keyed,
        "value_bytes": cell.value_bytes, "partitions": cell.partitions, "capacity": capacity,
        "flush_s": sched.flush_s, "tail_s": sched.tail_s, "trace": str(trace) if trace else None,
        "out": str(work / "run"),
    }  # fmt: skip
    (work / "spec.json").write_text(json.dumps(spec))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    stderr = (work / "stderr.log").open("wb")
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("fault_matrix_load.py")), str(work / "spec.json")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env,
    )  # fmt: skip
    spans: list[Span] = []
    notes: dict[str, float] = {}
    try:
        if not _await_ready(child, 90.0):
            raise RuntimeError(f"the {kind} producer did not get ready: {_tail(work / 'stderr.log')}")
        with CpuLoad(cell.cpu_hogs, sched.total_s + 60) if cell.cpu_hogs else contextlib.nullcontext():
            t0 = time.monotonic() + 0.5
            assert child.stdin is not None
            child.stdin.write(f"{t0!r}\n".encode())
            child.stdin.flush()
            watch_s = sched.total_s + sched.tail_s + sched.flush_s + 30
            with LeaderWatch(cluster.bootstrap_servers, topic, watch_s) as watch:
                spans, notes = inject(cluster, cell, t0, sched)
                left = t0 + sched.total_s + sched.tail_s + sched.flush_s + 60 - time.monotonic()
                code = child.wait(timeout=max(5.0, left))
        if code != 0:
            raise RuntimeError(f"the {kind} producer exited with {code}: {_tail(work / 'stderr.log')}")
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        stderr.close()
    heal(cluster)
    if spans:
        # A broker just restarted, or continued after a stall or a limp, is slow for its first seconds of load again:
        # without this, the next run's partitions it led delivered a trickle for 8 s from the start while the other
        # brokers answered in milliseconds (trace kill_rf3_acks1_keyed, the run after kill_rf3_idem_open), and,
        # after the plain run's 20 s stall of stall_rf1_keyed, its partitions' messages waited up to 0.87 s for
        # 3 s of the MuteProducer run's healthy phase (librdkafka's round-trip p99 to it 880 ms, the others'
        # 140-240 ms) -- MuteProducer rightly muted them, mutes "outside the fault" that were the previous run's.
        warm_cluster(cluster, admin, sched.cluster_warmup_s)
    meta = json.loads((work / "run.json").read_text())
    arrays = np.load(work / "run.npz")
    sent, done, state, partition = arrays["sent"], arrays["done"], arrays["state"], arrays["partition"]
    copies, readback = read_back(cluster.bootstrap_servers, topic, len(state), max_s=120.0 + len(state) / 100_000)
    drop(admin, topic)
    t0 = float(meta["t0"])
    rel = [Span(s.broker, s.start - t0, s.end - t0, s.kind) for s in spans]
    if trace is not None and meta["traced"]:
        _append_faults(trace, spans, cell)
    windows = windows_for(rel, (sched.before_s, sched.before_s + sched.fault_s), meta["load_end"] - t0, WARMUP_S)
    figures: dict[str, Any] = {
        **delivery_figures(sent, done, state, t0, windows),
        **readback_figures(state, copies),
        "lost_acked_by_partition": lost_acked_by_partition(state, copies, partition),
        "buffer_errors": meta["buffer_errors"], "rejected": meta["rejected"], "offered": meta["offered"],
        "left_after_flush": meta["left_after_flush"], "tail_s": meta["tail_s"],
        "flush_s": round(meta["end"] - meta["load_end"] - meta["tail_s"], 2),
        "broker_back_s": round(notes["back"] - t0, 2) if "back" in notes else None,
        "failed_errors": meta["failed_errors"], "duplicate_reports": meta["duplicate_reports"],
        "started_late_s": meta["started_late_s"], "capped": meta["capped"], "readback": readback, "topic": topic,
        "windows": asdict(windows), "spans": [asdict(s) for s in rel],
        "leaders_at_create": leaders0, "leader_changes": [(round(t - t0, 2), ls) for t, ls in watch.samples[1:]],
    }  # fmt: skip
    if kind == "mute":
        events = [Event(at - t0, k, p, b, r) for at, k, p, b, r in meta["events"]]
        leaders = [(t - t0, ls) for t, ls in watch.samples]
        m = mute_figures(events, rel, replicas, end_s=meta["end"] - t0, leaders=leaders)
        m["rerouted"] = meta["counters"].get("rerouted", 0)
        m["avoids"] = meta["counters"].get("avoids", 0)
        m["traced"] = meta["traced"]
        figures["mute"] = m
        figures["counters"] = meta["counters"]
        figures["events"] = [
            {"t": round(e.t, 3), "kind": e.kind, "partition": e.partition, "broker": e.broker, "reason": e.reason}
            for e in sorted(events, key=lambda e: e.t)[:300]
        ]
    figures["_partition"] = partition if cell.keyed else None  # the keyed check, removed before writing
    figures["_state"] = state if cell.keyed else None
    for f in work.iterdir():
        f.unlink()
    work.rmdir()
    return figures


def _await_ready(child: subprocess.Popen[bytes], timeout_s: float) -> bool:
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(child.stdout.readline() if child.stdout else b""),
                              daemon=True)  # fmt: skip
    reader.start()
    reader.join(timeout_s)
    return bool(got) and got[0].strip() == b"READY"


def _tail(path: Path, chars: int = 1500) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no stderr)"


def _append_faults(trace: Path, spans: Sequence[Span], cell: Cell) -> None:
    """The injected faults into MuteProducer's trace, on its clock (what the trace replay judges against)."""
    try:
        from mutepro.trace import append_records
    except ImportError:
        return
    append_records(trace, [
        {"kind": "fault", "t": round(s.start, 4), "broker": s.broker, "fault": cell.fault if cell.fault != "rotate"
         else "limp", "end": round(s.end, 4), "period_s": cell.period_s, "duty": cell.duty if s.kind == "limp"
         else 1.0}
        for s in spans
    ])  # fmt: skip


def keyed_off_home(plain: Mapping[str, Any], mute: Mapping[str, Any]) -> int | None:
    """MuteProducer's delivered keyed messages that landed off their key's partition (the plain run's choice for
    the same key: both topics have the same partition count, so the hash agrees): the reroutes, as the topic saw
    them. None without both runs' partitions."""
    from fault_matrix_load import DELIVERED, KEYS

    pp, ps, mp, ms = plain.get("_partition"), plain.get("_state"), mute.get("_partition"), mute.get("_state")
    if pp is None or mp is None or ps is None or ms is None:
        return None
    home = np.full(KEYS, -1, dtype=np.int64)
    seq = np.flatnonzero(np.asarray(ps) == DELIVERED)
    home[seq % KEYS] = pp[seq]
    seq = np.flatnonzero(np.asarray(ms) == DELIVERED)
    known = home[seq % KEYS] >= 0
    return int((mp[seq][known] != home[seq % KEYS][known]).sum())


def run_cell(cluster: Any, admin: Any, cell: Cell, sched: Schedule, index: int, out: Path) -> dict[str, Any]:
    """Both producers through the cell (the order alternates from cell to cell, so drift hits both)."""
    order = ("plain", "mute") if index % 2 == 0 else ("mute", "plain")
    t = time.monotonic()
    entry: dict[str, Any] = {"cell": cell_params(cell), "order": list(order)}
    for kind in order:
        entry[kind] = run_producer(cluster, admin, cell, kind, sched, out)
    if cell.keyed:
        off = keyed_off_home(entry["plain"], entry["mute"])
        entry["mute"]["keyed_off_home"] = off
        entry["plain"]["keyed_off_home"] = 0 if off is not None else None
    for kind in order:
        entry[kind].pop("_partition", None)
        entry[kind].pop("_state", None)
    entry["elapsed_s"] = round(time.monotonic() - t, 1)
    return entry


# -- the whole matrix ---------------------------------------------------------------------------------------------


def machine(sched: Schedule, argv: Sequence[str]) -> dict[str, Any]:
    import confluent_kafka

    from mutepro.producer.producer import MuteProducer

    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip()  # fmt: skip
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "mutepro"], capture_output=True,
                           text=True, check=False).stdout.strip()  # fmt: skip
    import inspect

    return {
        "command": "python benchmarks/fault_matrix.py " + " ".join(argv),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "nproc": os.cpu_count(), "python": platform.python_version(),
        "confluent_kafka": confluent_kafka.version()[0], "librdkafka": confluent_kafka.libversion()[0],
        "mutepro_commit": commit + (" (mutepro/ modified)" if dirty else ""),
        "loadavg_at_start": list(os.getloadavg()), "schedule": asdict(sched), "fault_broker": FAULT_BROKER,
        "policy": "MuteProducer defaults (no policy given)", "warmup_s": WARMUP_S,
        "traces": TRACES and "trace" in inspect.signature(MuteProducer.__init__).parameters,
    }  # fmt: skip


def write(result: Mapping[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1, default=_json_default) + "\n")
    tmp.replace(path)


def _json_default(x: Any) -> Any:
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return str(x)


def progress_line(i: int, total: int, name: str, entry: Mapping[str, Any]) -> str:
    def one(kind: str) -> str:
        r = entry[kind]
        p99 = r["p99_during_ms"]
        return (f"{kind}: {r['before_msgs_s']:,.0f} -> {r['during_msgs_s']:,.0f} msg/s, p99 "
                f"{'-' if p99 is None else f'{p99:,.0f}'} ms, BE {r['buffer_errors']}, lost {r['lost']}, "
                f"dup {r['duplicates']}")  # fmt: skip

    m = entry["mute"]["mute"]
    unmute = "still muted" if m["unmute_after_s"] is None and m["mutes"] else m["unmute_after_s"]
    return (f"[{i}/{total}] {name} ({entry['elapsed_s']:.0f} s)\n    {one('plain')}\n    {one('mute')}\n"
            f"    mutes {m['mutes']} (outside faults {m['false_mutes']}), first {m['first_mute_s']} s, "
            f"wrong {len(m['wrong'])}, flaps {m['flaps']}, unmuted {unmute}"
            f" s after, rerouted {m['rerouted']}")  # fmt: skip


def run_matrix(cells: Sequence[Cell], sched: Schedule, result: dict[str, Any], path: Path) -> None:
    from confluent_kafka.admin import AdminClient

    from mutepro.cluster import ClusterSpec, LocalCluster

    total, done = len(cells), 0
    for brokers, group in groups(cells):
        pending = list(group)
        for _attempt in range(3):  # a broken cluster is replaced at most twice per group
            if not pending:
                break
            asked = time.monotonic()
            with cluster_lock():
                t = time.monotonic()
                result["meta"]["lock_wait_s"] = round(result["meta"].get("lock_wait_s", 0.0) + t - asked, 1)
                print(f"starting a {brokers}-broker cluster for {len(pending)} cells", flush=True)
                with LocalCluster(ClusterSpec(brokers=brokers)) as cluster:
                    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "log_level": 0})
                    result["meta"].setdefault("kafka", cluster.distribution.version)
                    warm_cluster(cluster, admin, sched.cluster_warmup_s)
                    print(f"  cluster ready and warm in {time.monotonic() - t:.0f} s", flush=True)
                    while pending:
                        cell = pending[0]
                        done += 1
                        try:
                            entry = run_cell(cluster, admin, cell, sched, done, path)
                        except ClusterBroken as err:
                            result["cells"][cell.name] = {"cell": cell_params(cell), "error": str(err)}
                            print(f"[{done}/{total}] {cell.name}: cluster broken ({err}); starting a new one",
                                  flush=True)  # fmt: skip
                            pending.pop(0)
                            write(result, path)
                            break
                        except Exception as err:
                            result["cells"][cell.name] = {
                                "cell": cell_params(cell),
                                "error": f"{type(err).__name__}: {err}",
                            }
                            print(f"[{done}/{total}] {cell.name}: failed: {type(err).__name__}: {err}", flush=True)
                        else:
                            # which code and day each cell's figures are of: a --merge keeps cells of earlier runs
                            entry["run"] = {k: result["meta"][k] for k in ("mutepro_commit", "date")}
                            result["cells"][cell.name] = entry
                            print(progress_line(done, total, cell.name, entry), flush=True)
                        pending.pop(0)
                        write(result, path)
                    del admin


def warm_cluster(cluster: Any, admin: Any, seconds: float) -> None:
    """An unmeasured plain closed loop on a throwaway topic: a fresh cluster is slow for its first minute of load
    (JIT; saturated_bench measured half the rate in the first pair of runs)."""
    if seconds <= 0:
        return
    import confluent_kafka

    from mutepro.cluster.topics import create_topic

    topic = f"fm-warmup-{uuid.uuid4().hex[:6]}"
    create_topic(admin, topic, partitions=12, replication_factor=1, timeout_s=60)
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 5})
    value = bytes(512)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end and n < 50_000_000:
        try:
            producer.produce(topic, value)
            n += 1
        except BufferError:
            producer.poll(0.001)
        if not n & 1023:
            producer.poll(0)
    producer.flush(30)
    del producer
    drop(admin, topic)


def report(path: Path) -> int:
    from fault_matrix_plot import plot_grid

    result = json.loads(path.read_text())
    png = path.with_suffix(".png")
    plot_grid(result, png)
    print(markdown(result))
    print(f"\n(MuteProducer / plain; ▲ better, ▼ worse beyond the spread, ✓ / ✗ the issue's goal met / missed)\n"
          f"wrote {png}")  # fmt: skip
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--cells", help="comma-separated cell names (default: all, or the quick ones with --quick)")
    p.add_argument("--quick", action="store_true", help=f"short phases ({QUICK.before_s:g}/{QUICK.fault_s:g}/"
                   f"{QUICK.after_s:g} s) and, without --cells, only the cells marked quick")  # fmt: skip
    p.add_argument("--out", help="the JSON (default benchmarks/results/fault_matrix.json, _quick with --quick)")
    p.add_argument("--merge", action="store_true", help="keep the other cells already in --out")
    p.add_argument("--report", action="store_true", help="only re-render the PNG and print the table from --out")
    p.add_argument("--list", action="store_true", help="print the cells and exit")
    p.add_argument("--no-trace", action="store_true", help="MuteProducer without trace= (what the trace costs)")
    args = p.parse_args(argv)
    default = "fault_matrix_quick.json" if args.quick else "fault_matrix.json"
    path = Path(args.out) if args.out else REPO / "benchmarks" / "results" / default
    if args.report:
        return report(path)
    validate(CELLS)
    try:
        cells = select(CELLS, args.cells, args.quick)
    except ConfigError as err:
        p.error(str(err))
    if args.list:
        for c in CELLS:
            print(f"{c.name:24s} {c.brokers}b {c.partitions:4d}p rf{c.rf} acks={c.acks:3s} {c.load:6s} "
                  f"{c.rate if c.load == 'open' else 'max':>6} {'keyed' if c.keyed else '':5s} {c.value_bytes:>6} B "
                  f"{c.fault:6s} {'quick ' if c.quick else ''}{c.why}")  # fmt: skip
        return 0
    sched = QUICK if args.quick else FULL
    global TRACES
    TRACES = not args.no_trace
    result: dict[str, Any] = {"meta": machine(sched, argv), "cells": {}}
    if args.merge and path.exists():
        result["cells"] = json.loads(path.read_text()).get("cells", {})
    started = time.monotonic()
    try:
        run_matrix(cells, sched, result, path)
    finally:
        result["meta"]["elapsed_s"] = round(time.monotonic() - started, 1)
        result["cells"] = {c.name: result["cells"][c.name] for c in CELLS if c.name in result["cells"]}
        write(result, path)
    print(f"matrix done in {(time.monotonic() - started) / 60:.1f} min", flush=True)
    return report(path)


if __name__ == "__main__":
    sys.exit(main())
