"""The failure-rate detector (mutepro.detect.failure_rate)."""

from __future__ import annotations

import pytest

from mutepro.detect.failure_rate import FailureRateDetector
from mutepro.detect.window import CountWindow, TimeWindow
from mutepro.errors import ConfigError
from tests.unit.detect._loads import IDLE, feed


class TestFailureRateDetector:
    def test_below_minimum_calls_never_trips(self) -> None:
        """All-failed but fewer calls than the minimum: no verdict."""
        d = FailureRateDetector(CountWindow(100), minimum_calls=20, threshold=0.5)
        feed(d, 19, ok=False)
        assert d.check(IDLE, 0) is None

    def test_trips_exactly_at_threshold(self) -> None:
        """failure_rate == threshold trips (resilience4j compares with >=)."""
        d = FailureRateDetector(CountWindow(100), minimum_calls=20, threshold=0.5)
        feed(d, 10, ok=False)
        feed(d, 10, ok=True)
        v = d.check(IDLE, 0)
        assert v is not None and v.reason == "failure_rate"
        assert (v.detail["failure_rate"], v.detail["calls"], v.detail["threshold_pct"]) == (0.5, 20, 50.0)

    def test_just_below_threshold(self) -> None:
        """9 failures in 20 calls is 45 % < 50 %: no verdict."""
        d = FailureRateDetector(CountWindow(100), minimum_calls=20, threshold=0.5)
        feed(d, 9, ok=False)
        feed(d, 11, ok=True)
        assert d.check(IDLE, 0) is None

    def test_minimum_capped_by_count_window(self) -> None:
        """A 10-call window with minimum 100 still trips after 10 calls."""
        d = FailureRateDetector(CountWindow(10), minimum_calls=100, threshold=0.5)
        feed(d, 10, ok=False)
        assert d.check(IDLE, 0) is not None

    def test_time_window_eviction_clears_verdict(self) -> None:
        """Failures that age out of a time window no longer count."""
        d = FailureRateDetector(TimeWindow(10), minimum_calls=5, threshold=0.5)
        feed(d, 5, ok=False, now=0.0)
        assert d.check(IDLE, 9.0) is not None
        assert d.check(IDLE, 10.0) is None

    def test_reset_starts_fresh(self) -> None:
        """reset() (on unmute) forgets the failures."""
        d = FailureRateDetector(CountWindow(10), minimum_calls=5, threshold=0.5)
        feed(d, 10, ok=False)
        d.reset()
        assert d.check(IDLE, 0) is None

    @pytest.mark.parametrize(("minimum", "threshold"), [(0, 0.5), (5, 0.0), (5, 1.5)])
    def test_rejects_bad_config(self, minimum: int, threshold: float) -> None:
        """Zero minimum or a threshold outside (0, 1] is a ConfigError naming the field."""
        with pytest.raises(ConfigError, match="failure_rate"):
            FailureRateDetector(CountWindow(10), minimum, threshold)
