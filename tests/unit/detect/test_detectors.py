"""Partition detectors (failure rate, slow calls, congestion), the broker detector and their value types."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from mutepro.detect.broker import BrokerDetector
from mutepro.detect.congestion import CongestionDetector
from mutepro.detect.failure_rate import FailureRateDetector
from mutepro.detect.model import Delivery, MuteReason, PartitionLoad, Verdict
from mutepro.detect.protocols import BrokerHealthDetector, PartitionDetector
from mutepro.detect.slow_call import SlowCallDetector
from mutepro.detect.stats import BrokerStats, PartitionStats, StatsSnapshot
from mutepro.detect.window import CountWindow, TimeWindow
from mutepro.errors import ConfigError
from mutepro.policy.schema import BrokerConfig

IDLE = PartitionLoad(
    outstanding=0, outstanding_bytes=0, oldest_age_s=None, buffer_max_messages=100_000,
    buffer_max_bytes=1 << 30,
)  # fmt: skip


def load(ages: list[float] | None = None, **kw: int) -> PartitionLoad:
    """A partition load with the given outstanding message ages (oldest first)."""
    ages = ages or []
    base = {
        "outstanding": len(ages),
        "outstanding_bytes": 100 * len(ages),
        "buffer_max_messages": 100_000,
        "buffer_max_bytes": 1 << 30,
    }
    base.update(kw)
    return PartitionLoad(oldest_age_s=ages[0] if ages else None, ages_s=tuple(ages), **base)  # type: ignore[arg-type]


def feed(detector: PartitionDetector, n: int, *, ok: bool = True, latency_s: float = 0.01, now: float = 0.0) -> None:
    """Record n identical deliveries."""
    for _ in range(n):
        detector.record(Delivery(ok=ok, latency_s=latency_s, now=now))


class TestPartitionLoad:
    def test_counts_strictly_older(self) -> None:
        """count_older_than counts ages strictly above the threshold by bisection."""
        pl = load([9.0, 5.0, 2.0, 2.0, 1.0, 0.1])
        assert [pl.count_older_than(t) for t in (10, 9, 4, 2, 1.5, 0.0)] == [0, 0, 2, 2, 4, 6]

    def test_oldest_only(self) -> None:
        """Without ages_s the oldest outstanding message counts as one once past the threshold."""
        pl = PartitionLoad(1, 10, 3.0, 100, 1000)
        assert (pl.count_older_than(2.0), pl.count_older_than(3.0)) == (1, 0)

    def test_nothing_outstanding(self) -> None:
        """An idle partition has nothing older than anything."""
        assert IDLE.count_older_than(0.0) == 0


class TestVerdict:
    def test_describe_one_line(self) -> None:
        """describe() renders reason and figures on one line."""
        v = Verdict("slow_call", {"slow_call_rate": 0.93, "threshold_pct": 50, "calls": 41})
        assert v.describe() == "slow_call: slow_call_rate=0.93 threshold_pct=50 calls=41"

    def test_describe_without_detail(self) -> None:
        """A verdict without figures is just its reason."""
        assert Verdict("manual").describe() == "manual"

    def test_detail_is_read_only_copy(self) -> None:
        """The detail mapping is frozen and detached from the caller's dict."""
        src = {"a": 1}
        v = Verdict("x", src)
        src["a"] = 2
        assert isinstance(v.detail, MappingProxyType) and v.detail["a"] == 1

    def test_hashable_by_value(self) -> None:
        """Equal verdicts hash equally, so they work in sets."""
        assert len({Verdict("x", {"a": 1, "b": 2}), Verdict("x", {"b": 2, "a": 1}), Verdict("x")}) == 2

    def test_dict_round_trip(self) -> None:
        """to_dict / from_dict preserve reason and detail."""
        v = Verdict("broker", {"broker_id": 3, "cause": "down"})
        assert Verdict.from_dict(v.to_dict()) == v


class TestProtocols:
    @pytest.mark.parametrize(
        "detector",
        [
            FailureRateDetector(CountWindow(10), 5, 0.5),
            SlowCallDetector(1.0, 0.5, CountWindow(10), 5),
            CongestionDetector(0.5, 10),
        ],
    )
    def test_partition_detectors_satisfy_protocol(self, detector: object) -> None:
        """Every built-in partition detector is a PartitionDetector."""
        assert isinstance(detector, PartitionDetector)

    def test_broker_detector_satisfies_protocol(self) -> None:
        """BrokerDetector is a BrokerHealthDetector."""
        assert isinstance(BrokerDetector(2, 5.0, 20.0), BrokerHealthDetector)


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


