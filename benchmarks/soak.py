"""Chaos soak: MuteProducer under a seeded random fault schedule, checked by an independent plain consumer.

    python benchmarks/soak.py                 # 10 minutes of load (plus ~1 minute of set-up and read-back)
    python benchmarks/soak.py --short         # 75 s of load, ~2 minutes in all (CI)
    python benchmarks/soak.py --seed 7 --json /tmp/soak.json

Run it under the cluster lock on a shared machine (``flock /tmp/mutepro-cluster.lock python3 ...``).

Six producers, one per (keyed policy, acks) pair: hold, reroute and fail, each with ``acks=all`` +
idempotence and with ``acks=1`` without it (one request in flight per connection), and a control: the plain
``confluent_kafka.Producer`` configured like ``hold/acks=all``, with the same threads, bad messages and faults,
reported and never judged. Order under ``hold`` is checked on the idempotent producer only, on the *first copy*
of each message, which is what the README promises. An idempotent librdkafka producer writes a run of messages
a second time when it bumps its epoch (after a rejected message such as MSG_SIZE_TOO_LARGE, or a timeout) while
that run is being retried after a broker stalled (librdkafka issue #4953). The copies are then out of order for a
reader that does not de-duplicate, the plain client's as much as MuteProducer's: seed 20261123 once failed CI with
198 duplicates and 152 inversions of copies, key k0-0-25's sequences 35-39 written again after 47; a plain
idempotent producer showed the same under a stall plus oversized messages (``debug=eos``: "epoch bump ... message
sequence gap" then "resetting epoch base seq" on the retried partition). Both counts are reported. Without
idempotence librdkafka itself may reorder across a leader change, because ``max.in.flight`` counts per
connection, not per partition (librdkafka issue #1969): a batch still in flight to the old leader is retried
after the next batch went to the new one. Seed 20261123 showed it once: two keys of one batch of
``hold/acks=1`` partition 4, each one message written after its successor, right after the partition's leader
moved away from the stalled broker. The ``acks=1`` inversions are still counted and printed. Each producer has
its own topic (6 partitions, RF 3, min.insync.replicas 2) and three threads: two keyed (disjoint keys, each
key with its own sequence) and one unkeyed that also sends a share of bad messages (oversized for a topic with
a 4 KB limit, and to a topic that does not exist). Breaker state lives in a password-protected Redis.

Meanwhile the schedule (printed first, with its seed) stalls, limps, kills and restarts brokers (one at a
time, from a worker thread), moves leaders (preferred election after restarts) and restarts Redis. The last
part of the run is quiet. Then every producer is flushed and closed, and each topic is read back from the
beginning by a plain consumer.

Reported: produced, acknowledged, failed (by reason), rejected by produce(), unreported, lost, duplicated,
per-key order inversions (every copy, and first copies only), rewritten copies, keys leaving their partition
(hold and fail), mute events (during faults / in quiet periods / on the bad-message topic), RSS over time, and
whether the Redis password appears in any log line (mutepro's events, stderr including librdkafka's and
pybreaker's loggers).

Pass (MuteProducers only): lost 0 (acks=all), every accepted message reported (unreported 0), 0 first-copy
inversions under hold (idempotent), RSS flat in the quiet period (growth at most max(10 %, 32 MB)), no password
in any log. Exit 0 on pass, 1 on fail.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient
from soak_ledger import ACCEPTED, REJECTED, Ledger, compare, encode, key_order, read_back
from soak_schedule import Fault, build_schedule, schedule_json

from mutepro.cluster import ClusterSpec, LocalCluster
from mutepro.cluster.topics import create_topic
from mutepro.logs import configure_logging, reset_logging
from mutepro.producer.producer import MuteProducer
from mutepro.testing.redis_server import RedisServer

POLICIES = ("hold", "reroute", "fail")
CONTROL = "plain/acks=all"  # the plain confluent_kafka.Producer beside them: reported, never judged
ACKS = ("all", "1")
PARTITIONS = 6
VALUE_PAD = bytes(200)
BAD_VALUE = bytes(10_000)  # the bad-message topic allows 4 KB
BAD_THREAD = 9  # the ledger's thread number for bad messages


@dataclass
class Settings:
    duration_s: float
    quiet_s: float
    rate_per_thread: float
    keys_per_thread: int
    bad_share: float
    seed: int


@dataclass
class Workload:
    """One producer and what it writes to."""

    index: int
    policy: str
    acks: str
    topic: str
    producer: Any  # MuteProducer, or confluent_kafka.Producer for the control
    threads: list[int] = field(default_factory=lambda: [0, 1, 2])

    @property
    def label(self) -> str:
        return f"{self.policy}/acks={self.acks}"


class MuteLog:
    """Every mute decision of every producer, with the time (relative to the load's start)."""

    def __init__(self, t0: float) -> None:
        self.t0 = t0
        self.events: list[tuple[float, str, str, int, int | None, str]] = []
        self._lock = threading.Lock()

    def hook(self, workload: Workload) -> None:
        # The soak watches mute decisions from outside, beside the producer's own counters.
        def on_event(event: Any) -> None:
            with self._lock:
                self.events.append(
                    (time.monotonic() - self.t0, workload.label, event.topic, event.partition, event.broker,
                     f"{event.kind}:{event.reason}")
                )

        if isinstance(workload.producer, MuteProducer):  # the plain control has no mute decisions
            workload.producer.mute_manager.add_event_listener(on_event)


class Injector(threading.Thread):
    """Runs the schedule against the cluster and Redis from its own threads (one per track)."""

    def __init__(self, cluster: LocalCluster, redis: RedisServer, faults: list[Fault], t0: float, topics: list[str]):
        super().__init__(name="soak-injector", daemon=True)
        self.cluster = cluster
        self.redis = redis
        self.faults = faults
        self.t0 = t0
        self.topics = topics
        self.timeline: list[tuple[float, float, str]] = []  # (start, end, description) as it happened
        self.errors: list[str] = []
        self.leader_moves = 0
        self._halt = threading.Event()  # not _stop: threading.Thread has a method of that name

    def stop(self) -> None:
        self._halt.set()

    def run(self) -> None:
        redis_track = threading.Thread(
            target=self._track, args=([f for f in self.faults if f.kind == "redis_restart"],), daemon=True
        )
        redis_track.start()
        self._track([f for f in self.faults if f.kind != "redis_restart"])
        redis_track.join(120)

    def _wait_until(self, at: float) -> bool:
        return not self._halt.wait(max(0.0, self.t0 + at - time.monotonic()))

    def _track(self, faults: list[Fault]) -> None:
        for fault in faults:
            if not self._wait_until(fault.at):
                return
            start = time.monotonic() - self.t0
            try:
                self._apply(fault)
            except Exception as err:  # reported, and the run goes on: one failed fault is not a reason to stop
                self.errors.append(f"{fault.describe()}: {type(err).__name__}: {err}")
            self.timeline.append((start, time.monotonic() - self.t0, fault.describe()))

    def _apply(self, fault: Fault) -> None:
        if fault.kind == "stall":
            with self.cluster.stalled(fault.target):
                self._halt.wait(fault.duration)
        elif fault.kind == "limp":
            with self.cluster.limping(fault.target, duty=0.7, period_s=1.0, max_duration_s=fault.duration + 10):
                self._halt.wait(fault.duration)
        elif fault.kind == "kill":
            self.cluster.kill(fault.target)
            self._halt.wait(fault.duration)
            self.cluster.restart(fault.target, timeout_s=90)
        elif fault.kind == "leader_move":
            self._preferred_election()
        elif fault.kind == "redis_restart":
            self.redis.stop()
            self._halt.wait(fault.duration)
            self.redis.start()

    def _preferred_election(self) -> None:
        from confluent_kafka import ElectionType, TopicPartition

        admin = AdminClient({"bootstrap.servers": self.cluster.bootstrap_servers, "log_level": 0})
        before = _leaders(admin, self.topics)
        partitions = [TopicPartition(t, p) for t in self.topics for p in range(PARTITIONS)]
        # No request_timeout/operation_timeout: confluent-kafka 2.16's elect_leaders raises SystemError ("more
        # argument specifiers than keyword list entries") for either; the result() timeout bounds the wait.
        future = admin.elect_leaders(ElectionType.PREFERRED, partitions)
        with contextlib.suppress(KafkaException):  # ELECTION_NOT_NEEDED for partitions already in place
            future.result(timeout=20)
        after = _leaders(admin, self.topics)
        self.leader_moves += sum(1 for tp, leader in after.items() if before.get(tp) != leader)


def _leaders(admin: AdminClient, topics: list[str]) -> dict[tuple[str, int], int]:
    metadata = admin.list_topics(timeout=10)
    return {
        (t, p): part.leader
        for t in topics
        if t in metadata.topics
        for p, part in metadata.topics[t].partitions.items()
    }


def _create_workload_topic(admin: AdminClient, run_id: str, policy: str, acks: str) -> str:
    topic = f"soak-{run_id}-{policy}-acks{acks}"
    create_topic(admin, topic, partitions=PARTITIONS, replication_factor=3, config={"min.insync.replicas": "2"})
    return topic


def _client_conf(bootstrap: str, acks: str) -> dict[str, Any]:
    """One producer's librdkafka settings: ``acks=all`` with idempotence, ``acks=1`` without it."""
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "linger.ms": 5,
        "message.timeout.ms": 30_000,
        "allow.auto.create.topics": False,
        "acks": acks,
        "enable.idempotence": acks == "all",
    }
    if acks != "all":
        conf["max.in.flight.requests.per.connection"] = 1  # no reordering by librdkafka itself
    return conf


