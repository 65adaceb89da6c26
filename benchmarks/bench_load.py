"""Load generators for the producer benchmark: a closed loop (capacity) and a rate-limited open loop (faults).

Both record, per message, when ``produce()`` accepted it and when its delivery callback ran, in flat arrays
indexed by a sequence number carried in the first 8 bytes of the value. The callback is the same function for
both producers, so whatever it costs is paid equally by each. Every loop is bounded in count and in time.
"""

from __future__ import annotations

import subprocess
import sys
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

VALUE_BYTES = 512
KEYS = 1000  # keyed runs cycle through this many distinct keys
_PAD = bytes(VALUE_BYTES - 8)
_KEYS = [f"key-{i:04d}".encode() for i in range(KEYS)]

#: States in :attr:`Recorder.state`.
NOT_SENT, ACCEPTED, DELIVERED, FAILED = 0, 1, 2, 3

Clock = Callable[[], float]
Tick = Callable[[float], None]  # progress: seconds elapsed in the phase


class Recorder:
    """Per-message send/delivery times for up to ``capacity`` messages (the bound of every loop)."""

    def __init__(self, capacity: int, clock: Clock = time.monotonic) -> None:
        self.capacity = capacity
        self.clock = clock
        self.sent = array("d", bytes(8 * capacity))  # produce() accepted at (clock)
        self.done = array("d", bytes(8 * capacity))  # first successful delivery callback at (clock)
        self.state = bytearray(capacity)
        self.partition = bytearray(b"\xff" * capacity)  # partition delivered to (255: none)
        self.duplicates = 0
        self.failed_errors: dict[str, int] = {}
        self.delivered = 0
        self.failed = 0

    def on_delivery(self, err: Any, msg: Any) -> None:
        """The delivery callback given to both producers."""
        now = self.clock()
        value = msg.value()
        if value is None or len(value) < 8:
            return  # a warm-up message
        seq = int.from_bytes(value[:8], "big")
        if seq >= self.capacity:
            return
        if err is None:
            if self.state[seq] == DELIVERED:
                self.duplicates += 1
                return
            self.state[seq] = DELIVERED
            self.done[seq] = now
            part = msg.partition()
            self.partition[seq] = part if 0 <= part < 255 else 255
            self.delivered += 1
        else:
            if self.state[seq] == ACCEPTED:
                self.state[seq] = FAILED
            self.failed += 1
            name = err.name() if hasattr(err, "name") else str(err)
            self.failed_errors[name] = self.failed_errors.get(name, 0) + 1


def value_for(seq: int) -> bytes:
    """A 512-byte value whose first 8 bytes are the sequence number."""
    return seq.to_bytes(8, "big") + _PAD


def key_for(seq: int) -> bytes:
    return _KEYS[seq % KEYS]


@dataclass
class LoadResult:
    """What a load loop did (the per-message detail stays in its :class:`Recorder`)."""

    t0: float
    load_end: float  # when the generator stopped offering messages
    end: float  # after the bounded flush
    offered: int  # messages scheduled (closed loop: attempted)
    accepted: int
    rejected: int  # given up by the app after BufferError retries (bounded), or skipped while blocked
    skipped_late: int  # of ``rejected``: already max_lag_s late when their turn came (the app was held up)
    buffer_errors: int  # BufferError exceptions seen by the app
    messages_hit_buffer_error: int
    left_after_flush: int
    flush_s: float
    events: list[Any] = field(default_factory=list)  # MuteEvents copied while the run went on


def closed_loop(
    producer: Any, topic: str, *, seconds: float, keyed: bool, recorder: Recorder, flush_timeout_s: float = 30.0,
    tick: Tick | None = None,
) -> LoadResult:
    """Produce as fast as ``produce()`` accepts for ``seconds`` (capacity), then flush (bounded)."""
    clock = recorder.clock
    cb = recorder.on_delivery
    produce, poll = producer.produce, producer.poll
    sent, state = recorder.sent, recorder.state
    cap = recorder.capacity
    n = errors = hit = 0
    t0 = clock()
    stop_at = t0 + seconds
    next_tick = t0 + 1.0
    while n < cap:
        key = _KEYS[n % KEYS] if keyed else None
        value = n.to_bytes(8, "big") + _PAD
        try:
            produce(topic, value, key, on_delivery=cb)
        except BufferError:
            errors += 1
            hit += 1
            poll(0.001)  # the queue is full: serve reports, try the next message
            now = clock()
            if now >= stop_at:
                break
            continue
        sent[n] = clock()
        state[n] = ACCEPTED
        n += 1
        if not n & 255:
            poll(0)
            now = clock()
            if now >= stop_at:
                break
            if tick is not None and now >= next_tick:
                next_tick = now + 1.0
                tick(now - t0)
    load_end = clock()
    left = producer.flush(flush_timeout_s)
    end = clock()
    return LoadResult(t0, load_end, end, n, n, 0, 0, errors, hit, left, end - load_end)