class TestSlowCallDetector:
    def test_latency_over_threshold_is_slow(self) -> None:
        """Deliveries slower than threshold_s count as slow; at 100 % it trips."""
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(10), minimum_calls=4)
        feed(d, 4, latency_s=1.5)
        v = d.check(IDLE, 0)
        assert v is not None and v.reason == "slow_call" and v.detail["slow_call_rate"] == 1.0

    def test_latency_equal_to_threshold_is_not_slow(self) -> None:
        """Slow means strictly above the threshold (as resilience4j)."""
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(10), minimum_calls=4)
        feed(d, 4, latency_s=1.0)
        assert d.check(IDLE, 0) is None

    def test_minimum_calls_not_reached(self) -> None:
        """Three slow calls with minimum four: no verdict yet."""
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(10), minimum_calls=4)
        feed(d, 3, latency_s=5.0)
        assert d.check(IDLE, 0) is None

    def test_exactly_at_rate_threshold(self) -> None:
        """2 slow of 4 at rate 0.5 trips."""
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(10), minimum_calls=4)
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
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(100), minimum_calls=50)
        assert d.check(load([4.0, 3.0, 2.0]), 10.0) is None  # 4 s < 5 s warm-up: still connecting
        assert d.check(load([5.5, 3.0, 2.0]), 11.5) is not None

    def test_a_partition_that_delivered_is_not_cold(self) -> None:
        """load.warm (the producer saw the partition deliver, e.g. its unjudged first messages): no warm-up grace."""
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(100), minimum_calls=50)
        v = d.check(dataclasses.replace(load([1.5, 1.2]), warm=True), 10.0)
        assert v is not None and v.detail["stalled"] == 1

    def test_cold_start_holds_the_rate_rule_too(self) -> None:
        """Before the first report, 1,954 messages 2 s old (enough for the rate rule) wait for warm-up as well."""
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(100), minimum_calls=10)
        assert d.check(load([2.0] * 1954), 2.0) is None
        d.record(Delivery(ok=True, latency_s=2.1, now=2.1))
        assert d.check(load([2.1] * 1953), 2.1) is not None  # it reported: judged like any other

    def test_stall_is_not_diluted_by_fast_history(self) -> None:
        """100 fast calls, then nothing delivered for 1.5 s while 3 messages wait past 1 s: trips at once."""
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(100), minimum_calls=5)
        for _ in range(100):
            d.record(Delivery(ok=True, latency_s=0.01, now=10.0))
        assert d.check(load([1.2, 1.1, 1.05]), 10.9) is None  # reports 0.9 s ago: progress, rate rule only
        v = d.check(load([1.7, 1.6, 1.55]), 11.5)
        assert v is not None and v.detail["no_report_for_s"] == 1.5

    def test_stuck_messages_add_to_window(self) -> None:
        """10 fast delivered + 10 stuck = 10 slow of 20 calls = 50 %: trips."""
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(100), minimum_calls=5)
        feed(d, 10, latency_s=0.01)
        assert d.check(load([2.0] * 9), 0) is None  # 9 / 19 < 50 %
        assert d.check(load([2.0] * 10), 0) is not None

    def test_stuck_messages_are_not_recorded(self) -> None:
        """Checking with stuck messages leaves the window itself untouched (no double counting later)."""
        window = CountWindow(100)
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=window, minimum_calls=5)
        d.check(load([5.0] * 10), 0)
        assert window.stats(0).calls == 0

    def test_young_outstanding_messages_do_not_count(self) -> None:
        """Outstanding messages younger than the threshold are not slow calls."""
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(100), minimum_calls=1)
        assert d.check(load([0.9, 0.5]), 0) is None

    def test_reset_starts_fresh(self) -> None:
        """reset() forgets slow deliveries."""
        d = SlowCallDetector(threshold_s=1.0, rate_threshold=0.5, window=CountWindow(10), minimum_calls=1)
        feed(d, 5, latency_s=9.0)
        d.reset()
        assert d.check(IDLE, 0) is None

    def test_rejects_bad_threshold(self) -> None:
        """A non-positive latency threshold is a ConfigError naming the field."""
        with pytest.raises(ConfigError, match=r"slow_call\.threshold_s"):
            SlowCallDetector(0.0, 0.5, CountWindow(10), 1)


