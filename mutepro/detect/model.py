"""The values detectors read and return: one delivery, one partition's load, one verdict."""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType


class MuteReason(StrEnum):
    """Why the built-in detectors (and a manual mute) mute a partition: :attr:`Verdict.reason`'s vocabulary.

    A ``str`` enum, so it compares equal to the plain name, logs and serialises as it (``"slow_call"``); a custom
    detector's verdict carries its own name instead.
    """

    FAILURE_RATE = "failure_rate"
    SLOW_CALL = "slow_call"
    CONGESTION = "congestion"
    BROKER = "broker"
    MANUAL = "manual"


@dataclass(frozen=True)
class Delivery:
    """One final delivery report of one message (after librdkafka's own retries).

    ``latency_s`` is produce() to delivery report; ``now`` is when the report was seen, on the caller's
    monotonic clock (the time windows bucket by it).
    """

    ok: bool
    latency_s: float
    now: float
    error_code: int | None = None
    retriable: bool = False


@dataclass(frozen=True)
class PartitionLoad:
    """What the producer's tracker knows about one partition right now."""

    outstanding: int  # produced to librdkafka, no delivery report yet
    outstanding_bytes: int
    oldest_age_s: float | None  # age of the oldest outstanding message, None if none
    buffer_max_messages: int  # queue.buffering.max.messages of the producer
    buffer_max_bytes: int  # queue.buffering.max.kbytes * 1024
    ages_s: Sequence[float] = ()  # ages of all outstanding messages, oldest first (descending)
    sent: int = 0  # messages ever handed to librdkafka for the partition (a counter: tells an active partition)
    warm: bool = False  # the partition has delivered a message: no longer cold (see SlowCallDetector.warm_up_s)

    def count_older_than(self, age_s: float) -> int:
        """How many outstanding messages are strictly older than ``age_s``: O(log n) bisection on ``ages_s``.

        ``ages_s`` is descending, so the messages older than the threshold form a prefix; bisecting on the
        negated ages finds its length. Without ``ages_s`` the tracker only knows the oldest message, which
        then counts as one (a stalled broker sends no reports, so the oldest age is the only signal there is).
        """
        if not self.ages_s:
            return 1 if self.oldest_age_s is not None and self.oldest_age_s > age_s else 0
        fast = getattr(self.ages_s, "count_older_than", None)  # the producer's lazy ages answer it directly
        if fast is not None:
            return int(fast(age_s))
        return bisect.bisect_left(self.ages_s, -age_s, key=lambda a: -a)


def _reason(name: str) -> str:
    """A built-in reason as its :class:`MuteReason` member, a custom detector's name as it is."""
    try:
        return MuteReason(name)
    except ValueError:
        return name


def _freeze(detail: Mapping[str, float | int | str]) -> Mapping[str, float | int | str]:
    return MappingProxyType(dict(detail))


@dataclass(frozen=True)
class Verdict:
    """Why a partition (or broker) should be muted, with the figures that tripped it.

    ``reason`` is a :class:`MuteReason` (``"failure_rate"``, ``"slow_call"``, ``"congestion"``, ``"broker"``,
    ``"manual"``) or a custom detector's name; ``detail`` holds the numbers, e.g. ``{"slow_call_rate": 0.93,
    "threshold_pct": 50, "calls": 41}``.
    """

    reason: str
    detail: Mapping[str, float | int | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "detail", _freeze(self.detail))

    def __hash__(self) -> int:
        # The detail is a read-only mapping of primitives, so a verdict can be hashed by value (sets, dict keys).
        return hash((self.reason, tuple(sorted(self.detail.items()))))

    def describe(self) -> str:
        """One human line: ``slow_call: slow_call_rate=0.93 threshold_pct=50 calls=41``."""
        if not self.detail:
            return self.reason
        parts = " ".join(f"{k}={_fmt(v)}" for k, v in self.detail.items())
        return f"{self.reason}: {parts}"

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form (used by the shared breaker store)."""
        return {"reason": str(self.reason), "detail": dict(self.detail)}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Verdict:
        """Inverse of :meth:`to_dict`."""
        detail = data.get("detail") or {}
        return cls(reason=_reason(str(data["reason"])), detail=dict(detail))  # type: ignore[call-overload]


def _fmt(value: float | int | str) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
