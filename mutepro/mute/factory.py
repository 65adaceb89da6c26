"""Build a partition's detectors from its topic's effective policy."""

from __future__ import annotations

from collections.abc import Callable

from mutepro.detect.congestion import CongestionDetector
from mutepro.detect.failure_rate import FailureRateDetector
from mutepro.detect.protocols import PartitionDetector
from mutepro.detect.slow_call import SlowCallDetector
from mutepro.detect.window import make_window
from mutepro.policy.runtime import runtime_of
from mutepro.policy.schema import TopicPolicy

#: Topic name and its policy -> a new partition's detectors (a producer may pass its own).
DetectorFactory = Callable[[str, TopicPolicy], list[PartitionDetector]]


def build_detectors(topic: str, policy: TopicPolicy) -> list[PartitionDetector]:
    """The enabled built-in detectors, cheapest check first (congestion is a comparison, slow-call a bisect)."""
    detectors: list[PartitionDetector] = []
    rt = runtime_of(policy)
    if policy.congestion.enabled:
        c = policy.congestion
        detectors.append(CongestionDetector(rt.congestion_max_share, c.min_messages, rt.congestion_min_age_s))
    if rt.slow_call_enabled:
        s = policy.slow_call
        window = make_window(s.window.type, s.window.size)
        detectors.append(SlowCallDetector(rt.slow_threshold_s, rt.slow_rate, window, s.minimum_calls, rt.cold_start_s))
    if policy.failure_rate.enabled:
        f = policy.failure_rate
        window = make_window(f.window.type, f.window.size)
        detectors.append(FailureRateDetector(window, f.minimum_calls, rt.failure_rate))
    return detectors
