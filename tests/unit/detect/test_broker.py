"""The broker detector, judging librdkafka's broker statistics (mutepro.detect.broker)."""

from __future__ import annotations

import pytest

from mutepro.detect.broker import BrokerDetector
from mutepro.detect.stats import BrokerStats, PartitionStats, StatsSnapshot
from mutepro.errors import ConfigError
from mutepro.policy.schema import BrokerConfig


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

    def test_bad_share_scales_with_the_partitions_shown(self) -> None:
        """25 %: 2 bad of 4 partitions shown judge a broker; 7 of 400 do not, 100 of 400 do."""
        d = BrokerDetector(2, 5, 20, min_bad_pct=25)
        assert list(d.evaluate(None, {1: 2}, 0, {1: 4})) == [1]
        assert d.evaluate(None, {1: 7, 2: 7, 3: 7}, 0, {1: 400, 2: 400, 3: 400}) == {}
        verdict = d.evaluate(None, {1: 100}, 0, {1: 400})[1]
        assert (verdict.detail["needed"], verdict.detail["shown"]) == (100, 400)

    def test_bad_share_needs_the_count_too(self) -> None:
        """A share of one partition shown (25 % of 1) still needs min_bad_partitions."""
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
