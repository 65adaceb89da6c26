"""Sliding windows: resilience4j COUNT_BASED and TIME_BASED semantics."""

from __future__ import annotations

import random

import pytest

from mutepro.detect.window import (
    CountWindow,
    SlidingWindow,
    TimeWindow,
    WindowStats,
    effective_minimum_calls,
    make_window,
)
from mutepro.errors import ConfigError


class TestWindowStats:
    def test_empty_has_zero_rates(self) -> None:
        """An empty window reports 0 rates instead of dividing by zero."""
        assert WindowStats.of(0, 0, 0) == WindowStats(0, 0, 0, 0.0, 0.0)

    def test_rates_are_fractions(self) -> None:
        """Rates are failures / calls and slow / calls."""
        s = WindowStats.of(4, 1, 3)
        assert (s.failure_rate, s.slow_call_rate) == (0.25, 0.75)


class TestCountWindow:
    def test_is_a_sliding_window(self) -> None:
        """CountWindow satisfies the SlidingWindow protocol."""
        assert isinstance(CountWindow(3), SlidingWindow)

    def test_counts_until_full(self) -> None:
        """Before the ring is full every call counts."""
        w = CountWindow(5)
        w.record(failed=True, slow=False, now=0)
        w.record(failed=False, slow=True, now=0)
        assert w.stats(0) == WindowStats.of(2, 1, 1)

    def test_evicts_oldest_when_full(self) -> None:
        """The (size+1)th call pushes out the first one, subtracting its outcome."""
        w = CountWindow(3)
        w.record(failed=True, slow=True, now=0)
        for _ in range(3):
            w.record(failed=False, slow=False, now=0)
        assert w.stats(0) == WindowStats.of(3, 0, 0)

    def test_ring_wraps_many_times(self) -> None:
        """After many wraps the totals equal the outcomes of the last `size` calls."""
        w = CountWindow(4)
        outcomes = [(i % 3 == 0, i % 5 == 0) for i in range(103)]
        for failed, slow in outcomes:
            w.record(failed=failed, slow=slow, now=0)
        last = outcomes[-4:]
        assert w.stats(0) == WindowStats.of(4, sum(f for f, _ in last), sum(s for _, s in last))

    def test_ignores_time(self) -> None:
        """A count window keeps calls however much time passes."""
        w = CountWindow(2)
        w.record(failed=True, slow=False, now=0)
        assert w.stats(1e9).calls == 1

    def test_reset_forgets(self) -> None:
        """reset() empties the window, and recording afterwards starts from zero."""
        w = CountWindow(2)
        w.record(failed=True, slow=True, now=0)
        w.record(failed=True, slow=True, now=0)
        w.reset()
        assert w.stats(0) == WindowStats.of(0, 0, 0)
        w.record(failed=False, slow=False, now=0)
        assert w.stats(0) == WindowStats.of(1, 0, 0)

    @pytest.mark.parametrize("size", [0, -1, 2.5])
    def test_rejects_bad_size(self, size: float) -> None:
        """Sizes that are not whole numbers >= 1 are configuration errors."""
        with pytest.raises(ConfigError, match="window size"):
            CountWindow(size)  # type: ignore[arg-type]


def _record_one_by_one(w: CountWindow, calls: int, failures: int, slow: int) -> None:
    """The reference for record_many: plain calls first, then both-failed-and-slow, then the rest."""
    keep = min(calls, w.size)
    failures, slow = min(failures, keep), min(slow, keep)
    plain = keep - max(failures, slow)
    for i in range(keep):
        j = i - plain
        w.record(failed=0 <= j < failures, slow=0 <= j < slow)


class TestCountWindowBulk:
    def test_record_many_equals_recording_one_by_one(self) -> None:
        """Random bulks (filling, wrapping, larger than the window) give the same totals as single records."""
        rng = random.Random(3)
        for size in (1, 3, 10, 100):
            bulk, single = CountWindow(size), CountWindow(size)
            for _ in range(300):
                calls = rng.choice([0, 1, 2, size - 1, size, size + 5, rng.randrange(0, 3 * size + 1)])
                failures, slow = rng.randrange(0, calls + 1), rng.randrange(0, calls + 1)
                bulk.record_many(calls, failures, slow)
                _record_one_by_one(single, calls, failures, slow)
                assert bulk.stats() == single.stats(), (size, calls, failures, slow)
                if rng.random() < 0.05:
                    bulk.reset()
                    single.reset()

    def test_record_many_keeps_only_the_last_size_calls(self) -> None:
        """1,000 calls with 600 failures in a 100-call window: the window holds 100 calls, all failed."""
        w = CountWindow(100)
        w.record_many(1000, 600, 0)
        assert w.stats() == WindowStats.of(100, 100, 0)