def _close(w: Workload, timeout: float) -> None:
    if isinstance(w.producer, MuteProducer):
        w.producer.close(timeout)
    else:  # confluent_kafka.Producer.close() takes no timeout; flush first so it does not wait unbounded
        w.producer.flush(timeout)
        w.producer.close()


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _worker(
    w: Workload, thread: int, ledger: Ledger, settings: Settings, stop_at: float, bad_topic: str, missing: str
) -> None:
    """One producing thread: paced at ``rate_per_thread``, bounded by the ledger's capacity and ``stop_at``."""
    rng = random.Random(settings.seed * 1000 + w.index * 10 + thread)
    keyed = thread < 2
    keys = [f"k{w.index}-{thread}-{i}".encode() for i in range(settings.keys_per_thread)]
    key_seq = [0] * len(keys)
    states = ledger.states(w.index, thread)
    bad_states = ledger.states(w.index, BAD_THREAD)
    on_delivery = ledger.callback(w.label)
    on_bad = ledger.callback(f"{w.label} (bad message)", bad=True)
    interval = 1.0 / settings.rate_per_thread
    next_at = time.monotonic()
    seq = bad_seq = 0
    while seq < ledger.capacity and bad_seq < ledger.capacity and time.monotonic() < stop_at:
        if not keyed and rng.random() < settings.bad_share:
            topic = bad_topic if rng.random() < 0.5 else missing
            bad_states[bad_seq] = ACCEPTED
            try:
                w.producer.produce(topic, encode(w.index, BAD_THREAD, bad_seq, 0, BAD_VALUE), on_delivery=on_bad)
            except (KafkaException, BufferError, ValueError) as err:
                bad_states[bad_seq] = REJECTED
                ledger.reject(f"{w.label} bad: {type(err).__name__}: {str(err)[:60]}")
            bad_seq += 1
        key: bytes | None = None
        k = 0
        if keyed:
            k = rng.randrange(len(keys))
            key = keys[k]
        value = encode(w.index, thread, seq, key_seq[k] if keyed else 0, VALUE_PAD)
        states[seq] = ACCEPTED
        for attempt in range(40):  # a full queue (or hold buffer): serve reports and retry, bounded
            try:
                w.producer.produce(w.topic, value, key=key, on_delivery=on_delivery)
                break
            except BufferError as err:
                if attempt == 39:
                    states[seq] = REJECTED
                    ledger.reject(f"{w.label}: BufferError {str(err)[:60]}")
                w.producer.poll(0.05)
            except KafkaException as err:
                states[seq] = REJECTED
                ledger.reject(f"{w.label}: {err.args[0].name() if err.args else err}")
                break
        if keyed:
            key_seq[k] += 1
        seq += 1
        if seq % 16 == 0:
            w.producer.poll(0)
        next_at += interval
        delay = next_at - time.monotonic()
        if delay > 0.005:
            time.sleep(delay)  # pacing an open-loop load: the time is the point, there is nothing to await
        elif delay < -2.0:
            next_at = time.monotonic()  # fell behind (a stalled produce()): do not burst to catch up


