"""StickyChooser: KIP-480 stickiness and KIP-794 weighted switches over writable partitions only."""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Iterable

import pytest

from mutepro.errors import ConfigError
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.partition.sticky import StickyChooser, linger_from_config


class FakeClock:
    """A manually advanced monotonic clock."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ScriptedRandom(random.Random):
    """``random()`` returns the scripted values in order (then repeats the last)."""

    def __init__(self, values: Iterable[float]) -> None:
        super().__init__(0)
        self._values = list(values)

    def random(self) -> float:
        return self._values.pop(0) if len(self._values) > 1 else self._values[0]


def uniform(partitions: int, muted: Iterable[int] = ()) -> TopicSnapshot:
    return TopicSnapshot.build("t", partitions, muted, None)


class TestStickiness:
    """The partition stays until bytes, time or writability say otherwise."""

    def test_sticks_until_sticky_bytes_sent(self) -> None:
        """Messages stay on one partition until sticky_bytes were sent, then the next draw is used."""
        # 4 uniform partitions (cumulative 1..4): 0.1 -> p0, 0.6 -> p2
        chooser = StickyChooser(
            sticky_bytes=1000, linger_s=10, rng=ScriptedRandom([0.1, 0.6]), clock=FakeClock()
        )
        snap = uniform(4)
        got = [chooser.choose(snap, 300) for _ in range(5)]
        # 300, 600, 900 (< 1000: stay), 1200 sent after the 4th -> the 5th switches
        assert got == [0, 0, 0, 0, 2]

    def test_switches_after_linger(self) -> None:
        """After linger_s the next message draws a new partition, even if few bytes were sent."""
        clock = FakeClock()
        chooser = StickyChooser(
            sticky_bytes=10**9, linger_s=0.01, rng=ScriptedRandom([0.1, 0.9]), clock=clock
        )
        snap = uniform(4)
        assert chooser.choose(snap, 1) == 0
        clock.now += 0.009
        assert chooser.choose(snap, 1) == 0
        clock.now += 0.002
        assert chooser.choose(snap, 1) == 3

    def test_zero_sticky_bytes_means_time_only(self) -> None:
        """sticky_bytes=0 disables the byte limit (librdkafka's time-only stickiness)."""
        chooser = StickyChooser(sticky_bytes=0, linger_s=5, rng=ScriptedRandom([0.4, 0.9]), clock=FakeClock())
        snap = uniform(4)
        assert {chooser.choose(snap, 10**6) for _ in range(50)} == {1}

    def test_zero_linger_draws_every_message(self) -> None:
        """linger_s=0 disables stickiness like sticky.partitioning.linger.ms=0."""
        chooser = StickyChooser(linger_s=0, rng=ScriptedRandom([0.1, 0.3, 0.6, 0.9]), clock=FakeClock())
        snap = uniform(4)
        assert [chooser.choose(snap, 1) for _ in range(4)] == [0, 1, 2, 3]
        assert chooser.current("t") is None

    def test_leaves_a_partition_that_becomes_unwritable(self) -> None:
        """When the sticky partition is muted the very next message goes elsewhere."""
        chooser = StickyChooser(linger_s=10, rng=ScriptedRandom([0.3, 0.1]), clock=FakeClock())
        assert chooser.choose(uniform(4), 1) == 1
        muted = uniform(4, muted=[1])  # writable (0, 2, 3); 0.1 -> 0
        assert chooser.choose(muted, 1) == 0
        assert chooser.current("t") == 0

    def test_topics_are_independent(self) -> None:
        """Each topic has its own sticky partition."""
        chooser = StickyChooser(linger_s=10, rng=ScriptedRandom([0.1, 0.9]), clock=FakeClock())
        a = TopicSnapshot.build("a", 4, (), None)
        b = TopicSnapshot.build("b", 4, (), None)
        assert (chooser.choose(a, 1), chooser.choose(b, 1), chooser.choose(a, 1)) == (0, 3, 0)

    def test_reset_forgets_the_sticky_partition(self) -> None:
        """reset(topic) makes the next message draw again."""
        chooser = StickyChooser(linger_s=10, rng=ScriptedRandom([0.1, 0.9]), clock=FakeClock())
        snap = uniform(4)
        assert chooser.choose(snap, 1) == 0
        chooser.reset("t")
        assert chooser.current("t") is None
        assert chooser.choose(snap, 1) == 3
        chooser.reset()
        assert chooser.current("t") is None

    def test_negative_linger_is_a_config_error(self) -> None:
        """A negative linger names the field and how to disable stickiness."""
        with pytest.raises(ConfigError, match="linger_s"):
            StickyChooser(linger_s=-1)


class TestWritableOnly:
    """Unkeyed messages only ever go to writable partitions."""

    def test_never_returns_a_muted_partition(self) -> None:
        """Over many switches, every choice is writable."""
        chooser = StickyChooser(sticky_bytes=1, linger_s=10, rng=random.Random(5), clock=FakeClock())
        snap = uniform(12, muted=[0, 3, 4, 11])
        seen = {chooser.choose(snap, 10) for _ in range(2000)}
        assert seen == set(snap.writable)

    def test_none_when_nothing_is_writable(self) -> None:
        """With every partition muted the answer is None, and the sticky state is dropped."""
        chooser = StickyChooser(linger_s=10, rng=random.Random(1), clock=FakeClock())
        chooser.choose(uniform(3), 1)
        assert chooser.choose(uniform(3, muted=[0, 1, 2]), 1) is None
        assert chooser.current("t") is None
        assert chooser.pick(uniform(0)) is None

    def test_single_writable_partition(self) -> None:
        """With one writable partition it is always chosen, without drawing."""
        chooser = StickyChooser(linger_s=0, rng=ScriptedRandom([0.99]), clock=FakeClock())
        assert {chooser.choose(uniform(5, muted=[0, 1, 3, 4]), 1) for _ in range(20)} == {2}

    def test_draw_rounding_up_to_total_picks_last(self) -> None:
        """A draw equal to the total weight (float rounding) still returns the last writable partition."""
        chooser = StickyChooser(linger_s=0, rng=ScriptedRandom([1.0]), clock=FakeClock())
        assert chooser.pick(uniform(6, muted=[5])) == 4

    def test_concurrent_choose_only_returns_writable(self) -> None:
        """Threads racing on choose() while snapshots swap never raise nor return a non-writable partition."""
        chooser = StickyChooser(sticky_bytes=50, linger_s=10, rng=random.Random(3))
        snaps = [uniform(8, muted=m) for m in ([], [0, 1], [2, 3, 4], [7], [0, 2, 4, 6])]
        bad: list[tuple[int | None, TopicSnapshot]] = []
        errors: list[BaseException] = []

        def worker(seed: int) -> None:
            rng = random.Random(seed)
            try:
                for _ in range(3000):
                    snap = snaps[rng.randrange(len(snaps))]
                    p = chooser.choose(snap, rng.randrange(1, 40))
                    if p not in snap.writable_set:
                        bad.append((p, snap))
            except BaseException as err:  # pragma: no cover - the assertion below reports it
                errors.append(err)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert bad == []


class TestWeights:
    """Switches follow the KIP-794 weights (seeded, generous statistical bounds)."""

    def test_frequencies_follow_kip794_weights(self) -> None:
        """Queues 0, 3, 1 -> about 50 %, 12.5 %, 37.5 % of draws."""
        snap = TopicSnapshot.build("t", 3, (), {0: 0, 1: 3, 2: 1})
        chooser = StickyChooser(linger_s=0, rng=random.Random(2024))
        draws = 20000
        counts = Counter(chooser.choose(snap, 100) for _ in range(draws))
        for partition, probability in snap.probabilities().items():
            assert abs(counts[partition] / draws - probability) < 0.02

    def test_filling_partition_gets_fewer_batches(self) -> None:
        """A partition with a long queue is picked far less often than empty ones, but not never."""
        sizes = {0: 0, 1: 0, 2: 90, 3: 0}  # weights 91, 91, 1, 91
        snap = TopicSnapshot.build("t", 4, (), sizes)
        chooser = StickyChooser(sticky_bytes=1, linger_s=10, rng=random.Random(99), clock=FakeClock())
        counts = Counter(chooser.choose(snap, 1) for _ in range(30000))
        assert 0 < counts[2] < counts[0] / 20
        assert counts[2] / 30000 == pytest.approx(1 / 274, abs=0.003)

    def test_uniform_weights_spread_evenly(self) -> None:
        """Without load stats every writable partition gets about its equal share."""
        snap = uniform(10, muted=[4, 5])
        chooser = StickyChooser(linger_s=0, rng=random.Random(11))
        counts = Counter(chooser.choose(snap, 1) for _ in range(16000))
        assert set(counts) == set(snap.writable)
        assert all(abs(c / 16000 - 1 / 8) < 0.02 for c in counts.values())


class TestLingerFromConfig:
    """linger_s derived from a producer config the way librdkafka derives sticky.partitioning.linger.ms."""

    def test_default_is_twice_linger_ms(self) -> None:
        """No settings -> 2 x 5 ms = 10 ms; linger.ms (or its alias) doubles; capped at 900 s."""
        assert linger_from_config({}) == pytest.approx(0.01)
        assert linger_from_config({"linger.ms": 100}) == pytest.approx(0.2)
        assert linger_from_config({"queue.buffering.max.ms": "20"}) == pytest.approx(0.04)
        assert linger_from_config({"linger.ms": 10**7}) == pytest.approx(900.0)

    def test_explicit_setting_wins(self) -> None:
        """An explicit sticky.partitioning.linger.ms is used as is, including 0 (stickiness off)."""
        assert linger_from_config({"linger.ms": 100, "sticky.partitioning.linger.ms": 3}) == pytest.approx(
            0.003
        )
        assert linger_from_config({"sticky.partitioning.linger.ms": 0}) == 0.0

    def test_bad_values_name_the_key(self) -> None:
        """Non-numeric or negative values are ConfigErrors naming the offending key."""
        with pytest.raises(ConfigError, match=r"^linger\.ms"):
            linger_from_config({"linger.ms": "soon"})
        with pytest.raises(ConfigError, match=r"^sticky\.partitioning\.linger\.ms"):
            linger_from_config({"sticky.partitioning.linger.ms": -1})
