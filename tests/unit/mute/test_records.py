"""The mute manager's per-partition records (mutepro.mute.records)."""

from __future__ import annotations

from mutepro.mute.records import PartitionRecord
from tests.unit.mute._rules import StubBreaker


class TestRecentPeak:
    def test_the_peak_covers_the_previous_bucket(self) -> None:
        """A 0.3 s age seen 0.6 s ago is still the peak (previous 0.5 s bucket); 1.1 s later it is gone."""
        part = PartitionRecord(0, StubBreaker(), [])  # type: ignore[arg-type]
        assert part.note_age(0.3, 10.0) == 0.3
        assert part.note_age(0.0, 10.6) == 0.3
        assert part.note_age(0.0, 11.1) == 0.0

    def test_a_long_gap_forgets_the_old_peak(self) -> None:
        """Nothing noted for over two buckets: the old peak does not carry over."""
        part = PartitionRecord(0, StubBreaker(), [])  # type: ignore[arg-type]
        part.note_age(0.9, 10.0)
        assert part.note_age(0.01, 12.0) == 0.01