class TestCongestionDetector:
    def test_over_message_share(self) -> None:
        """More than 25 % of 1000 messages (251) trips."""
        d = CongestionDetector(max_share=0.25, min_messages=10)
        v = d.check(load(outstanding=251, outstanding_bytes=0, buffer_max_messages=1000), 0)
        assert v is not None and v.reason == "congestion" and v.detail["limit"] == "messages"

    def test_exactly_at_share_does_not_trip(self) -> None:
        """Exactly 25 % is not *more* than its share."""
        d = CongestionDetector(max_share=0.25, min_messages=10)
        assert d.check(load(outstanding=250, outstanding_bytes=0, buffer_max_messages=1000), 0) is None

    def test_over_byte_share(self) -> None:
        """Few messages but more than half the bytes trips on bytes."""
        d = CongestionDetector(max_share=0.5, min_messages=10)
        v = d.check(load(outstanding=20, outstanding_bytes=600, buffer_max_bytes=1000), 0)
        assert v is not None and v.detail["limit"] == "bytes" and v.detail["byte_share"] == 0.6

    def test_below_min_messages(self) -> None:
        """A tiny buffer: 9 of 10 messages is 90 % but under min_messages."""
        d = CongestionDetector(max_share=0.5, min_messages=10)
        assert d.check(load(outstanding=9, outstanding_bytes=0, buffer_max_messages=10), 0) is None

    def test_zero_limits_are_ignored(self) -> None:
        """An unknown (0) buffer limit never trips on its own."""
        d = CongestionDetector(max_share=0.5, min_messages=1)
        assert d.check(load(outstanding=50, outstanding_bytes=50, buffer_max_messages=0, buffer_max_bytes=0), 0) is None

    def test_a_draining_partition_is_not_congested(self) -> None:
        """Over its share but with its oldest message younger than min_age: it drains, no verdict."""
        d = CongestionDetector(max_share=0.25, min_messages=10, min_age_s=0.2)
        assert d.check(load([0.05, 0.01], outstanding=600, outstanding_bytes=0, buffer_max_messages=1000), 0) is None
        assert d.check(load(outstanding=600, outstanding_bytes=0, buffer_max_messages=1000), 0) is None

    def test_an_old_backlog_over_its_share_trips(self) -> None:
        """Over its share with a message waiting longer than min_age: congestion, with the age reported."""
        d = CongestionDetector(max_share=0.25, min_messages=10, min_age_s=0.2)
        v = d.check(load([0.35, 0.1], outstanding=600, outstanding_bytes=0, buffer_max_messages=1000), 0)
        assert v is not None and v.detail["oldest_age_ms"] == 350

    def test_rejects_negative_min_age(self) -> None:
        """A negative min_age is a ConfigError naming the policy key."""
        with pytest.raises(ConfigError, match=r"congestion\.min_age_ms"):
            CongestionDetector(0.5, 1, -0.1)

    def test_rejects_bad_share(self) -> None:
        """max_share outside (0, 1] is a ConfigError."""
        with pytest.raises(ConfigError, match=r"congestion\.max_share"):
            CongestionDetector(0.0, 1)


def broker(node: int, state: str = "UP", p99: float = 5.0, samples: int = 10, age: float = 0.0) -> BrokerStats:
    """A BrokerStats with the fields the broker detector reads."""
    return BrokerStats(node, f"b:9092/{node}", state, p99, p99 / 2, 1.0, 0, 0, 0, 0, 1, 0, samples, age)


def snapshot(brokers: list[BrokerStats], leaders: dict[int, int] | None = None) -> StatsSnapshot:
    """Partitions 0..n of topic t led by the given {partition: leader}; default one partition per broker."""
    leaders = leaders if leaders is not None else {i: b.node_id for i, b in enumerate(brokers)}
    parts = {("t", p): PartitionStats("t", p, leader, 0, 0, 0) for p, leader in leaders.items()}
    return StatsSnapshot(0.0, 0, 100, 0, 1000, {b.node_id: b for b in brokers}, parts)


