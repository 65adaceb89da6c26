"""Reference model of ``FastPath.produce_rows`` (``mutepro/producer/_fastpath.c``), the Spark sink's produce loop:
the tests check the C loop against it and use it in fakes. The library ships only the C loop.

Every row ``i`` from ``begin`` is ``produce(topic, values[i], keys[i], headers=h)``, where ``h`` is the sink's
identity for row ``first + i``:

- ``prefix`` bytes (the sink's default, one binary header): ``[(name, prefix + (first + i) as 8 bytes big-endian)]``;
  ``fixed`` must be None;
- ``prefix`` str (the older two string headers): ``[fixed, (name, f"{prefix}{first + i}")]``, or None (no headers
  at all) when ``fixed`` is None.

The loop stops at the first row the queue has no room for (``BufferError``) and returns its index, so that the
caller can serve delivery reports and go on from there; ``len(values)`` when every row went.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def row_id(prefix: bytes, n: int) -> bytes:
    """The binary identity header's value for row ``n``: what ``_fastpath.row_id`` returns."""
    if n < 0:
        raise ValueError("row_id: n must be >= 0")
    return prefix + n.to_bytes(8, "big")


def produce_rows(
    produce: Callable[..., Any], topic: str, values: list[Any], keys: list[Any] | None,
    fixed: tuple[str, Any] | None, name: str, prefix: str | bytes, first: int, begin: int = 0,
) -> int:
    """What ``FastPath.produce_rows`` does: index of the first row not produced (see the module)."""
    if keys is not None and len(keys) != len(values):
        raise ValueError("produce_rows: keys and values differ in length")
    if isinstance(prefix, bytes) and fixed is not None:
        raise TypeError("produce_rows: fixed must be None with a bytes prefix (one binary header)")
    for i in range(begin, len(values)):
        headers: list[tuple[str, Any]] | None
        if isinstance(prefix, bytes):
            headers = [(name, row_id(prefix, first + i))]
        else:
            headers = None if fixed is None else [fixed, (name, f"{prefix}{first + i}")]
        try:
            produce(topic, values[i], None if keys is None else keys[i], headers=headers)
        except BufferError:
            return i
    return len(values)
