"""The trace format's age counts (mutepro.trace.format)."""

from __future__ import annotations

from mutepro.trace import AGE_EDGES_S
from mutepro.trace.format import AgeCounts


class TestAgeCounts:
    def test_exact_at_an_edge_and_never_more_than_were_there(self) -> None:
        counts = AgeCounts(3.0, (50, 40, 30, 20, 10), 60)  # older than 0.1, 0.25, 0.5, 1, 2 s
        assert AGE_EDGES_S[3] == 1.0
        assert counts.count_older_than(1.0) == 20
        assert counts.count_older_than(0.7) == 20  # between 0.5 and 1: the count at 1 s
        assert counts.count_older_than(4.0) == 0  # the oldest is 3 s
        assert counts.count_older_than(2.5) == 1  # past the last recorded edge: the oldest itself

    def test_nothing_outstanding(self) -> None:
        assert AgeCounts(None, (), 0).count_older_than(0.0) == 0
