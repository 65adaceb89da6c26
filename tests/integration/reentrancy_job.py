"""A reentrancy / multi-thread job against a real cluster, run in its own process by the tests (and by the
sanitizer step of CI): a crash in the C fast path must fail a test, not end the test run.

    python tests/integration/reentrancy_job.py BOOTSTRAP TOPIC SCENARIO [--plain] [--messages N]

Scenarios:

- ``produce`` / ``poll`` / ``flush`` / ``len`` / ``raise``: the application produces N messages with a long
  ``linger.ms`` (so one poll serves thousands of reports) and then polls; every delivery callback does that
  action (``produce`` sends one follow-up message per report; ``raise`` raises from every 50th callback).
- ``stress``: four producing threads (keyed and unkeyed), two threads polling at once, a thread muting and
  unmuting partitions by hand, callbacks that sometimes produce and sometimes raise.

Prints one JSON line: produced, reports (per message id: how many), raised, and what was read back.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from collections import Counter
from typing import Any

from confluent_kafka import Consumer, Producer

from mutepro import MuteProducer


class Job:
    def __init__(self, producer: Any, topic: str) -> None:
        self.p = producer
        self.topic = topic
        self.lock = threading.Lock()
        self.produced: list[str] = []
        self.reports: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()
        self.raised = 0
        self.nested: Counter[str] = Counter()

    def send(self, mid: str, key: bytes | None = None, cb: Any = None, **kw: Any) -> None:
        while True:
            try:
                self.p.produce(self.topic, value=mid.encode(), key=key, on_delivery=cb or self.report, **kw)
                break
            except BufferError:
                try:
                    self.p.poll(0.05)
                except ValueError:
                    with self.lock:
                        self.raised += 1
        with self.lock:
            self.produced.append(mid)

    def report(self, err: Any, msg: Any) -> None:
        with self.lock:
            mid = msg.value().decode()
            self.reports[mid] += 1
            if err is not None:
                self.failed[mid] += 1

    def drain(self, deadline_s: float) -> None:
        """Poll until every produced message has its report (bounded)."""
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            try:
                self.p.poll(0.2)
                if self.p.flush(0) == 0 and len(self.reports) >= len(set(self.produced)):
                    return
            except ValueError:
                with self.lock:
                    self.raised += 1


def reentrant(job: Job, action: str, n: int) -> None:
    follow = 0

    def cb(err: Any, msg: Any) -> None:
        nonlocal follow
        job.report(err, msg)
        mid = msg.value().decode()
        if mid.startswith("f-"):
            return
        if action == "produce":
            follow += 1
            job.send(f"f-{follow}", cb=cb)
        elif action == "poll":
            job.nested["poll"] += 1
            job.p.poll(0)
        elif action == "flush":
            job.nested["flush"] += 1
            job.p.flush(0.1)
        elif action == "len":
            job.nested["len"] += len(job.p) >= 0
        elif action == "raise" and int(mid.split("-")[1]) % 50 == 0:
            raise ValueError(f"callback of {mid} raised")

    for i in range(n):
        job.send(f"m-{i}", cb=cb)
    job.drain(60)


def stress(job: Job, n: int, seed: int) -> None:
    rng = random.Random(seed)
    stop = threading.Event()
    md = job.p.list_topics(job.topic, timeout=10)
    partitions = sorted(md.topics[job.topic].partitions)
    counter = iter(range(10**9))
    counter_lock = threading.Lock()

    def next_id(prefix: str) -> str:
        with counter_lock:
            return f"{prefix}-{next(counter)}"

    def cb(err: Any, msg: Any) -> None:
        job.report(err, msg)
        mid = msg.value().decode()
        r = random.random()
        if r < 0.02 and not mid.startswith("f"):
            job.send(next_id("f"), cb=cb)  # a chained write from inside the callback
        elif r < 0.03:
            raise ValueError(f"callback of {mid} raised")

    def produce(t: int) -> None:
        for i in range(n):
            key = f"k{i % 40}".encode() if t % 2 else None
            job.send(next_id(f"t{t}"), key=key, cb=cb)
            if i % 500 == 0:
                try:
                    job.p.poll(0)
                except ValueError:  # a raising callback surfaces here, as with the plain client
                    with job.lock:
                        job.raised += 1

    def poller() -> None:
        while not stop.is_set():
            try:
                job.p.poll(0.05)
            except ValueError:
                with job.lock:
                    job.raised += 1

    def muter() -> None:
        manager = job.p.mute_manager if hasattr(job.p, "mute_manager") else None
        while manager is not None and not stop.wait(0.05):
            p = rng.choice(partitions)
            try:
                if manager.is_muted(job.topic, p):
                    manager.unmute(job.topic, p)
                elif len(manager.muted_partitions().get(job.topic, [])) < len(partitions) - 1:
                    manager.mute(job.topic, p, reason="stress")
            except Exception as err:  # unknown topic until metadata arrived: try again
                print(f"mute: {err!r}", file=sys.stderr)
        if manager is not None:
            for p in partitions:
                if manager.is_muted(job.topic, p):
                    manager.unmute(job.topic, p)

    producers = [threading.Thread(target=produce, args=(t,)) for t in range(4)]
    helpers = [threading.Thread(target=poller), threading.Thread(target=poller), threading.Thread(target=muter)]
    for th in producers + helpers:
        th.start()
    for th in producers:
        th.join(120)
    stop.set()
    for th in helpers:
        th.join(30)
    job.drain(90)


def read_back(bootstrap: str, topic: str, expected: int, deadline_s: float = 60) -> Counter[str]:
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"reentrancy-{time.time_ns()}", "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe([topic])
    seen: Counter[str] = Counter()
    end = time.monotonic() + deadline_s
    idle_until = None
    while time.monotonic() < end:
        msg = consumer.poll(0.5)
        if msg is None or msg.error():
            if sum(seen.values()) >= expected:
                idle_until = idle_until or time.monotonic() + 2  # a little longer: duplicates would show
                if time.monotonic() > idle_until:
                    break
            continue
        seen[msg.value().decode()] += 1
    consumer.close()
    return seen


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("bootstrap")
    ap.add_argument("topic")
    ap.add_argument("scenario", choices=["produce", "poll", "flush", "len", "raise", "stress"])
    ap.add_argument("--plain", action="store_true", help="confluent_kafka.Producer instead")
    ap.add_argument("--messages", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    conf = {"bootstrap.servers": args.bootstrap, "linger.ms": 1500 if args.scenario != "stress" else 5}
    producer: Any = Producer(conf) if args.plain else MuteProducer(conf)
    job = Job(producer, args.topic)
    if args.scenario == "stress":
        stress(job, args.messages, args.seed)
    else:
        reentrant(job, args.scenario, args.messages)
    left = -1
    for _ in range(100):  # a raising callback's exception surfaces from flush() too
        try:
            left = producer.flush(30)
            break
        except ValueError:
            job.raised += 1
    if hasattr(producer, "close"):
        producer.close()
    produced = Counter(job.produced)
    back = read_back(args.bootstrap, args.topic, len(produced))
    print(json.dumps({
        "produced": len(job.produced),
        "distinct_produced": len(produced),
        "reports": sum(job.reports.values()),
        "reported_ids": len(job.reports),
        "multi_reported": sum(1 for c in job.reports.values() if c > 1),
        "unreported": sum(1 for mid in produced if mid not in job.reports),
        "failed": sum(job.failed.values()),
        "raised": job.raised,
        "nested": dict(job.nested),
        "left": left,
        "read_back": sum(back.values()),
        "missing": sum(1 for mid in produced if mid not in back and not job.failed.get(mid)),
        "duplicated": sum(1 for c in back.values() if c > 1),
    }))


if __name__ == "__main__":
    main()
