"""What the demo records about each job, and the figures computed from it (pure functions, unit-tested).

Recorded per job, on one timeline (seconds since both jobs started):

- ``delivered``: rows Kafka appended per second, read back by a plain consumer (the topics use LogAppendTime,
  so the second is the broker's, the same for both jobs whatever Spark reports);
- ``latency_ms``: per second, each row's delay from the rate source's timestamp to Kafka's append time;
- ``batches``: every micro-batch (start, duration, rows) from the query's progress;
- ``events``: mute/unmute decisions of the mute-aware job's producers, query failures and restarts;
- ``muted``: after each micro-batch, how many partitions the producers that wrote it had muted;
- the read-back tallies: committed rows (sum of the committed batches), distinct rows, duplicates, lost.
"""

from __future__ import annotations

import math
import statistics
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mutepro.demo.schedule import FaultPlan

MUTE_KINDS = ("mute", "remute")
#: The first stretch of *before* is left out of the baseline: the backlog of the warm-up is still draining.
_WARMUP_FRACTION = 0.2
_WARMUP_MAX_S = 5.0


@dataclass(frozen=True)
class BatchSample:
    """One micro-batch: when its trigger started (s), how long it took (s), rows it carried."""

    batch_id: int
    start_s: float
    seconds: float
    rows: int


@dataclass(frozen=True)
class Event:
    """Something that happened to a job: ``mute``/``remute``/``unmute`` (``where`` = "topic:partition",
    ``who`` = the worker producer), ``failed`` (``where`` = the error) or ``restarted``."""

    at_s: float
    kind: str
    where: str = ""
    who: str = ""


@dataclass
class JobSamples:
    """Everything recorded about one job."""

    name: str
    delivered: dict[int, int] = field(default_factory=dict)
    latency_ms: dict[int, array[float]] = field(default_factory=dict)
    batches: list[BatchSample] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    muted: list[tuple[float, int]] = field(default_factory=list)  # (time, partitions muted) after each batch
    committed: int = 0
    read_back: int = 0
    distinct: int = 0
    lost: int = 0

    @property
    def duplicates(self) -> int:
        return self.read_back - self.distinct

    def add_delivery(self, second: int, latency_ms: float) -> None:
        self.delivered[second] = self.delivered.get(second, 0) + 1
        bucket = self.latency_ms.get(second)
        if bucket is None:
            bucket = self.latency_ms[second] = array("f")
        bucket.append(latency_ms)


def baseline_start(plan: FaultPlan) -> float:
    """Where the healthy baseline starts: after the warm-up part of *before*."""
    before = plan.phases[0]
    return before.start_s + min(_WARMUP_MAX_S, before.seconds * _WARMUP_FRACTION)


def windows(plan: FaultPlan) -> dict[str, tuple[float, float]]:
    """The stretches figures are given for: each phase (*before* without its warm-up), and *fault* as a whole
    (the same as its one phase unless the fault is limp then stall)."""
    out = {p.name: (p.start_s, p.end_s) for p in plan.phases}
    out["before"] = (baseline_start(plan), out["before"][1])
    out["fault"] = plan.window
    return out


def rate(delivered: dict[int, int], start_s: float, end_s: float) -> float | None:
    """Rows per second over the whole seconds inside ``[start_s, end_s)``; None for a window under 1 s."""
    first, last = math.ceil(start_s), math.floor(end_s)
    if last <= first:
        return None
    return sum(delivered.get(s, 0) for s in range(first, last)) / (last - first)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1, nearest rank) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))])


def latencies(samples: JobSamples, start_s: float, end_s: float) -> list[float]:
    """Latencies (ms) of the rows delivered in the whole seconds of ``[start_s, end_s)``."""
    out: list[float] = []
    for s in range(math.ceil(start_s), math.floor(end_s)):
        out.extend(samples.latency_ms.get(s, ()))
    return out


def batch_stats(batches: Iterable[BatchSample], start_s: float, end_s: float) -> dict[str, float | None]:
    """Median and longest duration (s) of the batches that started in ``[start_s, end_s)``."""
    durations = [b.seconds for b in batches if start_s <= b.start_s < end_s]
    return {
        "median": round(statistics.median(durations), 2) if durations else None,
        "max": round(max(durations), 2) if durations else None,
        "count": len(durations),
    }


