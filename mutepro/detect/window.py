"""Sliding windows over call outcomes, with resilience4j's two flavours.

* :class:`CountWindow` — the last ``size`` calls (resilience4j ``COUNT_BASED``): a ring buffer whose running
  totals are updated on every record, subtracting the outcome that falls out ("subtract on evict"), so both
  ``record`` and ``stats`` are O(1).
* :class:`TimeWindow` — the calls of the last ``size_s`` seconds (resilience4j ``TIME_BASED``), aggregated in
  ``buckets`` partial buckets (1 s each by default). Buckets are keyed by ``floor(now / width)``; the head
  bucket holds the current one, the others the ``buckets - 1`` before it. Moving the head forward clears the
  buckets it passes, so a record or a read costs O(1) amortised (at most ``buckets`` clears, however long the
  gap).

A window records a call as *failed* and/or *slow*; the detectors decide what those mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from mutepro.errors import ConfigError


@dataclass(frozen=True)
class WindowStats:
    """The aggregate of a window at one instant. Rates are fractions 0..1, and 0 when there were no calls."""

    calls: int
    failures: int
    slow_calls: int
    failure_rate: float
    slow_call_rate: float

    @classmethod
    def of(cls, calls: int, failures: int, slow_calls: int) -> WindowStats:
        """Build stats from raw counts, deriving the two rates (0 for an empty window)."""
        if calls <= 0:
            return cls(0, 0, 0, 0.0, 0.0)
        return cls(calls, failures, slow_calls, failures / calls, slow_calls / calls)



@runtime_checkable
class SlidingWindow(Protocol):
    """Where a detector keeps recent outcomes. ``now`` is seconds on the caller's (monotonic) clock."""

    def record(self, *, failed: bool, slow: bool, now: float) -> None: ...

    def record_many(self, calls: int, failures: int, slow: int, now: float) -> None: ...

    def stats(self, now: float) -> WindowStats: ...

    def reset(self) -> None: ...


#: Largest count window: one byte per call per partition and detector, so 100,000 calls is 100 KB each (a
#: thousand partitions with two detectors: 200 MB). resilience4j's default is 100; more only delays muting.
MAX_COUNT_WINDOW = 100_000
#: Longest time window, in seconds (and so buckets at 1 s each: three lists of ints, ~86 KB per partition).
#: An hour-long window would mute an hour after a broker went bad: useless for muting, costly in memory.
MAX_TIME_WINDOW_S = 3600

# Outcome bits stored per slot of the count window: one byte per call.
_FAILED = 1
_SLOW = 2


