"""The chaos soak's pure parts: the seeded schedule and the checker's arithmetic (no cluster needed)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

from soak_ledger import DELIVERED, FAILED, Ledger, ReadBack, compare, decode, encode, key_order
from soak_schedule import build_schedule


class TestSchedule:
    def test_same_seed_same_schedule(self) -> None:
        """A seed replays exactly; another seed differs."""
        assert build_schedule(7, 600, 150) == build_schedule(7, 600, 150)
        assert build_schedule(7, 600, 150) != build_schedule(8, 600, 150)

    @pytest.mark.parametrize("seed", range(20))
    def test_one_broker_at_a_time_and_a_quiet_tail(self, seed: int) -> None:
        """Broker faults never overlap (kill includes ~12 s to restart); nothing starts in the quiet tail."""
        faults = build_schedule(seed, 600, 150)
        broker = [f for f in faults if f.kind != "redis_restart"]
        for a, b in itertools.pairwise(broker):
            assert a.at + a.duration + (12 if a.kind == "kill" else 0) <= b.at
        assert all(f.at + f.duration <= 450 for f in faults)
        assert {f.kind for f in build_schedule(seed, 600, 150)} & {"stall", "limp", "kill"}


class TestChecker:
    def test_value_round_trip(self) -> None:
        """The ids written into a value are read back."""
        assert decode(encode(3, 1, 42, 7, b"pad")) == (3, 1, 42, 7)
        assert decode(b"garbage") is None

    def test_lost_and_duplicated(self) -> None:
        """Acknowledged-but-absent is lost; two copies is one duplicate; failed-but-present is counted apart."""
        ledger = Ledger(10)
        states = ledger.states(0, 0)
        states[0] = states[1] = states[2] = DELIVERED
        states[3] = FAILED
        read = ReadBack()
        read.copies.update({(0, 0, 0): 1, (0, 0, 2): 2, (0, 0, 3): 1})
        assert compare(ledger, 0, [0], read) == {"lost": 1, "duplicated": 1, "failed_but_written": 1}

    def test_inversions_and_left_home(self) -> None:
        """Per key and partition, a lower sequence after a higher one is an inversion; other partitions are
        'left home'."""
        read = ReadBack()
        read.by_key[b"k"] = [(0, 10, 0), (0, 11, 2), (0, 12, 1), (0, 13, 3), (1, 5, 4)]
        report = key_order(read)
        assert (report.inversions, report.left_home) == (1, 1)
        assert (report.first_copy_inversions, report.rewrites) == (1, 0)

    def test_a_rewritten_run_is_an_inversion_of_copies_not_of_first_copies(self) -> None:
        """Sequences 0-3 then 1-2 again (an epoch-bump rewrite): 2 inversions of copies, 0 of first copies."""
        read = ReadBack()
        read.by_key[b"k"] = [(0, 10, 0), (0, 11, 1), (0, 12, 2), (0, 13, 3), (0, 14, 1), (0, 15, 2)]
        report = key_order(read)
        assert (report.inversions, report.first_copy_inversions, report.rewrites) == (2, 0, 2)

    def test_a_first_copy_out_of_order_counts_even_among_rewrites(self) -> None:
        """Sequence 2 first written after 3 is a first-copy inversion, whatever else was rewritten."""
        read = ReadBack()
        read.by_key[b"k"] = [(0, 1, 0), (0, 2, 1), (0, 3, 3), (0, 4, 1), (0, 5, 2)]
        report = key_order(read)
        assert (report.first_copy_inversions, report.rewrites) == (1, 1)