class TestBrokerDetector:
    def test_bad_partitions_trip_leader(self) -> None:
        """min_bad_partitions bad partitions led by a broker mute it; fewer do not."""
        d = BrokerDetector(min_bad_partitions=2, latency_factor=5, min_latency_ms=20)
        verdicts = d.evaluate(None, {1: 2, 2: 1}, now=0)
        assert list(verdicts) == [1]
        assert verdicts[1].reason == "broker" and verdicts[1].detail["cause"] == "bad_partitions"

    def test_bad_share_scales_with_written_partitions(self) -> None:
        """25 %: 2 of 4 written partitions judge a broker; 7 of 400 do not, 100 of 400 do."""
        d = BrokerDetector(2, 5, 20, min_bad_pct=25)
        assert list(d.evaluate(None, {1: 2}, 0, {1: 4})) == [1]
        assert d.evaluate(None, {1: 7, 2: 7, 3: 7}, 0, {1: 400, 2: 400, 3: 400}) == {}
        verdict = d.evaluate(None, {1: 100}, 0, {1: 400})[1]
        assert (verdict.detail["needed"], verdict.detail["written"]) == (100, 400)

    def test_bad_share_needs_the_count_too(self) -> None:
        """A share of one written partition (25 % of 1) still needs min_bad_partitions."""
        d = BrokerDetector(2, 5, 20, min_bad_pct=25)
        assert d.bad_partitions_needed(1) == 2 and d.bad_partitions_needed(4) == 2 and d.bad_partitions_needed(9) == 3
        assert d.evaluate(None, {1: 1}, 0, {1: 1}) == {}

    def test_bad_share_out_of_range_names_the_field(self) -> None:
        """A percentage over 100 is a ConfigError naming broker.min_bad_pct."""
        with pytest.raises(ConfigError, match=r"broker\.min_bad_pct"):
            BrokerDetector(2, 5, 20, min_bad_pct=250)

    def test_down_after_grace(self) -> None:
        """A broker DOWN for down_grace_s is muted, not before."""
        d = BrokerDetector(2, 5, 20, down_grace_s=2.0)
        stats = snapshot([broker(1), broker(2, state="DOWN"), broker(3)])
        assert d.evaluate(stats, {}, now=10.0) == {}
        assert d.evaluate(stats, {}, now=11.9) == {}
        v = d.evaluate(stats, {}, now=12.0)
        assert list(v) == [2] and v[2].detail["cause"] == "down" and v[2].detail["state"] == "DOWN"

    def test_down_uses_librdkafka_stateage(self) -> None:
        """librdkafka's stateage counts: down for 3 s already trips on first sight."""
        d = BrokerDetector(2, 5, 20, down_grace_s=2.0)
        stats = snapshot([broker(1), broker(2, state="CONNECT", age=3.0), broker(3)])
        assert list(d.evaluate(stats, {}, now=0.0)) == [2]

    def test_back_up_resets_down_timer(self) -> None:
        """A broker that came back UP starts a new grace period when it goes down again."""
        d = BrokerDetector(2, 5, 20, down_grace_s=2.0)
        down = snapshot([broker(1), broker(2, state="DOWN"), broker(3)])
        up = snapshot([broker(1), broker(2), broker(3)])
        d.evaluate(down, {}, now=0.0)
        d.evaluate(up, {}, now=1.0)
        assert d.evaluate(down, {}, now=2.5) == {}

    def test_init_state_is_not_down(self) -> None:
        """INIT (never connected: sparse connections) is not a failure."""
        d = BrokerDetector(2, 5, 20, down_grace_s=0.0)
        assert d.evaluate(snapshot([broker(1), broker(2, state="INIT")]), {}, now=100.0) == {}

    def test_down_broker_leading_nothing_is_ignored(self) -> None:
        """A down broker whose partitions moved away has nothing to mute."""
        d = BrokerDetector(2, 5, 20, down_grace_s=0.0)
        stats = snapshot([broker(1), broker(2, state="DOWN")], leaders={0: 1, 1: 1})
        assert d.evaluate(stats, {}, now=5.0) == {}

    def test_latency_outlier(self) -> None:
        """p99 60 ms vs median 4.5 ms of the others (x5 = 22.5) and > 20 ms: muted."""
        d = BrokerDetector(2, latency_factor=5, min_latency_ms=20)
        v = d.evaluate(snapshot([broker(1, p99=4), broker(2, p99=5), broker(3, p99=60)]), {}, now=0)
        assert list(v) == [3] and v[3].detail["cause"] == "latency"
        assert v[3].detail["median_rtt_p99_ms"] == 4.5

    def test_latency_must_persist_over_consecutive_snapshots(self) -> None:
        """With latency_snapshots=2, one slow emission is a hiccup; the second in a row mutes; a normal one in
        between starts over; re-reading the same emission (every tick) does not count twice (no hold here)."""
        d = BrokerDetector(2, latency_factor=5, min_latency_ms=20, latency_snapshots=2, latency_hold_s=0)

        def slow() -> StatsSnapshot:
            return snapshot([broker(1, p99=4), broker(2, p99=5), broker(3, p99=60)])

        first = slow()
        assert d.evaluate(first, {}, now=0) == {} and d.evaluate(first, {}, now=0.05) == {}
        v = d.evaluate(slow(), {}, now=1)
        assert list(v) == [3] and v[3].detail["snapshots"] == 2
        d.evaluate(snapshot([broker(1, p99=4), broker(2, p99=5), broker(3, p99=6)]), {}, now=2)
        assert d.evaluate(slow(), {}, now=3) == {}

    def test_latency_verdict_holds_without_samples(self) -> None:
        """Muted, the broker has no rtt samples: its latency verdict holds for latency_hold_s, then lapses."""
        d = BrokerDetector(2, latency_factor=5, min_latency_ms=20, latency_hold_s=5, latency_max_hold_s=60)
        assert list(d.evaluate(snapshot([broker(1, p99=4), broker(2, p99=5), broker(3, p99=800)]), {}, now=0)) == [3]
        quiet = snapshot([broker(1, p99=4), broker(2, p99=5), broker(3, p99=0, samples=0)])
        v = d.evaluate(quiet, {}, now=4.9)
        assert list(v) == [3] and v[3].detail["cause"] == "latency" and v[3].detail["hold_s"] == 5
        assert d.evaluate(quiet, {}, now=5.0) == {}

    def test_latency_hold_doubles_when_caught_again(self) -> None:
        """Slow again after its hold: 10 s, then 20 s; fine for a whole maximum hold: back to 5 s."""
        d = BrokerDetector(2, latency_factor=5, min_latency_ms=20, latency_hold_s=5, latency_max_hold_s=60)

        def slow() -> StatsSnapshot:
            return snapshot([broker(1, p99=4), broker(2, p99=5), broker(3, p99=800)])

        quiet = snapshot([broker(1, p99=4), broker(2, p99=5), broker(3, p99=0, samples=0)])
        d.evaluate(slow(), {}, now=0)
        d.evaluate(slow(), {}, now=6)  # 1 s after the first hold ended
        assert d.evaluate(quiet, {}, now=15.9) != {} and d.evaluate(quiet, {}, now=16) == {}
        d.evaluate(slow(), {}, now=17)
        assert d.evaluate(quiet, {}, now=36.9) != {} and d.evaluate(quiet, {}, now=37) == {}
        d.evaluate(quiet, {}, now=37 + 60)  # fine for 60 s after the hold: forgotten
        d.evaluate(slow(), {}, now=100)
        assert d.evaluate(quiet, {}, now=104.9) != {} and d.evaluate(quiet, {}, now=105) == {}

    def test_latency_hold_bounds_are_checked(self) -> None:
        """A hold longer than its maximum is a ConfigError naming both."""
        with pytest.raises(ConfigError, match="latency_hold_s"):
            BrokerDetector(2, 5, 20, latency_hold_s=10, latency_max_hold_s=5)

    def test_latency_below_absolute_minimum(self) -> None:
        """10x the others but under min_latency_ms is not worth muting."""
        d = BrokerDetector(2, latency_factor=5, min_latency_ms=20)
        assert d.evaluate(snapshot([broker(1, p99=1), broker(2, p99=1), broker(3, p99=10)]), {}, now=0) == {}

    def test_default_floor_ignores_a_loaded_healthy_broker_and_mutes_a_limping_one(self) -> None:
        """Default policy: rtt p99 295 ms against 23 ms (a healthy broker under a saturating writer on a loaded
        machine, muted by the former 200 ms floor) is no verdict; ~790 ms (stopped 80 % of every second) is."""
        bp = BrokerConfig()
        d = BrokerDetector(bp.min_bad_partitions, bp.latency_factor, bp.min_latency_ms,
                           latency_snapshots=bp.latency_snapshots, min_bad_pct=bp.min_bad_pct)  # fmt: skip
        for now in range(4):
            loaded = snapshot([broker(1, p99=295), broker(2, p99=23), broker(3, p99=22)])
            assert d.evaluate(loaded, {}, now=now) == {}
        verdicts = {}
        for now in range(4, 6):
            verdicts = d.evaluate(snapshot([broker(1, p99=22), broker(2, p99=790), broker(3, p99=23)]), {}, now=now)
        assert list(verdicts) == [2] and verdicts[2].detail["cause"] == "latency"

    def test_latency_needs_two_other_brokers(self) -> None:
        """With only two brokers there is no majority to compare with."""
        d = BrokerDetector(2, latency_factor=5, min_latency_ms=20)
        assert d.evaluate(snapshot([broker(1, p99=1), broker(2, p99=500)]), {}, now=0) == {}

    def test_latency_ignores_brokers_without_samples(self) -> None:
        """Brokers with no rtt samples neither compare nor get compared."""
        d = BrokerDetector(2, latency_factor=5, min_latency_ms=20)
        stats = snapshot([broker(1, p99=4), broker(2, p99=0, samples=0), broker(3, p99=60)])
        assert d.evaluate(stats, {}, now=0) == {}

    def test_causes_combine(self) -> None:
        """A broker both slow and with bad partitions lists both causes."""
        d = BrokerDetector(2, latency_factor=5, min_latency_ms=20)
        v = d.evaluate(snapshot([broker(1, p99=4), broker(2, p99=5), broker(3, p99=60)]), {3: 4}, now=0)
        assert v[3].detail["cause"] == "bad_partitions,latency" and v[3].detail["bad_partitions"] == 4

    @pytest.mark.parametrize(
        ("args", "field"),
        [((0, 5, 20), "min_bad_partitions"), ((2, 1, 20), "latency_factor"), ((2, 5, -1), "min_latency_ms")],
    )
    def test_rejects_bad_config(self, args: tuple[int, float, float], field: str) -> None:
        """Invalid settings are ConfigErrors naming the field."""
        with pytest.raises(ConfigError, match=field):
            BrokerDetector(*args)


