"""Consumer side: drop the replays the sink's at-least-once delivery can produce.

Every message the sink writes carries ``x-mutepro-batch`` (query or write id, and batch id) and
``x-mutepro-row`` (Spark partition and row index in the task). A retried task, a re-run micro-batch and a
message mutepro re-sent from a muted partition (that copy also carries ``x-mutepro-rescued-from``) all repeat
the identity of the first copy, so a reader that remembers identities can drop them::

    replays = ReplayFilter()
    for msg in consumer_messages:
        if replays.is_replay(msg.headers()):
            continue
        handle(msg)

Identities are only stable when the batch's input is (same rows in the same Spark partitions on a re-run):
true of Kafka, files and ``rate`` sources, not of a non-deterministic transformation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mutepro.spark.core import BATCH_HEADER, ROW_HEADER

Headers = Sequence[tuple[str, Any]] | None


def row_identity(headers: Headers) -> tuple[bytes, bytes] | None:
    """(batch, row) header values of a message written by the sink, or None for other messages."""
    batch = row = None
    for name, value in headers or ():
        if name == BATCH_HEADER:
            batch = value
        elif name == ROW_HEADER:
            row = value
    if batch is None or row is None:
        return None
    return (bytes(batch), bytes(row))


class ReplayFilter:
    """Remembers the identities seen (the newest ``capacity``) and reports repeats.

    Messages without the sink's headers are never replays. Capacity bounds memory: pick more than the rows a
    replay can reach back (a micro-batch, or the retried task's partition).
    """

    def __init__(self, capacity: int = 10_000_000) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._seen: dict[tuple[bytes, bytes], None] = {}
        self.replays = 0

    def is_replay(self, headers: Headers) -> bool:
        """True if a message with these headers was seen before (and counts it); remembers it otherwise."""
        identity = row_identity(headers)
        if identity is None:
            return False
        if identity in self._seen:
            self.replays += 1
            return True
        self._seen[identity] = None
        if len(self._seen) > self.capacity:
            del self._seen[next(iter(self._seen))]  # dicts keep insertion order: the oldest goes
        return False

    def fresh(self, messages: Iterable[Any]) -> Iterable[Any]:
        """The messages (confluent_kafka ``Message``) that are not replays, in order."""
        for msg in messages:
            if not self.is_replay(msg.headers()):
                yield msg
