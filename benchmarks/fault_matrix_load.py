"""One producer run of the fault matrix, in a Python process of its own (as an application runs its one producer).

    python benchmarks/fault_matrix_load.py SPEC.json      # started by fault_matrix.py, never by hand

The parent (which owns the cluster and injects the faults) writes a spec, starts this process and waits for
``READY`` on its stdout: by then the producer exists, knows the topic and has delivered one message per
partition. The parent answers with the start time on stdin (``time.monotonic()``: CLOCK_MONOTONIC is the same
clock in every process of the machine, so the parent's fault times and this process's delivery times compare
directly). The load runs for ``seconds``, then a bounded flush; per message the send time, the delivery-report
time, the final state and the partition go into ``<out>.npz``, everything else into ``<out>.json``.

Both loops are the same code for both producers, and bounded in messages (``capacity``) and time.
"""

from __future__ import annotations

import inspect
import json
import logging
import sys
import time
from array import array
from pathlib import Path
from typing import Any

import numpy as np

NOT_SENT, ACCEPTED, DELIVERED, FAILED = 0, 1, 2, 3
KEYS = 1000  # keyed runs cycle through this many keys (as the other benchmarks)
_KEYS = [f"key-{i:04d}".encode() for i in range(KEYS)]


class Recording:
    """Per-message times and outcome for up to ``capacity`` messages (the loop's bound)."""

    def __init__(self, capacity: int, clock: Any = time.monotonic) -> None:
        self.capacity = capacity
        self.clock = clock
        self.sent = array("d", bytes(8 * capacity))
        self.done = array("d", bytes(8 * capacity))
        self.state = bytearray(capacity)
        self.partition = array("h", bytes(2 * capacity))
        self.duplicate_reports = 0
        self.failed_errors: dict[str, int] = {}

    def on_delivery(self, err: Any, msg: Any) -> None:
        """The delivery callback given to both producers."""
        value = msg.value()
        if value is None or len(value) < 8:
            return  # a warm-up message
        seq = int.from_bytes(value[:8], "big")
        if seq >= self.capacity:
            return
        if err is None:
            if self.state[seq] == DELIVERED:
                self.duplicate_reports += 1
                return
            self.state[seq] = DELIVERED
            self.done[seq] = self.clock()
            self.partition[seq] = msg.partition()
        else:
            if self.state[seq] == ACCEPTED:
                self.state[seq] = FAILED
            name = err.name() if hasattr(err, "name") else str(err)
            self.failed_errors[name] = self.failed_errors.get(name, 0) + 1


def closed_loop(
    producer: Any, topic: str, rec: Recording, *, stop_at: float, keyed: bool, pad: bytes, first: int = 0
) -> dict[str, int]:
    """As fast as produce() accepts until ``stop_at``, sequence numbers from ``first``; a BufferError costs a
    1 ms poll and the next try."""
    produce, poll, clock, cb = producer.produce, producer.poll, rec.clock, rec.on_delivery
    sent, state, cap = rec.sent, rec.state, rec.capacity
    n, errors = first, 0
    while n < cap:
        value = n.to_bytes(8, "big") + pad
        try:
            produce(topic, value, _KEYS[n % KEYS] if keyed else None, on_delivery=cb)
        except BufferError:
            errors += 1
            poll(0.001)
            if clock() >= stop_at:
                break
            continue
        sent[n] = clock()
        state[n] = ACCEPTED
        n += 1
        if not n & 255:
            poll(0)
            if clock() >= stop_at:
                break
    return {"offered": n, "buffer_errors": errors, "rejected": 0}


def open_loop(
    producer: Any,
    topic: str,
    rec: Recording,
    *,
    t0: float,
    rate: float,
    seconds: float,
    keyed: bool,
    pad: bytes,
    first: int = 0,
    max_lag_s: float = 1.0,
) -> dict[str, int]:
    """Message ``first + i`` is due at ``t0 + i / rate`` whatever the producer does. On BufferError the
    application polls 5 ms and retries until the message is ``max_lag_s`` late, then drops it (``rejected``); one
    already that late is dropped untried, so a blocked producer never builds an unbounded backlog (as bench_load)."""
    produce, poll, clock, cb = producer.produce, producer.poll, rec.clock, rec.on_delivery
    sent, state = rec.sent, rec.state
    total = max(0, min(int(rate * seconds), rec.capacity - first))
    i = rejected = errors = 0
    while i < total:
        now = clock()
        due = min(int((now - t0) * rate) + 1, total)
        if i >= due:
            poll(min(0.002, max(0.0, t0 + i / rate - now)))
            continue
        while i < due:
            sched = t0 + i / rate
            n = first + i
            i += 1
            if clock() - sched > max_lag_s:
                rejected += 1
                continue
            value = n.to_bytes(8, "big") + pad
            key = _KEYS[n % KEYS] if keyed else None
            while True:
                try:
                    produce(topic, value, key, on_delivery=cb)
                except BufferError:
                    errors += 1
                    poll(0.005)
                    if clock() - sched > max_lag_s:
                        rejected += 1
                        break
                    continue
                sent[n] = clock()
                state[n] = ACCEPTED
                break
            if not i & 127:
                poll(0)
        poll(0)
    return {"offered": first + i, "buffer_errors": errors, "rejected": rejected}


