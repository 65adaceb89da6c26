"""Shared builders of the detector tests: partition loads and deliveries."""

from __future__ import annotations

from mutepro.detect.model import Delivery, PartitionLoad
from mutepro.detect.protocols import PartitionDetector

IDLE = PartitionLoad(
    outstanding=0, outstanding_bytes=0, oldest_age_s=None, buffer_max_messages=100_000,
    buffer_max_bytes=1 << 30,
)  # fmt: skip


def load(ages: list[float] | None = None, **kw: int) -> PartitionLoad:
    """A partition load with the given outstanding message ages (oldest first)."""
    ages = ages or []
    base = {
        "outstanding": len(ages),
        "outstanding_bytes": 100 * len(ages),
        "buffer_max_messages": 100_000,
        "buffer_max_bytes": 1 << 30,
    }
    base.update(kw)
    return PartitionLoad(oldest_age_s=ages[0] if ages else None, ages_s=tuple(ages), **base)  # type: ignore[arg-type]


def feed(detector: PartitionDetector, n: int, *, ok: bool = True, latency_s: float = 0.01, now: float = 0.0) -> None:
    """Record n identical deliveries."""
    for _ in range(n):
        detector.record(Delivery(ok=ok, latency_s=latency_s, now=now))