def run(settings: Settings, json_out: Path | None) -> int:
    password = f"soak-{uuid.uuid4().hex}"
    run_id = uuid.uuid4().hex[:6]
    faults = build_schedule(settings.seed, settings.duration_s, settings.quiet_s)
    print(f"soak seed={settings.seed} duration={settings.duration_s:.0f}s quiet={settings.quiet_s:.0f}s")
    print("schedule (replay with --seed and the same --duration/--quiet):")
    for fault in faults:
        print("  " + fault.describe())
    sys.stdout.flush()

    workdir = Path(tempfile.mkdtemp(prefix="mutepro-soak-"))
    events_file = workdir / "events.jsonl"
    stderr_file = workdir / "stderr.log"
    events_stream = open(events_file, "w")  # noqa: SIM115 - closed in finally
    configure_logging("info", "json", stream=events_stream)
    # Everything written to fd 2 (librdkafka's logger, pybreaker's, Python's last-resort handler) goes to a file
    # that is searched for the password afterwards.
    saved_stderr = os.dup(2)
    stderr_fh = open(stderr_file, "wb")  # noqa: SIM115 - closed in finally
    os.dup2(stderr_fh.fileno(), 2)

    capacity = int(settings.rate_per_thread * settings.duration_s * 1.2) + 100
    ledger = Ledger(capacity)
    report: dict[str, Any] = {"seed": settings.seed, "schedule": json.loads(schedule_json(faults))}
    cluster = LocalCluster(ClusterSpec(brokers=3))
    redis = RedisServer(password)
    rss: list[tuple[float, float]] = []
    workloads: list[Workload] = []
    try:
        cluster.start()
        redis.start()
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        bad_topic = f"soak-{run_id}-small"
        create_topic(admin, bad_topic, partitions=2, replication_factor=3, config={"max.message.bytes": "4096"})
        for policy in POLICIES:
            for acks in ACKS:
                index = len(workloads)
                topic = _create_workload_topic(admin, run_id, policy, acks)
                policy_doc = {
                    "defaults": {"keyed_policy": policy},
                    "state": {"backend": "redis", "url": redis.url, "key_prefix": f"soak-{run_id}-{index}"},
                }
                conf = _client_conf(cluster.bootstrap_servers, acks)
                workloads.append(Workload(index, policy, acks, topic, MuteProducer(conf, policy=policy_doc)))
        # The control: the plain client, configured like hold/acks=all, same threads and bad messages, same faults.
        # What it does under the schedule (librdkafka's own duplicates, say) is not mutepro's doing.
        topic = _create_workload_topic(admin, run_id, "plain", "all")
        plain = Producer(_client_conf(cluster.bootstrap_servers, "all"))
        workloads.append(Workload(len(workloads), "plain", "all", topic, plain))
        t0 = time.monotonic()
        mutes = MuteLog(t0)
        for w in workloads:
            mutes.hook(w)
        stop_at = t0 + settings.duration_s
        missing = f"soak-{run_id}-does-not-exist"
        threads = [
            threading.Thread(
                target=_worker, args=(w, t, ledger, settings, stop_at, bad_topic, missing), daemon=True,
                name=f"soak-{w.label}-{t}",
            )
            for w in workloads
            for t in w.threads
        ]
        injector = Injector(cluster, redis, faults, t0, [w.topic for w in workloads])
        for t in threads:
            t.start()
        injector.start()
        while time.monotonic() < stop_at:
            rss.append((time.monotonic() - t0, _rss_mb()))
            time.sleep(1.0)  # a sampling period
        for t in threads:
            t.join(60)
        injector.stop()
        injector.join(150)
        unflushed = {}
        for w in workloads:
            unflushed[w.label] = w.producer.flush(60)
        for w in workloads:
            _close(w, 30)
        rss.append((time.monotonic() - t0, _rss_mb()))

        # -- the independent check ---------------------------------------------------------------------
        per_producer: dict[str, Any] = {}
        for w in workloads:
            read = read_back(cluster.bootstrap_servers, w.topic)
            figures = compare(ledger, w.index, w.threads, read)
            order = key_order(read)
            produced = sum(
                1 for t in w.threads for s in ledger.states(w.index, t) if s != 0
            )
            per_producer[w.label] = {
                "produced": produced,
                "in_kafka": read.records,
                **figures,
                "unreported": sum(ledger.states(w.index, t).count(ACCEPTED) for t in [*w.threads, BAD_THREAD]),
                "order_inversions": order.inversions,
                "first_copy_inversions": order.first_copy_inversions,
                "rewrites": order.rewrites,
                "left_home_partition": order.left_home,
                "inversion_examples": order.worst,
                "unflushed_at_close": unflushed[w.label],
            }
        report["producers"] = per_producer
        report["ledger"] = ledger.summary()
        report["failures"] = dict(ledger.failures.most_common())
        report["rejections"] = dict(ledger.rejections.most_common())
        report["first_seen_s"] = {reason: round(t - t0, 1) for reason, t in ledger.first_seen.items()}
        report["faults_applied"] = [f"{a:6.1f}-{b:6.1f}s {d}" for a, b, d in injector.timeline]
        report["fault_errors"] = injector.errors
        report["leader_moves"] = injector.leader_moves
        report["mutes"] = _classify_mutes(mutes.events, injector.timeline, bad_topic, settings)
        report["rss_mb"] = [(round(t, 1), round(m, 1)) for t, m in rss[:: max(1, len(rss) // 12)]] + [
            (round(rss[-1][0], 1), round(rss[-1][1], 1))
        ]
        quiet = [m for t, m in rss if t >= settings.duration_s - settings.quiet_s + 5]
        report["rss_quiet_growth_mb"] = round(quiet[-1] - quiet[0], 1) if len(quiet) >= 2 else 0.0
        report["rss_quiet_start_mb"] = round(quiet[0], 1) if quiet else 0.0
    finally:
        for w in workloads:  # a no-op for the closed ones; an early error must not leave clients behind
            with contextlib.suppress(Exception):
                _close(w, 5)
        # Drop the clients before the brokers go, so their librdkafka handles do not log disconnects to stderr.
        workloads.clear()
        gc.collect()
        os.dup2(saved_stderr, 2)
        os.close(saved_stderr)
        stderr_fh.close()
        reset_logging()  # before the stream goes: mutepro's events would be written to a closed file
        events_stream.close()
        cluster.stop()
        redis.close()

    leaks = []
    for path in (events_file, stderr_file):
        text = path.read_text(errors="replace")
        if password in text:
            leaks.append(f"{path.name}: {text.count(password)} lines")
    report["log_lines"] = {
        "events": sum(1 for _ in events_file.open()),
        "stderr": sum(1 for _ in stderr_file.open(errors="replace")),
    }
    report["secret_leaks"] = leaks
    report["warnings_by_event"] = _warning_counts(events_file)
    report["logs_kept_in"] = str(workdir)
    verdict = _verdict(report, settings)
    report["verdict"] = verdict
    text = _render(report)
    assert password not in text
    print(text)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report, indent=2, default=str))
    return 0 if verdict["pass"] else 1


