"""reroute_partition: rendezvous fallback for keys whose home is muted (mutepro.partition.reroute)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable

from mutepro.partition.hashing import key_partitioner
from mutepro.partition.reroute import (
    MAX_DRAWS,
    _key_hash,
    preference_order,
    rendezvous_score,
    reroute_partition,
)
from mutepro.partition.snapshot import TopicSnapshot

N = 12
HOME = key_partitioner("murmur2_random")


def snapshot(muted: Iterable[int] = ()) -> TopicSnapshot:
    return TopicSnapshot.build("t", N, muted, None)


def effective(key: bytes, snap: TopicSnapshot) -> int | None:
    """What the producer does under the ``reroute`` policy: home unless muted, else the fallback."""
    home = HOME(key, snap.partition_count)
    assert home is not None
    return reroute_partition(key, home, snap) if snap.is_muted(home) else home


def keys(count: int, seed: int = 42) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(rng.randrange(1, 24)) for _ in range(count)]


class TestOnlyMutedKeysMove:
    """Muting a partition moves its keys and no others; unmuting brings them home."""

    def test_only_the_muted_partitions_keys_move(self) -> None:
        """With partition 3 muted, every other key keeps its home; partition 3's keys go to writable ones."""
        healthy, muted = snapshot(), snapshot([3])
        moved = 0
        for key in keys(6000):
            before, after = effective(key, healthy), effective(key, muted)
            if before == 3:
                moved += 1
                assert after != 3 and after in muted.writable_set
            else:
                assert after == before
        assert moved > 300  # ~1/12 of the keys: the property was actually exercised

    def test_keys_go_home_after_unmute(self) -> None:
        """Once the partition is writable again each key is back on its librdkafka home."""
        for key in keys(2000):
            effective(key, snapshot([3, 8]))
            assert effective(key, snapshot()) == HOME(key, N)

    def test_second_mute_only_moves_keys_that_fell_back_to_it(self) -> None:
        """Muting 7 as well moves only the rerouted keys whose fallback was 7 (minimal disruption)."""
        one, two = snapshot([3]), snapshot([3, 7])
        fell_back_to_7 = 0
        for key in keys(8000):
            if HOME(key, N) != 3:
                continue
            first = reroute_partition(key, 3, one)
            second = reroute_partition(key, 3, two)
            if first == 7:
                fell_back_to_7 += 1
                assert second not in (3, 7)
            else:
                assert second == first
        assert fell_back_to_7 > 10


class TestDeterminism:
    """A key's fallback depends only on the key and the writable set."""

    def test_same_answer_for_equal_snapshots(self) -> None:
        """Separately built but equal snapshots give the same fallback, every time."""
        for key in keys(500):
            assert reroute_partition(key, 3, snapshot([3])) == reroute_partition(key, 3, snapshot([3]))

    def test_golden_values_are_stable_across_processes(self) -> None:
        """Pinned results: no per-process salt, so every producer of a fleet picks the same fallback."""
        snap = snapshot([0])
        got = [reroute_partition(k, 0, snap) for k in (b"user-1", b"user-2", b"order-77", b"\x00\xff")]
        assert got == [5, 5, 4, 2]

    def test_is_first_writable_in_the_keys_preference_order(self) -> None:
        """The fallback is the first writable, non-home entry of the key's own preference sequence."""
        snap = snapshot([2, 5])
        for key in keys(300):
            home = 2
            order = preference_order(_key_hash(key), N)
            first = next(p for p in order if p != home and p in snap.writable_set)
            assert reroute_partition(key, home, snap) == first

    def test_falls_back_to_highest_random_weight_when_draws_miss(self) -> None:
        """With almost everything muted and the draws all missing, the best rendezvous score wins."""
        count = 1000
        snap = TopicSnapshot.build("t", count, [p for p in range(count) if p not in (17, 901)], None)
        tail_keys = 0
        for key in keys(200):
            kh = _key_hash(key)
            result = reroute_partition(key, 0, snap)
            assert result in (17, 901)
            if not {17, 901} & set(preference_order(kh, count, MAX_DRAWS)):
                tail_keys += 1
                assert result == max((17, 901), key=lambda p, kh=kh: rendezvous_score(kh, p))
        assert tail_keys > 100  # 2 of 1000 writable: ~88 % of keys miss all 64 draws

    def test_str_and_none_keys(self) -> None:
        """str keys hash as UTF-8; a NULL key (hashed by consistent/murmur2/fnv1a) reroutes like b""."""
        snap = snapshot([1])
        assert reroute_partition("k\u00e9y", 1, snap) == reroute_partition("k\u00e9y".encode(), 1, snap)
        assert reroute_partition(None, 1, snap) == reroute_partition(b"", 1, snap)


class TestSpread:
    """Rerouted keys spread over all writable partitions."""

    def test_rerouted_keys_spread_evenly(self) -> None:
        """Keys of a muted partition land on every other partition, each within 0.5x..1.5x of fair share."""
        snap = snapshot([3])
        counts = Counter(reroute_partition(key, 3, snap) for key in keys(11000, seed=7))
        assert set(counts) == set(snap.writable)
        fair = 11000 / len(snap.writable)
        assert all(0.5 * fair < c < 1.5 * fair for c in counts.values())


class TestEdges:
    """Nothing writable, or a hand-built snapshot that still lists home."""

    def test_none_when_nothing_is_writable(self) -> None:
        """Everything muted -> None."""
        assert reroute_partition(b"k", 0, snapshot(range(N))) is None

    def test_never_returns_home(self) -> None:
        """Even if a hand-built snapshot lists home as writable, home is skipped."""
        snap = TopicSnapshot("t", 3, (0, 1, 2), frozenset(), (1.0, 2.0, 3.0))
        assert all(reroute_partition(k, 1, snap) in (0, 2) for k in keys(300))
        only_home = TopicSnapshot("t", 3, (1,), frozenset({0, 2}), (1.0,))
        assert reroute_partition(b"k", 1, only_home) is None