def open_loop(
    producer: Any, topic: str, *, rate: float, seconds: float, keyed: bool, recorder: Recorder,
    max_lag_s: float = 1.0, flush_timeout_s: float = 30.0, tick: Tick | None = None,
    events_of: Callable[[], list[Any]] | None = None,
) -> LoadResult:
    """Offer ``rate`` messages/s for ``seconds`` on a fixed schedule, whatever the producer does (open loop).

    Message ``n`` is due at ``t0 + n / rate``. On ``BufferError`` the app counts it, polls 5 ms and retries
    until the message is ``max_lag_s`` behind its schedule, then drops it (``rejected``); messages already that
    far behind when their turn comes are dropped without a try, so a blocked producer costs a bounded number of
    retries per second and the schedule never builds an unbounded backlog. A closed loop would slow down with
    the producer and hide a stall; here a stall shows as delivered messages missing from the time series.
    """
    clock = recorder.clock
    cb = recorder.on_delivery
    produce, poll = producer.produce, producer.poll
    sent, state = recorder.sent, recorder.state
    total = min(int(rate * seconds), recorder.capacity)
    n = accepted = rejected = skipped = errors = hit = 0
    events: list[Any] = []
    seen: set[int] = set()
    t0 = clock()
    next_tick = t0 + 1.0
    while n < total:
        now = clock()
        due = min(int((now - t0) * rate) + 1, total)
        if n >= due:
            poll(min(0.002, (n / rate) - (now - t0) + 1e-4))
            continue
        while n < due:
            sched = t0 + n / rate
            key = _KEYS[n % KEYS] if keyed else None
            if clock() - sched > max_lag_s:
                rejected += 1  # the app fell behind (blocked on BufferError, or held up): this one is dropped
                skipped += 1
                n += 1
                continue
            value = n.to_bytes(8, "big") + _PAD
            first = True
            while True:
                try:
                    produce(topic, value, key, on_delivery=cb)
                except BufferError:
                    errors += 1
                    if first:
                        hit += 1
                        first = False
                    poll(0.005)
                    if clock() - sched > max_lag_s:
                        rejected += 1
                        break
                    continue
                sent[n] = clock()
                state[n] = ACCEPTED
                accepted += 1
                break
            n += 1
            if not n & 127:
                poll(0)
        poll(0)
        now = clock()
        if now >= next_tick:
            next_tick = now + 1.0
            if events_of is not None:
                _collect(events_of(), events, seen)
            if tick is not None:
                tick(now - t0)
    load_end = clock()
    left = producer.flush(flush_timeout_s)
    end = clock()
    if events_of is not None:
        _collect(events_of(), events, seen)
    return LoadResult(
        t0, load_end, end, total, accepted, rejected, skipped, errors, hit, left, end - load_end, events
    )


def _collect(current: list[Any], into: list[Any], seen: set[int]) -> None:
    # MuteProducer keeps its last 1,000 events; copying them every second keeps the whole run's history.
    for ev in list(current):
        if id(ev) not in seen:
            seen.add(id(ev))
            into.append(ev)


class CpuLoad:
    """``n`` busy processes (a pure-Python spin each), bounded by ``max_s``; the same for both producers."""

    def __init__(self, n: int, max_s: float) -> None:
        self.n = n
        self.max_s = max_s
        self._procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> CpuLoad:
        spin = f"import time\nend=time.monotonic()+{self.max_s}\nwhile time.monotonic()<end: pass\n"
        self._procs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(self.n)]
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self._procs:
            p.kill()
        for p in self._procs:
            p.wait(10)