class TestTimeWindow:
    def test_is_a_sliding_window(self) -> None:
        """TimeWindow satisfies the SlidingWindow protocol."""
        assert isinstance(TimeWindow(10), SlidingWindow)

    def test_default_buckets_are_one_second(self) -> None:
        """10 s gives 10 buckets of 1 s; 0.5 s gives one bucket of 0.5 s."""
        assert (TimeWindow(10).buckets, TimeWindow(10).width_s) == (10, 1.0)
        assert (TimeWindow(0.5).buckets, TimeWindow(0.5).width_s) == (1, 0.5)

    def test_counts_calls_inside_window(self) -> None:
        """Calls of the last seconds are aggregated."""
        w = TimeWindow(10)
        w.record(failed=True, slow=False, now=100.0)
        w.record(failed=False, slow=True, now=105.5)
        assert w.stats(109.9) == WindowStats.of(2, 1, 1)

    def test_evicts_bucket_at_boundary(self) -> None:
        """A call at t=100.4 (bucket 100) is counted up to t<110 and gone at t=110."""
        w = TimeWindow(10)
        w.record(failed=True, slow=False, now=100.4)
        assert w.stats(109.99).calls == 1
        assert w.stats(110.0).calls == 0

    def test_partial_eviction_keeps_newer_buckets(self) -> None:
        """Only buckets that left the window are subtracted."""
        w = TimeWindow(5)
        for t in (0.0, 1.0, 2.0, 3.0, 4.0):
            w.record(failed=t < 2, slow=False, now=t)
        assert w.stats(6.5) == WindowStats.of(3, 0, 0)

    def test_long_gap_clears_everything(self) -> None:
        """A gap longer than the window evicts every bucket at once."""
        w = TimeWindow(3)
        for t in (0.0, 1.0, 2.0):
            w.record(failed=True, slow=True, now=t)
        w.record(failed=False, slow=False, now=1000.0)
        assert w.stats(1000.0) == WindowStats.of(1, 0, 0)

    def test_custom_bucket_count(self) -> None:
        """size_s / buckets sets the bucket width: 2 s in 4 buckets evicts in 0.5 s steps."""
        w = TimeWindow(2, buckets=4)
        w.record(failed=True, slow=False, now=0.1)
        w.record(failed=False, slow=False, now=0.6)
        assert w.stats(2.0).calls == 1  # bucket [0, 0.5) left, [0.5, 1.0) still in

    def test_late_call_in_window_is_counted(self) -> None:
        """A call stamped slightly before the head goes into its own bucket."""
        w = TimeWindow(10)
        w.stats(105.0)
        w.record(failed=True, slow=False, now=103.0)
        assert w.stats(112.5).calls == 1
        assert w.stats(113.0).calls == 0

    def test_call_older_than_window_is_dropped(self) -> None:
        """A call stamped before the whole window is ignored."""
        w = TimeWindow(10)
        w.stats(100.0)
        w.record(failed=True, slow=False, now=80.0)
        assert w.stats(100.0).calls == 0

    def test_reset_forgets(self) -> None:
        """reset() empties every bucket."""
        w = TimeWindow(10)
        w.record(failed=True, slow=True, now=1.0)
        w.reset()
        assert w.stats(1.0) == WindowStats.of(0, 0, 0)

    @pytest.mark.parametrize(("size", "buckets"), [(0, None), (-1, None), (float("inf"), None), (10, 0)])
    def test_rejects_bad_config(self, size: float, buckets: int | None) -> None:
        """Non-positive or infinite sizes and zero buckets are configuration errors."""
        with pytest.raises(ConfigError, match="time window"):
            TimeWindow(size, buckets)


class TestMakeWindow:
    def test_count(self) -> None:
        """kind 'count' builds a CountWindow of that many calls."""
        w = make_window("count", 50)
        assert isinstance(w, CountWindow) and w.size == 50

    def test_time(self) -> None:
        """kind 'time' builds a TimeWindow of that many seconds."""
        w = make_window("time", 30)
        assert isinstance(w, TimeWindow) and w.size_s == 30.0

    def test_unknown_kind(self) -> None:
        """Other kinds name the valid ones."""
        with pytest.raises(ConfigError, match="'count' or 'time'"):
            make_window("sliding", 10)


class TestEffectiveMinimumCalls:
    def test_count_window_caps_minimum(self) -> None:
        """resilience4j: min(minimumNumberOfCalls, size) for count windows."""
        assert effective_minimum_calls(CountWindow(10), 100) == 10

    def test_time_window_keeps_minimum(self) -> None:
        """Time windows use the minimum as configured."""
        assert effective_minimum_calls(TimeWindow(10), 100) == 100


class TestAbsurdSizesFromCode:
    """Windows built from code (not a policy) refuse sizes that would exhaust memory, before allocating."""

    def test_count_window_cap(self) -> None:
        """10**13 calls is a ConfigError naming the size, not a MemoryError."""
        with pytest.raises(ConfigError, match="window size"):
            CountWindow(10**13)

    def test_time_window_cap(self) -> None:
        """A day-long time window (86,400 buckets per partition) is refused."""
        with pytest.raises(ConfigError, match="window size"):
            TimeWindow(86_400)
        with pytest.raises(ConfigError, match="buckets"):
            TimeWindow(10, buckets=10**9)
