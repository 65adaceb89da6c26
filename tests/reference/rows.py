"""Reference model of ``FastPath.produce_rows`` (``mutepro/producer/_fastpath.c``), the Spark sink's produce loop:
the tests check the C loop against it and use it in fakes. The library ships only the C loop.

Every row ``i`` from ``begin`` is ``produce(topic, values[i], keys[i], headers=h)``, where ``h`` is the sink's
two identity headers ``[fixed, (name, f"{prefix}{first + i}")]`` (None when ``fixed`` is None). The loop stops
at the first row the queue has no room for (``BufferError``) and returns its index, so that the caller can serve
delivery reports and go on from there; ``len(values)`` when every row went.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def produce_rows(
    produce: Callable[..., Any], topic: str, values: list[Any], keys: list[Any] | None,
    fixed: tuple[str, Any] | None, name: str, prefix: str, first: int, begin: int = 0,
) -> int:
    """What ``FastPath.produce_rows`` does: index of the first row not produced (see the module)."""
    if keys is not None and len(keys) != len(values):
        raise ValueError("produce_rows: keys and values differ in length")
    for i in range(begin, len(values)):
        headers = None if fixed is None else [fixed, (name, f"{prefix}{first + i}")]
        try:
            produce(topic, values[i], None if keys is None else keys[i], headers=headers)
        except BufferError:
            return i
    return len(values)