def _classify_mutes(
    events: list[tuple[float, str, str, int, int | None, str]],
    timeline: list[tuple[float, float, str]],
    bad_topic: str,
    settings: Settings,
) -> dict[str, Any]:
    """Mutes during a fault (or within 15 s after one ended) vs in quiet periods (false mutes of healthy
    partitions), and mutes of the bad-message topic (application errors taken for ill health)."""
    grace = 15.0
    mutes = [e for e in events if e[5].startswith(("mute", "remute"))]
    during = quiet = on_bad = 0
    quiet_examples: list[str] = []
    reasons: Counter[str] = Counter()
    for t, label, topic, partition, broker, kind in mutes:
        reasons[kind] += 1
        if topic == bad_topic:
            on_bad += 1
            continue
        if any(start - 1 <= t <= end + grace for start, end, _ in timeline):
            during += 1
        else:
            quiet += 1
            if len(quiet_examples) < 5:
                quiet_examples.append(f"t+{t:.1f}s {label} {topic}[{partition}] leader {broker} {kind}")
    return {
        "total": len(mutes),
        "during_or_just_after_faults": during,
        "in_quiet_periods_false": quiet,
        "on_bad_message_topic_false": on_bad,
        "by_reason": dict(reasons.most_common()),
        "false_examples": quiet_examples,
    }


