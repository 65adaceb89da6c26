"""The producer benchmark's load loops and figures, on a fake producer and a fake clock (no broker)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

from bench_load import DELIVERED, Recorder, open_loop
from bench_report import FaultWindow, mute_timing, per_second, summarize_run


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeMessage:
    _value: bytes
    _partition: int

    def value(self) -> bytes:
        return self._value

    def partition(self) -> int:
        return self._partition


class FakeProducer:
    """Delivers every message 10 ms after it is accepted; ``full`` makes produce() raise BufferError."""

    def __init__(self, clock: FakeClock, full: bool = False) -> None:
        self.clock = clock
        self.full = full
        self.pending: list[tuple[float, Any, bytes]] = []
        self.calls = 0

    def produce(self, topic: str, value: bytes, key: Any = None, on_delivery: Any = None) -> None:
        self.calls += 1
        if self.full:
            raise BufferError("Local: Queue full")
        self.pending.append((self.clock.now + 0.01, on_delivery, value))

    def poll(self, timeout: float = 0.0) -> int:
        self.clock.now += max(timeout, 0.0001)  # time passes only when the app waits
        due = [p for p in self.pending if p[0] <= self.clock.now]
        self.pending = [p for p in self.pending if p[0] > self.clock.now]
        for _, cb, value in due:
            cb(None, FakeMessage(value, int.from_bytes(value[:8], "big") % 12))
        return len(due)

    def flush(self, timeout: float = -1) -> int:
        self.poll(0.02)
        return len(self.pending)


@dataclass(frozen=True)
class Ev:
    kind: str
    partition: int
    at: float
    reason: str = "slow_call"


class TestOpenLoop:
    def test_offers_exactly_rate_times_seconds_and_all_are_delivered(self) -> None:
        """A healthy producer gets rate x seconds messages, each delivered once."""
        clock = FakeClock()
        rec = Recorder(1000, clock)
        res = open_loop(FakeProducer(clock), "t", rate=100, seconds=2.0, keyed=False, recorder=rec)
        assert (res.offered, res.accepted, res.rejected) == (200, 200, 0)
        assert rec.delivered == 200
        assert all(s == DELIVERED for s in rec.state[:200])

    def test_full_queue_is_bounded_retries_then_rejects(self) -> None:
        """A producer that always raises BufferError costs bounded retries and every message is rejected."""
        clock = FakeClock()
        rec = Recorder(1000, clock)
        producer = FakeProducer(clock, full=True)
        res = open_loop(producer, "t", rate=100, seconds=3.0, keyed=False, recorder=rec, max_lag_s=1.0)
        assert res.accepted == 0
        assert res.rejected == 300
        # one message at a time retries every 5 ms for up to 1 s: ~200 tries per second of the run, not 300 x 200
        assert res.buffer_errors < 300 * 5
        assert res.buffer_errors == producer.calls


class TestPerSecond:
    def test_buckets_by_whole_second(self) -> None:
        """Times fall into 1 s buckets; times outside [0, length) are ignored."""
        import numpy as np

        assert per_second(np.array([0.1, 0.9, 1.0, 2.5, -0.1, 3.2]), 3.0) == [2, 1, 1]


class TestSummarizeRun:
    def test_lost_counts_accepted_but_never_delivered(self) -> None:
        """lost = accepted - delivered; unreported = accepted without any report."""
        clock = FakeClock()
        rec = Recorder(1000, clock)
        producer = FakeProducer(clock)
        res = open_loop(producer, "t", rate=100, seconds=1.0, keyed=False, recorder=rec)
        rec.state[5] = 1  # pretend message 5 never got a report
        rec.delivered -= 1
        out = summarize_run(rec, res, fault=FaultWindow(0.2, 0.6, 2, (0, 4, 8)), warmup_s=0.0, rate=100)
        assert out["accepted"] == 100
        assert out["delivered"] == 99
        assert (out["lost"], out["unreported"]) == (1, 1)

    def test_during_over_before_for_an_unaffected_run_is_one(self) -> None:
        """A steady run delivers as much during the window as before it."""
        clock = FakeClock()
        rec = Recorder(2000, clock)
        res = open_loop(FakeProducer(clock), "t", rate=200, seconds=4.0, keyed=False, recorder=rec)
        out = summarize_run(rec, res, fault=FaultWindow(2.0, 3.0, 2, (0,)), warmup_s=1.0, rate=200)
        assert out["throughput"]["during_over_before"] == pytest.approx(1.0, abs=0.02)


class TestMuteTiming:
    def test_first_mute_and_last_unmute_of_faulted_partitions(self) -> None:
        """Mute time counts from fault start, unmute from fault end, other partitions are false alarms."""
        t0 = 1000.0
        fault = FaultWindow(20.0, 40.0, 2, (0, 4))
        events = [
            Ev("mute", 7, t0 + 5.0),  # before the fault
            Ev("unmute", 7, t0 + 6.0),
            Ev("mute", 4, t0 + 20.6),
            Ev("mute", 0, t0 + 20.7),
            Ev("mute", 9, t0 + 25.0),  # a healthy broker's partition
            Ev("probe", 0, t0 + 41.0),
            Ev("unmute", 0, t0 + 41.5),
            Ev("unmute", 4, t0 + 42.0),
        ]
        out = mute_timing(events, t0, fault)
        assert out["time_to_first_mute_s"] == pytest.approx(0.6)
        assert out["time_to_all_faulted_muted_s"] == pytest.approx(0.7)
        assert out["time_to_last_unmute_s"] == pytest.approx(2.0)
        assert (out["mutes_before_fault"], out["other_partition_mutes"]) == (1, 1)
        assert out["still_muted_at_end"] == [9]

    def test_unmuted_before_fault_end_counts_as_zero(self) -> None:
        """Partitions already writable again when the fault ends need no unmute: 0 s, not None."""
        events = [Ev("mute", 0, 1.2), Ev("unmute", 0, 1.6)]
        out = mute_timing(events, 0.0, FaultWindow(1.0, 2.0, 2, (0,)))
        assert out["muted_at_fault_end"] == []
        assert out["time_to_last_unmute_s"] == 0.0

    def test_still_muted_at_run_end_is_none(self) -> None:
        """A faulted partition never unmuted after the fault has no unmute time."""
        events = [Ev("mute", 0, 1.2), Ev("unmute", 0, 2.5), Ev("mute", 0, 2.8)]
        out = mute_timing(events, 0.0, FaultWindow(1.0, 2.0, 2, (0,)))
        assert out["time_to_last_unmute_s"] is None
        assert out["still_muted_at_end"] == [0]

    def test_no_mute_reports_none(self) -> None:
        """Without a mute of a faulted partition the times are None, not zero."""
        out = mute_timing([], 0.0, FaultWindow(1.0, 2.0, 2, (0,)))
        assert out["time_to_first_mute_s"] is None
        assert out["muted_faulted_partitions"] == []