def muted(events: list[tuple[float, str, int, int | None, str]]) -> bool:
    """Whether a partition is muted (or half-open) after these events."""
    last: dict[int, str] = {}
    for _, kind, partition, _, _ in list(events):
        last[partition] = kind
    return any(kind in ("mute", "remute", "probe") for kind in last.values())


def make_producer(spec: dict[str, Any]) -> tuple[Any, bool]:
    """The plain client or a default-policy MuteProducer (with a trace file when this mutepro can write one)."""
    conf = {"bootstrap.servers": spec["bootstrap"], **spec["client"]}
    if spec["kind"] == "plain":
        import confluent_kafka

        return confluent_kafka.Producer(conf), False
    from mutepro.producer.producer import MuteProducer

    traced = bool(spec.get("trace")) and "trace" in inspect.signature(MuteProducer.__init__).parameters
    if traced:
        Path(spec["trace"]).parent.mkdir(parents=True, exist_ok=True)
        return MuteProducer(conf, trace=spec["trace"]), True
    return MuteProducer(conf), False


def listen(producer: Any, into: list[tuple[float, str, int, int | None, str]]) -> None:
    """Keep every mute decision (the manager's own history keeps only its last 1,000)."""

    def on_event(e: Any) -> None:
        into.append((float(e.at), str(e.kind), int(e.partition), e.broker, str(e.reason)))

    add = getattr(producer, "add_event_listener", None) or producer.mute_manager.add_event_listener
    add(on_event)


def warm(producer: Any, topic: str, partitions: int, timeout_s: float = 30.0) -> None:
    """Metadata loaded and a connection to every leader before the clock starts (bounded)."""
    if hasattr(producer, "wait_for_topic"):
        producer.wait_for_topic(topic, timeout_s)
    else:
        producer.list_topics(topic, timeout=timeout_s)
    for p in range(partitions):
        producer.produce(topic, b"warmup", partition=p)
    producer.flush(timeout_s)


def run(spec: dict[str, Any]) -> int:
    logging.getLogger("mutepro").setLevel(logging.ERROR)  # mutes are logged at WARNING: the events are kept here
    producer, traced = make_producer(spec)
    events: list[tuple[float, str, int, int | None, str]] = []
    if spec["kind"] == "mute":
        listen(producer, events)
    warm(producer, spec["topic"], spec["partitions"])
    rec = Recording(spec["capacity"])
    pad = bytes(spec["value_bytes"] - 8)
    print("READY", flush=True)
    line = sys.stdin.readline()
    t0 = float(line)
    time.sleep(max(0.0, t0 - time.monotonic()))  # the parent's start time: the faults are scheduled from it
    started = time.monotonic()
    topic, keyed, rate = spec["topic"], spec["keyed"], spec["rate"]
    if spec["load"] == "closed":
        res = closed_loop(producer, topic, rec, stop_at=t0 + spec["seconds"], keyed=keyed, pad=pad)
    else:
        res = open_loop(producer, topic, rec, t0=t0, rate=rate, seconds=spec["seconds"], keyed=keyed, pad=pad)
    load_end = time.monotonic()
    # The tail: while a partition is still muted, the same load goes on (unmeasured) for up to tail_s, so that
    # "unmuted N s after the fault" is a figure rather than "still muted when the run ended". A muted partition
    # is let go on probe results, and probes need traffic.
    tail_end = load_end + spec.get("tail_s", 0.0)
    while spec["kind"] == "mute" and muted(events) and time.monotonic() < tail_end and res["offered"] < rec.capacity:
        now = time.monotonic()
        if spec["load"] == "closed":
            more = closed_loop(producer, topic, rec, stop_at=now + 0.5, keyed=keyed, pad=pad, first=res["offered"])
        else:
            more = open_loop(producer, topic, rec, t0=now, rate=rate, seconds=0.5, keyed=keyed, pad=pad,
                             first=res["offered"])  # fmt: skip
        res = {k: (more[k] if k == "offered" else res[k] + more[k]) for k in res}
    tail_s = time.monotonic() - load_end
    left = producer.flush(spec["flush_s"])
    end = time.monotonic()
    counters: dict[str, int] = {}
    if spec["kind"] == "mute":
        counters = dict(producer.counters.as_dict())
        producer.close(10)
    n = res["offered"]
    out = Path(spec["out"])
    np.savez(
        out.with_suffix(".npz"),
        sent=np.frombuffer(rec.sent, dtype=np.float64)[:n],
        done=np.frombuffer(rec.done, dtype=np.float64)[:n],
        state=np.frombuffer(bytes(rec.state[:n]), dtype=np.uint8),
        partition=np.frombuffer(rec.partition, dtype=np.int16)[:n],
    )
    meta = {
        **res,
        "tail_s": round(tail_s, 3),
        "t0": t0,
        "started_late_s": round(started - t0, 4),
        "load_end": load_end,
        "end": end,
        "left_after_flush": left,
        "counters": counters,
        "events": events,
        "traced": traced,
        "duplicate_reports": rec.duplicate_reports,
        "failed_errors": rec.failed_errors,
        "capped": n >= spec["capacity"],
    }
    out.with_suffix(".json").write_text(json.dumps(meta))
    return 0


if __name__ == "__main__":
    sys.exit(run(json.loads(Path(sys.argv[1]).read_text())))