def _warning_counts(events_file: Path) -> dict[str, int]:
    counts: Counter[str] = Counter()
    with events_file.open() as fh:
        for line in fh:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("level") in ("warning", "error"):
                counts[str(event.get("event"))[:70]] += 1
    return dict(counts.most_common(10))


def _verdict(report: dict[str, Any], settings: Settings) -> dict[str, Any]:
    producers = {label: p for label, p in report["producers"].items() if label != CONTROL}
    lost_all = sum(p["lost"] for label, p in producers.items() if label.endswith("acks=all"))
    # The idempotent producer only (see the module docstring for why acks=1 is reported, not judged), and its
    # first copies only: librdkafka itself rewrites runs after an epoch bump (the control shows it too).
    inversions_hold = producers["hold/acks=all"]["first_copy_inversions"]
    unreported = sum(p["unreported"] for p in producers.values())
    growth = report["rss_quiet_growth_mb"]
    allowed = max(0.1 * report["rss_quiet_start_mb"], 32.0)
    checks = {
        "lost 0 (acks=all)": lost_all == 0,
        "every accepted message reported": unreported == 0,
        "0 order inversions under hold (idempotent, first copies)": inversions_hold == 0,
        f"RSS flat in the quiet period (growth {growth} MB <= {allowed:.0f} MB)": growth <= allowed,
        "no secret in any log line": not report["secret_leaks"],
    }
    return {"pass": all(checks.values()), "checks": checks}