class CountWindow:
    """The last ``size`` calls (resilience4j COUNT_BASED): a ring buffer with running totals, O(1) record."""

    def __init__(self, size: int) -> None:
        if int(size) != size or size < 1:
            raise ConfigError(f"window size must be a whole number of calls >= 1, got {size!r}; use e.g. 100")
        if size > MAX_COUNT_WINDOW:
            # Checked before allocating: 10**13 would otherwise be a MemoryError inside the driver thread.
            raise ConfigError(
                f"window size: a count window holds at most {MAX_COUNT_WINDOW:,} calls, got {size!r}; use e.g. 100"
            )
        self.size = int(size)
        self._slots = bytearray(self.size)
        self._next = 0  # slot the next call is written to
        self._filled = 0
        self._failures = 0
        self._slow = 0

    def record(self, *, failed: bool, slow: bool, now: float = 0.0) -> None:
        """Add one call, evicting the oldest once ``size`` calls are held; ``now`` is ignored."""
        if self._filled == self.size:
            old = self._slots[self._next]
            self._failures -= old & _FAILED
            self._slow -= (old & _SLOW) >> 1
        else:
            self._filled += 1
        bits = (_FAILED if failed else 0) | (_SLOW if slow else 0)
        self._slots[self._next] = bits
        self._failures += bits & _FAILED
        self._slow += (bits & _SLOW) >> 1
        self._next = (self._next + 1) % self.size

    def record_many(self, calls: int, failures: int, slow: int, now: float = 0.0) -> None:
        """Add ``calls`` calls at once (``failures`` failed, ``slow`` slow; the failures and slow ones last).

        The producer tallies delivery reports between checks and folds them in here every tick (50 ms), so the
        per-message cost is one integer increment; the order of calls within one tick is not kept. Only the last
        ``size`` calls can matter, so this is O(min(calls, size)).
        """
        keep = min(calls, self.size)
        if keep <= 0:
            return
        failures = min(failures, keep)
        slow = min(slow, keep)
        both = min(failures, slow)
        only = max(failures, slow) - both
        new = (
            bytes(keep - both - only)
            + bytes((_FAILED | _SLOW,)) * both
            + bytes((_FAILED if failures > slow else _SLOW,)) * only
        )
        # Written as at most two slice assignments (the ring may wrap), the evicted outcomes counted with
        # bytes.count: a tick folding 1,000 reports into a 100-call window costs a few C calls, not 100
        # Python-level records (measured: 2.8 ms -> 0.3 ms of driver time per 50 ms tick at 150,000 msg/s).
        slots = self._slots
        start = self._next
        end = start + keep
        head = min(end, self.size) - start
        if self._filled == self.size:
            self._evict(slots[start : start + head])
        else:
            self._filled += head  # while filling, the slots from _next on are unused
        slots[start : start + head] = new[:head]
        if end > self.size:  # wrapped: the slots from 0 on are in use
            self._evict(slots[: end - self.size])
            slots[: end - self.size] = new[head:]
        self._failures += failures
        self._slow += slow
        self._next = end % self.size

    def _evict(self, old: bytes | bytearray) -> None:
        both = old.count(_FAILED | _SLOW)
        self._failures -= old.count(_FAILED) + both
        self._slow -= old.count(_SLOW) + both

    def stats(self, now: float = 0.0) -> WindowStats:
        """Totals over the calls held (at most ``size``)."""
        return WindowStats.of(self._filled, self._failures, self._slow)

    def reset(self) -> None:
        """Forget every call (used when a partition is unmuted: it starts with a fresh window)."""
        self._next = self._filled = self._failures = self._slow = 0
        # The slot contents need no clearing: a slot is only read once it has been overwritten again.

    def __repr__(self) -> str:
        return f"CountWindow(size={self.size}, {self.stats()})"


