"""The consumer-side replay filter."""

from __future__ import annotations

import pytest

from mutepro.spark.dedup import RESCUE_HEADER, ReplayFilter, row_identity
from mutepro.spark.identity import TaskIds


def ids(batch: str, row: str) -> list[tuple[str, bytes]]:
    """The binary header (the sink's default) of row "<partition>:<index>" of batch ``batch``."""
    part, index = row.split(":")
    return TaskIds.for_task("binary", batch, int(part)).headers(int(index))


def old_ids(batch: str, row: str) -> list[tuple[str, bytes]]:
    """The two string headers the sink wrote before the binary one (and with mutepro.idFormat=strings)."""
    return [("x-mutepro-batch", batch.encode()), ("x-mutepro-row", row.encode())]


class TestRowIdentity:
    def test_reads_both_formats(self) -> None:
        """The binary header and the older pair name the same row alike; anything else is not a sink message."""
        assert row_identity([("a", b"1"), *ids("q:3", "0:7")]) == row_identity([("a", b"1"), *old_ids("q:3", "0:7")])
        assert row_identity([("x-mutepro-batch", b"q:3")]) is None
        assert row_identity(None) is None


class TestOlderRecords:
    def test_old_format_records_are_filtered(self) -> None:
        """Records with the two string headers only (a topic written before the binary header): repeats dropped."""
        f = ReplayFilter()
        assert not f.is_replay(old_ids("q:3", "0:7"), b"k", b"v")
        assert f.is_replay(old_ids("q:3", "0:7"), b"k", b"v")
        assert not f.is_replay(old_ids("q:3", "0:8"), b"k", b"v2")
        assert not f.is_replay(old_ids("q:4", "0:7"), b"k", b"v")
        assert f.replays == 1

    @pytest.mark.parametrize("old_first", [True, False])
    def test_a_replay_across_an_upgrade_is_recognised(self, old_first: bool) -> None:
        """A row first written with the old headers and replayed with the binary one (or back) is a replay."""
        f = ReplayFilter()
        first, second = (old_ids, ids) if old_first else (ids, old_ids)
        assert not f.is_replay(first("q:3", "2:9"), b"k", b"v")
        assert f.is_replay(second("q:3", "2:9"), b"k", b"v")
        assert not f.is_replay(second("q:3", "2:10"), b"k", b"v3")


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
