"""Slow calls: delivery latency over a threshold at a slow-call rate, counting stuck messages as they age."""

from __future__ import annotations

from mutepro.detect.failure_rate import check_minimum, check_rate
from mutepro.detect.model import Delivery, MuteReason, PartitionLoad, Verdict
from mutepro.detect.window import SlidingWindow, effective_minimum_calls
from mutepro.errors import ConfigError


class SlowCallDetector:
    """Trips when ``calls >= minimum_calls`` and the slow-call rate is ``>= rate_threshold``.

    A delivered call is slow when ``latency_s > threshold_s`` (strictly, as resilience4j). A stalled broker
    sends no delivery reports at all, so the window alone would never see it: at each check the
    still-outstanding messages older than ``threshold_s`` are added as slow calls on top of the window
    (``calls + n``, ``slow + n``) without being recorded. There is no double counting: once such a message is
    delivered it is recorded normally and is no longer outstanding. Example: window holds 100 fast calls,
    threshold 1 s, rate 0.5; the broker stalls and the producer keeps sending 200 msg/s to the partition —
    1.5 s later ~100 messages are older than 1 s, so the rate is 100 / 200 = 0.5 and the partition is muted,
    without a single report having arrived.

    A *stall* trips at once: when messages are older than the threshold and the partition has delivered
    nothing at all for longer than the threshold, no amount of older fast history in the window may dilute
    that (with a 10 s window of 200 msg/s, the rate rule alone would take ~5 s to see a stalled broker; this
    rule sees it within one threshold plus one check interval).
    """

    name: str = MuteReason.SLOW_CALL

    def __init__(
        self,
        threshold_s: float,
        rate_threshold: float,
        window: SlidingWindow,
        minimum_calls: int,
        warm_up_s: float,
    ) -> None:
        if not threshold_s > 0:
            raise ConfigError(f"slow_call.threshold_s must be > 0 seconds, got {threshold_s!r}")
        self.threshold_s = float(threshold_s)
        self.rate_threshold = check_rate("slow_call.rate_threshold", rate_threshold)
        self.window = window
        self.minimum_calls = check_minimum("slow_call.minimum_calls", minimum_calls)
        self._minimum = effective_minimum_calls(window, self.minimum_calls)
        self._last_report: float | None = None
        # Before a partition's first report ever, its first messages also wait for metadata and a connection to a
        # possibly cold broker, and behind the producer's first full queue: nothing is judged until it reports or
        # warm_up_s pass (a saturated loop over 1,200 partitions had partitions of two brokers wait 1-2 s for
        # their first report, with the third broker's already delivering).
        self.warm_up_s = float(warm_up_s)
        self._ever_reported = False

    def record(self, delivery: Delivery) -> None:
        """Count one final report; slow = latency over the threshold (failed or not)."""
        self.window.record(failed=not delivery.ok, slow=delivery.latency_s > self.threshold_s, now=delivery.now)
        self._last_report = delivery.now
        self._ever_reported = True

    def record_many(self, calls: int, failures: int, slow: int, now: float) -> None:
        """Count a tick's worth of final reports at once (``slow`` were over this detector's threshold)."""
        if calls <= 0:
            return
        self.window.record_many(calls, failures, slow, now)
        self._last_report = now
        self._ever_reported = True

    def check(self, load: PartitionLoad, now: float) -> Verdict | None:
        """Return a ``slow_call`` verdict when window + stuck messages are past the rate threshold."""
        stats = self.window.stats(now)
        stuck = load.count_older_than(self.threshold_s)
        calls = stats.calls + stuck
        slow = stats.slow_calls + stuck
        silent_s = now - self._last_report if self._last_report is not None else load.oldest_age_s or 0.0
        # Warm once the partition's own reports reached this detector, or once the producer saw it deliver at all
        # (its first deliveries are not judged, and a topic produced to before its metadata arrived delivers
        # before anything tracks it: without load.warm, a stall right after such a start waited the whole 5 s).
        warm = self._ever_reported or load.warm
        stall_after = self.threshold_s if warm else max(self.threshold_s, self.warm_up_s)
        if not warm and silent_s <= stall_after:
            return None  # a cold partition's first messages: only its stall, after warm-up, is a verdict
        if stuck and silent_s > stall_after:
            detail: dict[str, float | int | str] = {
                "stalled": 1,
                "no_report_for_s": round(silent_s, 3),
                "threshold_s": self.threshold_s,
                "stuck": stuck,
                "oldest_age_s": round(load.oldest_age_s, 3) if load.oldest_age_s is not None else 0.0,
            }
            if not self._ever_reported and silent_s <= self.warm_up_s:
                # warm only by its first (unjudged) deliveries: a verdict only if its whole leader is silent
                # (mute.verdicts.cold_stalls_of_silent_leaders)
                detail["cold"] = 1
            return Verdict(MuteReason.SLOW_CALL, detail)
        if calls == 0 or calls < self._minimum:
            return None
        rate = slow / calls
        if rate < self.rate_threshold:
            return None
        return Verdict(
            MuteReason.SLOW_CALL,
            {
                "slow_call_rate": round(rate, 4),
                "threshold_pct": round(self.rate_threshold * 100, 2),
                "threshold_s": self.threshold_s,
                "calls": calls,
                "slow_calls": slow,
                "stuck": stuck,
                "oldest_age_s": round(load.oldest_age_s, 3) if load.oldest_age_s is not None else 0.0,
            },
        )

    def reset(self) -> None:
        """Start a fresh window."""
        self.window.reset()
        self._last_report = None
