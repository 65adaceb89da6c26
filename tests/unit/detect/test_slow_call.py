"""The slow-call detector (mutepro.detect.slow_call)."""

from __future__ import annotations

import dataclasses

import pytest

from mutepro.detect.model import Delivery
from mutepro.detect.slow_call import SlowCallDetector
from mutepro.detect.window import CountWindow, SlidingWindow
from mutepro.errors import ConfigError
from tests.unit.detect._loads import IDLE, feed, load

#: slow_call.cold_start_ms's default, in seconds
WARM_UP_S = 5.0


def _detector(window: SlidingWindow, minimum_calls: int) -> SlowCallDetector:
    """Threshold 1 s, rate 50 %, the default cold start."""
    return SlowCallDetector(
        threshold_s=1.0, rate_threshold=0.5, window=window, minimum_calls=minimum_calls, warm_up_s=WARM_UP_S
    )


class TestSlowCallDetector:
    def test_latency_over_threshold_is_slow(self) -> None:
        """Deliveries slower than threshold_s count as slow; at 100 % it trips."""
        d = _detector(CountWindow(10), 4)
        feed(d, 4, latency_s=1.5)
        v = d.check(IDLE, 0)
        assert v is not None and v.reason == "slow_call" and v.detail["slow_call_rate"] == 1.0

    def test_latency_equal_to_threshold_is_not_slow(self) -> None:
        """Slow means strictly above the threshold (as resilience4j)."""
        d = _detector(CountWindow(10), 4)
        feed(d, 4, latency_s=1.0)
        assert d.check(IDLE, 0) is None

    def test_minimum_calls_not_reached(self) -> None:
        """Three slow calls with minimum four: no verdict yet."""
        d = _detector(CountWindow(10), 4)
        feed(d, 3, latency_s=5.0)
        assert d.check(IDLE, 0) is None

    def test_exactly_at_rate_threshold(self) -> None:
        """2 slow of 4 at rate 0.5 trips."""
        d = _detector(CountWindow(10), 4)
        feed(d, 2, latency_s=5.0)
        feed(d, 2, latency_s=0.1)
        assert d.check(IDLE, 0) is not None

    def test_stalled_partition_trips_without_reports(self) -> None:
        """No deliveries at all, but 5 messages older than the threshold: a stall verdict naming them."""
        d = SlowCallDetector(
            threshold_s=1.0, rate_threshold=0.5, window=CountWindow(100), minimum_calls=5, warm_up_s=0.0
        )
        v = d.check(load([4.0, 3.0, 2.5, 2.0, 1.5, 0.5]), 10.0)
        assert v is not None
        assert (v.detail["stalled"], v.detail["stuck"], v.detail["oldest_age_s"]) == (1, 5, 4.0)

    def test_cold_start_gets_the_warm_up_grace(self) -> None:
        """Before the first report ever, messages must wait warm_up_s (not just the threshold) to count as a stall."""
        d = _detector(CountWindow(100), 50)
        assert d.check(load([4.0, 3.0, 2.0]), 10.0) is None  # 4 s < 5 s warm-up: still connecting
        assert d.check(load([5.5, 3.0, 2.0]), 11.5) is not None

    def test_a_partition_that_delivered_is_not_cold(self) -> None:
        """load.warm (the producer saw the partition deliver, e.g. its unjudged first messages): no warm-up grace."""
        d = _detector(CountWindow(100), 50)
        v = d.check(dataclasses.replace(load([1.5, 1.2]), warm=True), 10.0)
        assert v is not None and v.detail["stalled"] == 1

    def test_cold_start_holds_the_rate_rule_too(self) -> None:
        """Before the first report, 1,954 messages 2 s old (enough for the rate rule) wait for warm-up as well."""
        d = _detector(CountWindow(100), 10)
        assert d.check(load([2.0] * 1954), 2.0) is None
        d.record(Delivery(ok=True, latency_s=2.1, now=2.1))
        assert d.check(load([2.1] * 1953), 2.1) is not None  # it reported: judged like any other

    def test_stall_is_not_diluted_by_fast_history(self) -> None:
        """100 fast calls, then nothing delivered for 1.5 s while 3 messages wait past 1 s: trips at once."""
        d = _detector(CountWindow(100), 5)
        for _ in range(100):
            d.record(Delivery(ok=True, latency_s=0.01, now=10.0))
        assert d.check(load([1.2, 1.1, 1.05]), 10.9) is None  # reports 0.9 s ago: progress, rate rule only
        v = d.check(load([1.7, 1.6, 1.55]), 11.5)
        assert v is not None and v.detail["no_report_for_s"] == 1.5

    def test_stuck_messages_add_to_window(self) -> None:
        """10 fast delivered + 10 stuck = 10 slow of 20 calls = 50 %: trips."""
        d = _detector(CountWindow(100), 5)
        feed(d, 10, latency_s=0.01)
        assert d.check(load([2.0] * 9), 0) is None  # 9 / 19 < 50 %
        assert d.check(load([2.0] * 10), 0) is not None

    def test_stuck_messages_are_not_recorded(self) -> None:
        """Checking with stuck messages leaves the window itself untouched (no double counting later)."""
        window = CountWindow(100)
        d = _detector(window, 5)
        d.check(load([5.0] * 10), 0)
        assert window.stats(0).calls == 0

    def test_young_outstanding_messages_do_not_count(self) -> None:
        """Outstanding messages younger than the threshold are not slow calls."""
        d = _detector(CountWindow(100), 1)
        assert d.check(load([0.9, 0.5]), 0) is None

    def test_reset_starts_fresh(self) -> None:
        """reset() forgets slow deliveries."""
        d = _detector(CountWindow(10), 1)
        feed(d, 5, latency_s=9.0)
        d.reset()
        assert d.check(IDLE, 0) is None

    def test_rejects_bad_threshold(self) -> None:
        """A non-positive latency threshold is a ConfigError naming the field."""
        with pytest.raises(ConfigError, match=r"slow_call\.threshold_s"):
            SlowCallDetector(0.0, 0.5, CountWindow(10), 1, WARM_UP_S)
