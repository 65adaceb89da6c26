"""A topic policy's values in the units the runtime uses, computed once (:func:`runtime_of`).

The schema speaks the policy file's language (milliseconds, percentages, ``enabled`` flags); detectors, breakers
and the producer take seconds and fractions. This is the one place that converts: ms -> s, pct -> fraction, and
one "disabled" marker for the slow-call threshold (``math.inf``: no delivery is ever slower than it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mutepro.policy.schema import TopicPolicy

#: the slow-call threshold of a topic whose slow-call rule is off
NO_SLOW_THRESHOLD = math.inf


@dataclass(frozen=True, slots=True)
class TopicRuntime:
    """The runtime values of one :class:`~mutepro.policy.schema.TopicPolicy` (already validated)."""

    #: a delivery slower than this (s) is slow; ``NO_SLOW_THRESHOLD`` when the slow-call rule is off
    slow_threshold_s: float
    slow_rate: float  # fraction of slow deliveries that mutes
    #: the relative slow rule (oldest undelivered age vs the topic's median); factor 0.0 when it is off
    slow_outlier_factor: float
    slow_outlier_min_s: float
    slow_avoid_min_s: float  # the outlier rule's steering floor (mutes need slow_outlier_min_s)
    normal_window_s: float  # how far back what counts as a normal wait looks (mute/normal.py)
    outlier_recur_s: float  # a deep outlier episode within this long of the last one mutes (mute/suspicion.py)
    outlier_episode_s: float  # an outlier episode this long mutes on its own
    cold_start_s: float  # how long a partition's first messages may wait before their age counts (slow_call.py)
    #: the detection time scale, ``slow_call.threshold_ms`` (also when the slow-call rule is off): a partition
    #: written to within it is a peer (active), and an idle one is looked at once per it (mute/scan.py)
    active_s: float
    failure_rate: float  # fraction of failed deliveries that mutes
    congestion_max_share: float  # fraction of the producer's buffer one partition may hold
    congestion_min_age_s: float
    retry_interval_s: float
    max_retry_interval_s: float
    probe_spacing_s: float

    @property
    def slow_call_enabled(self) -> bool:
        return self.slow_threshold_s != NO_SLOW_THRESHOLD

    @property
    def slow_outlier_enabled(self) -> bool:
        return self.slow_outlier_factor > 1.0

    @property
    def avoid_floor_s(self) -> float:
        """The steering floor in effect: ``slow_avoid_min_s``, or the mute floor when that is lower."""
        return min(self.slow_avoid_min_s, self.slow_outlier_min_s)

    @classmethod
    def of(cls, policy: TopicPolicy) -> TopicRuntime:
        return cls(
            slow_threshold_s=policy.slow_call.threshold_ms / 1000.0 if policy.slow_call.enabled else NO_SLOW_THRESHOLD,
            slow_rate=policy.slow_call.rate_threshold_pct / 100.0,
            slow_outlier_factor=(
                policy.slow_call.outlier_factor if policy.slow_call.enabled and policy.slow_call.outlier_factor > 1
                else 0.0
            ),
            slow_outlier_min_s=policy.slow_call.outlier_min_ms / 1000.0,
            slow_avoid_min_s=policy.slow_call.avoid_min_ms / 1000.0,
            normal_window_s=policy.slow_call.normal_window_ms / 1000.0,
            outlier_recur_s=policy.slow_call.outlier_recur_ms / 1000.0,
            outlier_episode_s=policy.slow_call.outlier_episode_ms / 1000.0,
            cold_start_s=policy.slow_call.cold_start_ms / 1000.0,
            active_s=policy.slow_call.threshold_ms / 1000.0,
            failure_rate=policy.failure_rate.threshold_pct / 100.0,
            congestion_max_share=policy.congestion.max_buffer_share_pct / 100.0,
            congestion_min_age_s=policy.congestion.min_age_ms / 1000.0,
            retry_interval_s=policy.breaker.retry_interval_ms / 1000.0,
            max_retry_interval_s=policy.breaker.max_retry_interval_ms / 1000.0,
            probe_spacing_s=policy.breaker.probe_spacing_ms / 1000.0,
        )


_cache: dict[int, tuple[TopicPolicy, TopicRuntime]] = {}


def runtime_of(policy: TopicPolicy) -> TopicRuntime:
    """The runtime values of ``policy``, built once per policy object (policies are immutable)."""
    hit = _cache.get(id(policy))
    if hit is not None and hit[0] is policy:
        return hit[1]
    runtime = TopicRuntime.of(policy)
    if len(_cache) >= 4096:  # policies are few and long-lived; a process that builds many must not grow this
        _cache.clear()
    _cache[id(policy)] = (policy, runtime)
    return runtime
