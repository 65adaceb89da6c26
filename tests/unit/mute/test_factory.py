"""A partition's detectors from its topic's policy (mutepro.mute.factory)."""

from __future__ import annotations

from mutepro.detect.congestion import CongestionDetector
from mutepro.detect.failure_rate import FailureRateDetector
from mutepro.detect.slow_call import SlowCallDetector
from mutepro.mute.factory import build_detectors
from mutepro.policy.schema import TopicPolicy


class TestBuildDetectors:
    def test_the_enabled_detectors_cheapest_check_first(self) -> None:
        policy = TopicPolicy.model_validate({"congestion": {"enabled": True}})
        assert [type(d) for d in build_detectors("orders", policy)] == [
            CongestionDetector, SlowCallDetector, FailureRateDetector,
        ]

    def test_disabled_detectors_are_not_built(self) -> None:
        policy = TopicPolicy.model_validate(
            {"congestion": {"enabled": False}, "slow_call": {"enabled": False}, "failure_rate": {"enabled": False}}
        )
        assert build_detectors("orders", policy) == []

    def test_each_partition_gets_its_own_detectors(self) -> None:
        a, b = build_detectors("orders", TopicPolicy()), build_detectors("orders", TopicPolicy())
        assert a and all(x is not y for x, y in zip(a, b, strict=True))
