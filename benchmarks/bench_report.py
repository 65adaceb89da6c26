"""Figures from one benchmark run: time series, window throughput, latency percentiles, loss, mute timing.

Pure functions over a :class:`~bench_load.Recorder` and a :class:`~bench_load.LoadResult`; every time is on
``time.monotonic()`` and reported in seconds relative to the run's start (``t0``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from bench_load import ACCEPTED, DELIVERED, FAILED, LoadResult, Recorder


@dataclass(frozen=True)
class FaultWindow:
    """When the fault was on, relative to the run's start (seconds), and which partitions it hit."""

    start_s: float
    end_s: float
    broker: int
    partitions: tuple[int, ...]


def _arrays(rec: Recorder, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    sent = np.frombuffer(rec.sent, dtype=np.float64)[:n]
    done = np.frombuffer(rec.done, dtype=np.float64)[:n]
    state = np.frombuffer(bytes(rec.state[:n]), dtype=np.uint8)
    part = np.frombuffer(bytes(rec.partition[:n]), dtype=np.uint8)
    return sent, done, state, part


def per_second(times_rel: np.ndarray, length_s: float) -> list[int]:
    """Counts per 1 s bucket from 0 to ``length_s`` (rounded up)."""
    buckets = max(1, int(np.ceil(length_s)))
    idx = np.floor(times_rel).astype(np.int64)
    idx = idx[(idx >= 0) & (idx < buckets)]
    return np.bincount(idx, minlength=buckets).astype(int).tolist()


def percentiles_ms(latencies_s: np.ndarray) -> dict[str, float | None]:
    if latencies_s.size == 0:
        return {"p50": None, "p99": None, "p999": None, "max": None, "count": 0}  # type: ignore[dict-item]
    q = np.percentile(latencies_s, [50, 99, 99.9]) * 1000.0
    return {
        "p50": round(float(q[0]), 1), "p99": round(float(q[1]), 1), "p999": round(float(q[2]), 1),
        "max": round(float(latencies_s.max()) * 1000.0, 1), "count": int(latencies_s.size),
    }


def summarize_run(
    rec: Recorder, res: LoadResult, *, fault: FaultWindow | None = None, warmup_s: float = 3.0,
    rate: float | None = None,
) -> dict[str, Any]:
    """The headline figures of one producer's run (described in benchmarks/README.md, "Measurements")."""
    n = res.offered
    sent, done, state, part = _arrays(rec, n)
    accepted_mask = state != 0
    delivered_mask = state == DELIVERED
    t0 = res.t0
    length = res.end - t0
    lat = (done - sent)[delivered_mask]
    out: dict[str, Any] = {
        "target_rate": rate,
        "load_s": round(res.load_end - t0, 2),
        "flush_s": round(res.flush_s, 2),
        "offered": n,
        "accepted": int(accepted_mask.sum()),
        "rejected_by_app": res.rejected,
        "rejected_skipped_late": res.skipped_late,
        "buffer_errors": res.buffer_errors,
        "messages_hit_buffer_error": res.messages_hit_buffer_error,
        "delivered": int(delivered_mask.sum()),
        "failed": int((state == FAILED).sum()),
        "failed_errors": dict(rec.failed_errors),
        "duplicates": rec.duplicates,
        "left_after_flush": res.left_after_flush,
    }
    # produced - delivered - failed: accepted messages without any final report after the bounded flush
    out["unreported"] = int((state == ACCEPTED).sum())
    # "lost": accepted by produce() but never delivered (failed or unreported) after the fault and the flush
    out["lost"] = out["accepted"] - out["delivered"]
    out["latency_ms"] = percentiles_ms(lat)
    out["series"] = {
        "delivered_per_s": per_second(done[delivered_mask] - t0, length),
        "accepted_per_s": per_second(sent[accepted_mask] - t0, length),
    }
    load_s = res.load_end - t0
    if fault is None:
        span = max(load_s - warmup_s, 1e-9)
        in_window = (done[delivered_mask] - t0 >= warmup_s) & (done[delivered_mask] - t0 < load_s)
        out["throughput"] = {"steady_msgs_s": round(float(in_window.sum()) / span, 1)}
        out["delivered_msgs_s"] = round(out["delivered"] / max(length, 1e-9), 1)
        return out
    rel_done = done[delivered_mask] - t0

    def rate_in(a: float, b: float) -> float:
        return float(((rel_done >= a) & (rel_done < b)).sum()) / max(b - a, 1e-9)

    before = rate_in(warmup_s, fault.start_s)
    during = rate_in(fault.start_s, fault.end_s)
    after = rate_in(fault.end_s, load_s)
    out["throughput"] = {
        "before_msgs_s": round(before, 1),
        "during_msgs_s": round(during, 1),
        "after_msgs_s": round(after, 1),
        "during_over_before": round(during / before, 3) if before else None,
        "after_over_before": round(after / before, 3) if before else None,
    }
    rel_sent = sent - t0
    in_fault = delivered_mask & (rel_sent >= fault.start_s) & (rel_sent < fault.end_s)
    out["latency_ms_sent_during_fault"] = percentiles_ms((done - sent)[in_fault])
    faulted = np.isin(part, np.array(fault.partitions, dtype=np.uint8))
    out["delivered_to_faulted_partitions"] = {
        "sent_during_fault": int((in_fault & faulted).sum()),
        "share_sent_during_fault": round(float((in_fault & faulted).sum()) / max(int(in_fault.sum()), 1), 3),
        "share_sent_before_fault": round(
            float((delivered_mask & faulted & (rel_sent < fault.start_s)).sum())
            / max(int((delivered_mask & (rel_sent < fault.start_s)).sum()), 1), 3,
        ),
    }
    return out


def mute_timing(events: Iterable[Any], t0: float, fault: FaultWindow) -> dict[str, Any]:
    """Time from fault start to the first mute of a faulted partition, and from fault end to the last unmute.

    ``time_to_last_unmute_s``: fault end -> last ``unmute`` of the faulted partitions muted at fault end (0.0 when
    none was; None when one is still muted at the end of the run).

    A *faulted* partition is one the faulted broker led when the run started. Mutes of other partitions are
    reported as ``other_partition_mutes`` (a false alarm, or the broker rule muting by leadership).
    """
    evs = sorted(events, key=lambda e: e.at)
    hit = set(fault.partitions)
    start, end = t0 + fault.start_s, t0 + fault.end_s
    first_mute: dict[int, float] = {}
    last_unmute: dict[int, float] = {}
    state: dict[int, bool] = {}
    before_fault = other = remutes = probes = 0
    for e in evs:
        muted = e.kind in ("mute", "remute")
        if muted or e.kind == "unmute":
            state[e.partition] = muted
        if e.kind == "probe":
            probes += 1
        if e.kind == "remute":
            remutes += 1
        if e.kind != "mute":
            if e.kind == "unmute" and e.partition in hit and e.at >= end:
                last_unmute[e.partition] = e.at
            continue
        if e.at < start:
            before_fault += 1
        elif e.partition in hit:
            first_mute.setdefault(e.partition, e.at)
        else:
            other += 1
    still_muted = sorted(p for p, m in state.items() if m)
    # Which faulted partitions were muted when the fault ended: only those have an unmute to wait for. If none
    # was (a limping broker's partitions can pass their probes during the fault), they were writable at once: 0 s.
    at_end: dict[int, bool] = {}
    for e in evs:
        if e.at < end and e.partition in hit and e.kind in ("mute", "remute", "unmute"):
            at_end[e.partition] = e.kind != "unmute"
    muted_at_end = sorted(p for p, m in at_end.items() if m)
    if not muted_at_end:
        unmute_s: float | None = 0.0
    elif any(p in still_muted for p in muted_at_end) or not last_unmute:
        unmute_s = None  # still muted when the run ended
    else:
        unmute_s = round(max(last_unmute.values()) - end, 3)
    out: dict[str, Any] = {
        "faulted_partitions": list(fault.partitions),
        "muted_faulted_partitions": sorted(first_mute),
        "time_to_first_mute_s": round(min(first_mute.values()) - start, 3) if first_mute else None,
        "time_to_all_faulted_muted_s": (
            round(max(first_mute.values()) - start, 3) if hit and set(first_mute) >= hit else None
        ),
        "muted_at_fault_end": muted_at_end,
        "time_to_last_unmute_s": unmute_s,
        "still_muted_at_end": still_muted,
        "mutes_before_fault": before_fault,
        "other_partition_mutes": other,
        "remutes": remutes,
        "probes": probes,
        "reasons": sorted({e.reason for e in evs if e.kind == "mute"}),
    }
    return out


def event_log(events: Iterable[Any], t0: float, limit: int = 600) -> list[dict[str, Any]]:
    """The MuteEvents as JSON rows with ``t`` relative to the run's start (first ``limit``)."""
    rows = []
    for e in sorted(events, key=lambda e: e.at)[:limit]:
        detail = {k: v for k, v in dict(e.detail).items() if isinstance(v, int | float | str | bool)}
        rows.append(
            {"t": round(e.at - t0, 3), "kind": e.kind, "partition": e.partition, "broker": e.broker,
             "reason": e.reason, "detail": detail}
        )
    return rows


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


def median(values: Sequence[float]) -> float:
    return float(np.median(np.array(values, dtype=np.float64))) if values else 0.0
