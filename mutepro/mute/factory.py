"""Build a partition's detectors from its topic's effective policy."""

from __future__ import annotations

from mutepro.detect.congestion import CongestionDetector
from mutepro.detect.failure_rate import FailureRateDetector
from mutepro.detect.protocols import PartitionDetector
from mutepro.detect.slow_call import SlowCallDetector
from mutepro.detect.window import make_window
from mutepro.policy.schema import TopicPolicy


def build_detectors(topic: str, policy: TopicPolicy) -> list[PartitionDetector]:
    """The enabled built-in detectors, cheapest check first (congestion is a comparison, slow-call a bisect)."""
    detectors: list[PartitionDetector] = []
    if policy.congestion.enabled:
        c = policy.congestion
        detectors.append(CongestionDetector(c.max_buffer_share_pct / 100.0, c.min_messages, c.min_age_ms / 1000.0))
    if policy.slow_call.enabled:
        s = policy.slow_call
        detectors.append(
            SlowCallDetector(
                s.threshold_ms / 1000.0, s.rate_threshold_pct / 100.0, make_window(s.window.type, s.window.size),
                s.minimum_calls,
            )
        )
    if policy.failure_rate.enabled:
        f = policy.failure_rate
        detectors.append(
            FailureRateDetector(make_window(f.window.type, f.window.size), f.minimum_calls, f.threshold_pct / 100.0)
        )
    return detectors
