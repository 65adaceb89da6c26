"""Policy -> runtime values (mutepro.policy.runtime); the one client-vs-policy rule: test_checks.py."""

from __future__ import annotations

import math

from mutepro.policy.runtime import NO_SLOW_THRESHOLD, TopicRuntime, runtime_of
from mutepro.policy.schema import TopicPolicy


class TestTopicRuntime:
    def test_units_are_converted_once(self) -> None:
        """ms -> s and pct -> fraction for every value the detectors and breakers take."""
        rt = TopicRuntime.of(TopicPolicy.model_validate({
            "slow_call": {"threshold_ms": 250, "rate_threshold_pct": 40},
            "failure_rate": {"threshold_pct": 25},
            "congestion": {"max_buffer_share_pct": 30, "min_age_ms": 1500},
            "breaker": {"retry_interval_ms": 2000, "max_retry_interval_ms": 8000},
        }))
        assert (rt.slow_threshold_s, rt.slow_rate, rt.failure_rate) == (0.25, 0.4, 0.25)
        assert (rt.congestion_max_share, rt.congestion_min_age_s) == (0.3, 1.5)
        assert (rt.retry_interval_s, rt.max_retry_interval_s) == (2.0, 8.0)

    def test_a_disabled_slow_call_rule_has_one_marker(self) -> None:
        """slow_call.enabled=false: threshold = NO_SLOW_THRESHOLD (inf), slow_call_enabled False."""
        rt = runtime_of(TopicPolicy.model_validate({"slow_call": {"enabled": False}}))
        assert rt.slow_threshold_s == NO_SLOW_THRESHOLD == math.inf and not rt.slow_call_enabled

    def test_built_once_per_policy(self) -> None:
        """The same policy object gives the same runtime object."""
        policy = TopicPolicy()
        assert runtime_of(policy) is runtime_of(policy)