class TimeWindow:
    """The calls of the last ``size_s`` seconds (resilience4j TIME_BASED), in ``buckets`` partial aggregates.

    With ``size_s=10`` and the default 1 s buckets, a call recorded at t=100.4 sits in bucket 100 and stays
    counted while the head bucket is 100..109, i.e. until ``now`` reaches 110.0: a call is visible for between
    ``size_s - width`` and ``size_s`` seconds, exactly like resilience4j's epoch-second buckets.
    A call whose timestamp is older than the head (delivery reports can arrive with slightly earlier
    timestamps than a check that already ran) is added to its own bucket if that bucket is still in the
    window, and dropped otherwise.
    """

    def __init__(self, size_s: float, buckets: int | None = None) -> None:
        if not size_s > 0 or math.isinf(size_s):
            raise ConfigError(f"time window size_s must be a finite number of seconds > 0, got {size_s!r}")
        if size_s > MAX_TIME_WINDOW_S:
            raise ConfigError(
                f"window size: a time window spans at most {MAX_TIME_WINDOW_S} seconds, got {size_s!r}; use e.g. 10"
            )
        if buckets is None:
            buckets = max(1, math.ceil(size_s))  # 1 s buckets: 10 s -> 10 buckets, 0.5 s -> 1 bucket of 0.5 s
        if int(buckets) != buckets or buckets < 1 or buckets > MAX_TIME_WINDOW_S:
            raise ConfigError(
                f"time window buckets must be a whole number from 1 to {MAX_TIME_WINDOW_S}, got {buckets!r}"
            )
        self.size_s = float(size_s)
        self.buckets = int(buckets)
        self.width_s = self.size_s / self.buckets
        n = self.buckets
        self._calls = [0] * n
        self._failures = [0] * n
        self._slow = [0] * n
        self._head: int | None = None  # bucket number (floor(now / width)) of the newest bucket
        self._total_calls = self._total_failures = self._total_slow = 0

    def _bucket_of(self, now: float) -> int:
        return math.floor(now / self.width_s)

    def _advance(self, bucket: int) -> None:
        """Move the head to ``bucket``, clearing the buckets that leave the window (at most ``buckets``)."""
        if self._head is None:
            self._head = bucket
            return
        steps = bucket - self._head
        if steps <= 0:
            return
        n = self.buckets
        if steps >= n:
            self._clear_all()
        else:
            for b in range(self._head + 1, bucket + 1):
                self._clear_slot(b % n)
        self._head = bucket

    def _clear_slot(self, i: int) -> None:
        self._total_calls -= self._calls[i]
        self._total_failures -= self._failures[i]
        self._total_slow -= self._slow[i]
        self._calls[i] = self._failures[i] = self._slow[i] = 0

    def _clear_all(self) -> None:
        n = self.buckets
        self._calls = [0] * n
        self._failures = [0] * n
        self._slow = [0] * n
        self._total_calls = self._total_failures = self._total_slow = 0

    def record(self, *, failed: bool, slow: bool, now: float) -> None:
        """Add one call at time ``now`` to its bucket."""
        bucket = self._bucket_of(now)
        self._advance(bucket)
        assert self._head is not None
        if bucket <= self._head - self.buckets:
            return  # older than the whole window: it would have been evicted already
        i = bucket % self.buckets
        self._calls[i] += 1
        self._total_calls += 1
        if failed:
            self._failures[i] += 1
            self._total_failures += 1
        if slow:
            self._slow[i] += 1
            self._total_slow += 1

    def record_many(self, calls: int, failures: int, slow: int, now: float) -> None:
        """Add ``calls`` calls at time ``now`` to its bucket in one step (O(1))."""
        if calls <= 0:
            return
        bucket = self._bucket_of(now)
        self._advance(bucket)
        assert self._head is not None
        if bucket <= self._head - self.buckets:
            return
        i = bucket % self.buckets
        self._calls[i] += calls
        self._total_calls += calls
        self._failures[i] += failures
        self._total_failures += failures
        self._slow[i] += slow
        self._total_slow += slow

    def stats(self, now: float) -> WindowStats:
        """Totals over the buckets still inside the window at ``now`` (evicting the ones that left it)."""
        self._advance(self._bucket_of(now))
        return WindowStats.of(self._total_calls, self._total_failures, self._total_slow)

    def reset(self) -> None:
        """Forget every call."""
        self._clear_all()
        self._head = None

    def __repr__(self) -> str:
        return (
            f"TimeWindow(size_s={self.size_s}, buckets={self.buckets}, calls={self._total_calls}, "
            f"failures={self._total_failures}, slow={self._total_slow})"
        )


WINDOW_KINDS = ("count", "time")


def make_window(kind: str, size: float) -> SlidingWindow:
    """Build a window from configuration: ``"count"`` (size = calls) or ``"time"`` (size = seconds)."""
    if kind == "count":
        if not float(size).is_integer():
            raise ConfigError(f"count window size must be a whole number of calls, got {size!r}; e.g. 100")
        return CountWindow(int(size))
    if kind == "time":
        return TimeWindow(float(size))
    raise ConfigError(f"window kind must be one of {WINDOW_KINDS}, got {kind!r}; use 'count' or 'time'")


def effective_minimum_calls(window: SlidingWindow, minimum_calls: int) -> int:
    """The minimum number of calls before a rate counts, capped at a count window's size.

    resilience4j does the same (``min(minimumNumberOfCalls, slidingWindowSize)`` for COUNT_BASED): a window
    of 10 calls with a minimum of 100 could otherwise never trip.
    """
    if isinstance(window, CountWindow):
        return min(minimum_calls, window.size)
    return minimum_calls