def muted_steps(observations: Iterable[tuple[float, int]]) -> list[tuple[float, int]]:
    """Steps of "partitions the job's writing producers have muted": (time, count) at each change, from 0 s.

    Observed per micro-batch (the producers that wrote it, at its end), not replayed from mute events: a
    Python worker that gets no more tasks never reports its unmutes, and its stale mutes no longer matter.
    """
    steps: list[tuple[float, int]] = [(0.0, 0)]
    for at, count in sorted(observations):
        if at < 0:  # during the warm-up: the state the timeline starts in
            steps[0] = (0.0, count)
        elif count != steps[-1][1]:
            steps.append((at, count))
    return steps


def time_to_mute(events: Iterable[Event], plan: FaultPlan) -> tuple[float, str] | None:
    """The first mute at or after the fault's start: (seconds after the start of the fault phase it happened
    in, that phase); None if nothing was muted. A limping broker may go unmuted and the stall after it muted:
    the time counts from the stall."""
    start, _ = plan.window
    mutes = [e.at_s for e in events if e.kind in MUTE_KINDS and e.at_s >= start]
    if not mutes:
        return None
    first = min(mutes)
    phase = next(
        (p for p in reversed(plan.phases) if p.start_s <= first and p.name not in ("before", "after")),
        plan.phases[1],
    )
    return round(first - phase.start_s, 2), phase.name


def time_to_unmute(steps: Sequence[tuple[float, int]], fault_end_s: float) -> float | None:
    """Seconds from the fault's end until no partition is muted any more (0 if none was muted then);
    None if some partition was still muted when the run ended. ``steps`` as from :func:`muted_steps`."""
    muted_at_end = 0
    for at, count in steps:
        if at <= fault_end_s:
            muted_at_end = count
    if muted_at_end == 0:
        return 0.0
    for at, count in steps:
        if at > fault_end_s and count == 0:
            return round(at - fault_end_s, 2)
    return None


def smoothed(delivered: dict[int, int], duration_s: float, width: int = 3) -> list[float]:
    """Rows/s for every second of the run, averaged over ``width`` seconds centred on it.

    One-second buckets of 1 s micro-batches alternate between a batch and none; the average shows the rate.
    """
    n = int(duration_s)
    raw = [delivered.get(s, 0) for s in range(n)]
    half = width // 2
    out = []
    for s in range(n):
        chunk = raw[max(0, s - half): s + half + 1]
        out.append(sum(chunk) / len(chunk))
    return out


@dataclass(frozen=True)
class JobSummary:
    """The table's figures for one job."""

    name: str
    rows_per_s: dict[str, float | None]
    fault_vs_before: float | None
    batch_seconds: dict[str, dict[str, float | None]]
    p99_ms: dict[str, float | None]
    committed: int
    read_back: int
    lost: int
    duplicates: int
    mutes: int
    mutes_before_fault: int
    time_to_mute_s: float | None  # after the start of the fault phase named by ``muted_in``
    muted_in: str | None
    time_to_unmute_s: float | None
    failures: int

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def summarize(samples: JobSamples, plan: FaultPlan) -> JobSummary:
    """Rates, batch durations and p99 latency per window, losses, duplicates and mute timings of one job."""
    spans = windows(plan)
    rates = {name: _round(rate(samples.delivered, a, b)) for name, (a, b) in spans.items()}
    fault_start, fault_end = plan.window
    during = rate(samples.delivered, fault_start, fault_end)
    before = rates["before"]
    p99 = {name: _round(percentile(latencies(samples, a, b), 0.99)) for name, (a, b) in spans.items()}
    p99["all"] = _round(percentile(latencies(samples, 0, plan.duration_s), 0.99))
    mutes = [e for e in samples.events if e.kind in MUTE_KINDS]
    muted = time_to_mute(samples.events, plan)
    return JobSummary(
        name=samples.name,
        rows_per_s=rates,
        fault_vs_before=round(during / before, 2) if during is not None and before else None,
        batch_seconds={name: batch_stats(samples.batches, a, b) for name, (a, b) in spans.items()},
        p99_ms=p99,
        committed=samples.committed,
        read_back=samples.read_back,
        lost=samples.lost,
        duplicates=samples.duplicates,
        mutes=len(mutes),
        mutes_before_fault=sum(1 for e in mutes if e.at_s < fault_start),
        time_to_mute_s=None if muted is None else muted[0],
        muted_in=None if muted is None else muted[1],
        time_to_unmute_s=time_to_unmute(muted_steps(samples.muted), fault_end),
        failures=sum(1 for e in samples.events if e.kind == "failed"),
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
