"""KIP-693's failure-rate trigger over a sliding window, with resilience4j's minimum-calls semantics."""

from __future__ import annotations

from mutepro.detect.model import Delivery, MuteReason, PartitionLoad, Verdict
from mutepro.detect.window import SlidingWindow, effective_minimum_calls
from mutepro.errors import ConfigError


def check_rate(name: str, value: float) -> float:
    """Validate a 0..1 threshold: 0 would trip on the first call, so it must be in (0, 1]."""
    if not 0.0 < value <= 1.0:
        raise ConfigError(f"{name} must be a fraction in (0, 1], got {value!r}; e.g. 0.5 for 50 %")
    return float(value)


def check_minimum(name: str, value: int) -> int:
    """Validate a minimum call / message count (a whole number >= 1)."""
    if int(value) != value or value < 1:
        raise ConfigError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


class FailureRateDetector:
    """Trips when ``calls >= minimum_calls`` and ``failure_rate >= threshold`` (resilience4j compares with
    >=).

    Every final error counts as a failure, timeouts included: by the time a report is final librdkafka has
    already retried what it could. KIP-693's ``trigger.message.count`` is ``minimum_calls`` and its
    ``trigger.failure.perc`` is ``threshold * 100``. Example: window of 100, minimum 20, threshold 0.5 —
    after 20 calls with 10 failures the rate is exactly 0.5 and the detector trips; with 19 calls it cannot
    trip yet.
    """

    name: str = MuteReason.FAILURE_RATE

    def __init__(self, window: SlidingWindow, minimum_calls: int, threshold: float) -> None:
        self.window = window
        self.minimum_calls = check_minimum("failure_rate.minimum_calls", minimum_calls)
        self.threshold = check_rate("failure_rate.threshold", threshold)
        self._minimum = effective_minimum_calls(window, self.minimum_calls)

    def record(self, delivery: Delivery) -> None:
        """Count one final report: failed = not ok."""
        self.window.record(failed=not delivery.ok, slow=False, now=delivery.now)

    def record_many(self, calls: int, failures: int, slow: int, now: float) -> None:
        """Count a tick's worth of final reports at once."""
        self.window.record_many(calls, failures, 0, now)

    def check(self, load: PartitionLoad, now: float) -> Verdict | None:
        """Return a ``failure_rate`` verdict when the window is past the threshold."""
        stats = self.window.stats(now)
        if stats.calls < self._minimum or stats.failure_rate < self.threshold:
            return None
        return Verdict(
            MuteReason.FAILURE_RATE,
            {
                "failure_rate": round(stats.failure_rate, 4),
                "threshold_pct": round(self.threshold * 100, 2),
                "calls": stats.calls,
                "failures": stats.failures,
                "minimum_calls": self._minimum,
            },
        )

    def reset(self) -> None:
        """Start a fresh window."""
        self.window.reset()
