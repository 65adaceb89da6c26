"""The reference model of the sink's many-rows loop (tests/reference/rows.py), which the C FastPath.produce_rows is
checked against (tests/unit/producer/test_fastpath.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reference.rows import produce_rows

FIXED = ("x-mutepro-batch", b"q:1")


class Sent:
    """produce() records its calls; raises BufferError at the calls listed in ``full_at``."""

    def __init__(self, full_at: tuple[int, ...] = ()) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.full_at = set(full_at)
        self.attempts = 0

    def __call__(self, topic: str, value: Any, key: Any = None, *, headers: Any = None) -> None:
        self.attempts += 1
        if self.attempts in self.full_at:
            raise BufferError("Local: Queue full")
        self.calls.append((topic, value, key, headers))


class TestProduceRows:
    def test_rows_carry_keys_and_identity_headers(self) -> None:
        """Row i gets keys[i] and the headers [fixed, (name, prefix + str(first + i))]."""
        sent = Sent()
        assert produce_rows(sent, "t", [b"a", b"b"], [b"k", None], FIXED, "x-mutepro-row", "3:", 10) == 2
        assert sent.calls == [("t", b"a", b"k", [FIXED, ("x-mutepro-row", "3:10")]),
                              ("t", b"b", None, [FIXED, ("x-mutepro-row", "3:11")])]

    def test_no_keys_no_headers(self) -> None:
        """keys None and fixed None: unkeyed rows without headers."""
        sent = Sent()
        assert produce_rows(sent, "t", [b"a"], None, None, "x-mutepro-row", "0:", 0) == 1
        assert sent.calls == [("t", b"a", None, None)]

    def test_full_queue_returns_the_row_and_begin_resumes(self) -> None:
        """A BufferError returns the index of the row not sent; calling again from it sends the rest in order."""
        sent = Sent(full_at=(2,))
        values = [b"r0", b"r1", b"r2"]
        assert produce_rows(sent, "t", values, None, FIXED, "x-mutepro-row", "0:", 0) == 1
        assert produce_rows(sent, "t", values, None, FIXED, "x-mutepro-row", "0:", 0, begin=1) == 3
        assert [c[1] for c in sent.calls] == values

    def test_keys_of_another_length_are_refused(self) -> None:
        """Keys and values of different lengths are a ValueError before any row is sent."""
        sent = Sent()
        with pytest.raises(ValueError, match="differ in length"):
            produce_rows(sent, "t", [b"a", b"b"], [b"k"], None, "x-mutepro-row", "0:", 0)
        assert sent.calls == []