def _render(report: dict[str, Any]) -> str:
    out = io.StringIO()
    w = out.write
    w(f"\n=== soak report (seed {report['seed']}) ===\n")
    w(f"faults applied ({len(report['faults_applied'])}; leader moves {report['leader_moves']}):\n")
    for line in report["faults_applied"]:
        w(f"  {line}\n")
    for line in report["fault_errors"]:
        w(f"  FAULT ERROR {line}\n")
    w("per producer:\n")
    cols = ("produced", "in_kafka", "lost", "duplicated", "failed_but_written", "order_inversions",
            "first_copy_inversions", "rewrites", "left_home_partition", "unflushed_at_close")
    w("  " + f"{'producer':<18}" + "".join(f"{c[:12]:>13}" for c in cols) + "\n")
    for label, p in report["producers"].items():
        w("  " + f"{label:<18}" + "".join(f"{p[c]:>13}" for c in cols) + "\n")
        for example in p["inversion_examples"]:
            w(f"      e.g. {example}\n")
    w(f"ledger: {report['ledger']}\n")
    w("failed (delivery reports), by reason:\n")
    seen = report["first_seen_s"]
    for reason, n in report["failures"].items():
        w(f"  {n:>7}  {reason}  (first at t+{seen.get(reason, 0):.1f}s)\n")
    w("rejected by produce(), by reason:\n")
    for reason, n in report["rejections"].items():
        w(f"  {n:>7}  {reason}  (first at t+{seen.get(reason, 0):.1f}s)\n")
    w(f"mutes: {json.dumps(report['mutes'])}\n")
    w(f"RSS MB over time (s, MB): {report['rss_mb']}\n")
    w(f"log lines: {report['log_lines']}; warnings by event: {report['warnings_by_event']}\n")
    w(f"secret leaks: {report['secret_leaks'] or 'none'} (logs kept in {report['logs_kept_in']})\n")
    w("verdict:\n")
    for name, ok in report["verdict"]["checks"].items():
        w(f"  {'PASS' if ok else 'FAIL'}  {name}\n")
    w(f"overall: {'PASS' if report['verdict']['pass'] else 'FAIL'}\n")
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help="75 s of load (CI), instead of 600 s")
    parser.add_argument("--duration", type=float, help="seconds of load (default 600, --short 75)")
    parser.add_argument("--quiet", type=float, help="fault-free seconds at the end (default 25%% of the load)")
    parser.add_argument("--seed", type=int, default=None, help="fault schedule seed (default: random, printed)")
    parser.add_argument("--rate", type=float, default=40.0, help="messages/s per producing thread (18 threads)")
    parser.add_argument("--bad-share", type=float, default=0.02, help="share of bad messages on unkeyed threads")
    parser.add_argument("--json", type=Path, default=None, help="write the report as JSON here")
    args = parser.parse_args(argv)
    duration = args.duration or (75.0 if args.short else 600.0)
    if not 20 <= duration <= 3600:
        parser.error("--duration: between 20 and 3600 seconds")
    quiet = args.quiet if args.quiet is not None else max(20.0, duration * 0.25)
    if not 10 <= quiet < duration:
        parser.error("--quiet: at least 10 s and below --duration")
    if not 1 <= args.rate <= 1000:
        parser.error("--rate: between 1 and 1000 messages/s per thread")
    if not 0 <= args.bad_share <= 0.5:
        parser.error("--bad-share: between 0 and 0.5")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 10**6)
    settings = Settings(duration, quiet, args.rate, 30, args.bad_share, seed)
    return run(settings, args.json)


if __name__ == "__main__":
    sys.exit(main())
