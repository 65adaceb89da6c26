"""The consumer-side replay filter."""

from __future__ import annotations

import pytest

from mutepro.spark.dedup import RESCUE_HEADER, ReplayFilter, row_identity


def ids(batch: str, row: str) -> list[tuple[str, bytes]]:
    return [("x-mutepro-batch", batch.encode()), ("x-mutepro-row", row.encode())]


class TestRowIdentity:
    def test_reads_both_headers(self) -> None:
        """The identity is the (batch, row) header pair; anything else is not a sink message."""
        assert row_identity([("a", b"1"), *ids("q:3", "0:7")]) == (b"q:3", b"0:7")
        assert row_identity([("x-mutepro-batch", b"q:3")]) is None
        assert row_identity(None) is None


class TestReplayFilter:
    def test_repeat_identity_is_a_replay(self) -> None:
        """A retried task's or re-run batch's copy repeats the first copy's identity and is dropped."""
        f = ReplayFilter()
        assert not f.is_replay(ids("q:3", "0:7"), b"k", b"v")
        assert f.is_replay(ids("q:3", "0:7"), b"k", b"v")
        assert not f.is_replay(ids("q:4", "0:7"), b"k", b"v")  # another batch: another row
        assert f.replays == 1

    def test_foreign_messages_pass_when_others_write_the_topic(self) -> None:
        """With headerless_are_copies=False, messages without the sink's headers are never replays."""
        f = ReplayFilter(headerless_are_copies=False)
        assert not f.is_replay(None, None, b"v")
        assert not f.is_replay(None, None, b"v")

    def test_headerless_copy_matched_by_content(self) -> None:
        """By default a message without any sink header is a re-sent copy (headers lost): matched by content."""
        f = ReplayFilter()
        assert not f.is_replay(ids("q:1", "0:1"), None, b"v")
        assert f.is_replay(None, None, b"v")

    @pytest.mark.parametrize("copy_first", [False, True])
    def test_rescued_copy_matched_by_content(self, copy_first: bool) -> None:
        """A rescued copy (which lost the identity headers) is matched to its original by key and value, in
        either order; only one of the two passes."""
        f = ReplayFilter()
        original = (ids("q:1", "1:5"), b"k", b"payload")
        copy = ([(RESCUE_HEADER, b"2")], b"k", b"payload")
        first, second = (copy, original) if copy_first else (original, copy)
        assert not f.is_replay(*first)
        assert f.is_replay(*second)
        assert not f.is_replay([(RESCUE_HEADER, b"2")], b"k", b"other")

    def test_capacity_bounds_memory(self) -> None:
        """Beyond capacity the oldest identity is forgotten."""
        f = ReplayFilter(capacity=2)
        for row in ("0:0", "0:1", "0:2"):
            f.is_replay(ids("q:0", row))
        assert not f.is_replay(ids("q:0", "0:0"))
        with pytest.raises(ValueError, match="capacity"):
            ReplayFilter(capacity=0)