class TestHealthErrors:
    def test_errors_of_the_partition_count(self) -> None:
        """Timeouts, lost leaders, too few replicas, broken connections count against the partition."""
        from confluent_kafka import KafkaError

        from mutepro.detect.errors import counts_against_partition

        for code in (KafkaError._MSG_TIMED_OUT, KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.NOT_ENOUGH_REPLICAS,
                     KafkaError._TRANSPORT, KafkaError.REQUEST_TIMED_OUT, KafkaError.KAFKA_STORAGE_ERROR):
            assert counts_against_partition(code), code

    def test_errors_of_the_message_or_application_do_not(self) -> None:
        """Record too large, invalid record, authorization, unknown topic/partition, purges say nothing about it."""
        from confluent_kafka import KafkaError

        from mutepro.detect.errors import counts_against_partition

        for code in (KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.INVALID_RECORD, KafkaError.TOPIC_AUTHORIZATION_FAILED,
                     KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION, KafkaError._PURGE_QUEUE,
                     KafkaError.CLUSTER_AUTHORIZATION_FAILED):
            assert not counts_against_partition(code), code


class TestMuteReason:
    def test_round_trip_keeps_the_enum(self) -> None:
        """A built-in reason survives to_dict/from_dict (the shared store's format) as its MuteReason member."""
        data = Verdict(MuteReason.SLOW_CALL, {"calls": 3}).to_dict()
        assert data == {"reason": "slow_call", "detail": {"calls": 3}}
        assert type(data["reason"]) is str
        back = Verdict.from_dict(data)
        assert back.reason is MuteReason.SLOW_CALL and back == Verdict("slow_call", {"calls": 3})

    def test_custom_reason_stays_a_string(self) -> None:
        """A custom detector's name is kept as written."""
        back = Verdict.from_dict(Verdict("my_detector").to_dict())
        assert back.reason == "my_detector" and not isinstance(back.reason, MuteReason)

    def test_describe_uses_the_name(self) -> None:
        """describe() shows the reason's name, not the enum's repr."""
        assert Verdict(MuteReason.BROKER, {"cause": "down"}).describe() == "broker: cause=down"
