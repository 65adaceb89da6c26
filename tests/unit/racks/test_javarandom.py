"""java.util.Random port: vectors printed by Java 17's own Random and Collections.shuffle."""

from __future__ import annotations

import pytest

from mutepro.racks.javarandom import JavaRandom, java_shuffle


class TestJavaRandom:
    def test_seed_42_sequence(self) -> None:
        """new Random(42): nextInt(10), nextInt(10), nextInt(), nextInt(7), nextInt(1000000007) as Java prints."""
        r = JavaRandom(42)
        assert [r.next_int(10), r.next_int(10), r.next_int(), r.next_int(7), r.next_int(1_000_000_007)] == [
            0, 3, -1360544799, 3, 662969970,
        ]  # fmt: skip

    def test_negative_and_wide_seeds_use_low_48_bits(self) -> None:
        """Seeds differing only above bit 48 give the same stream, as in Java."""
        assert JavaRandom(5).next_int() == JavaRandom(5 + (1 << 48)).next_int()

    def test_bound_must_be_positive(self) -> None:
        """nextInt(0) is refused like Java's IllegalArgumentException."""
        with pytest.raises(ValueError):
            JavaRandom(1).next_int(0)

    def test_shuffle_matches_collections_shuffle(self) -> None:
        """Collections.shuffle([1..6], new Random(7)) is [4, 1, 2, 3, 6, 5]."""
        items = [1, 2, 3, 4, 5, 6]
        java_shuffle(items, JavaRandom(7))
        assert items == [4, 1, 2, 3, 6, 5]
