"""Consumer side: drop the replays the sink's at-least-once delivery can produce.

Every message the sink writes carries its row's identity (batch label, Spark partition, row index in the task): by
default one binary ``x-mutepro-id`` header, or (``mutepro.idFormat=strings``, and every version before it) the two
headers ``x-mutepro-batch`` and ``x-mutepro-row``; see :mod:`mutepro.spark.identity`. Both formats are read, into
the same canonical identity, so a topic holding both (written across an upgrade) is filtered as one. A retried
task, a re-run micro-batch and a message mutepro re-sent from a muted partition (that copy also carries
``x-mutepro-rescued-from``) all repeat the identity of the first copy, so a reader that remembers identities
can drop them::

    replays = ReplayFilter()
    for msg in consumer_messages:
        if replays.is_replay(msg.headers()):
            continue
        handle(msg)

Identities are only stable when the batch's input is (same rows in the same Spark partitions on a re-run):
true of Kafka, files and ``rate`` sources, not of a non-deterministic transformation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from mutepro.spark.identity import Headers, row_identity

__all__ = ["RESCUE_HEADER", "ReplayFilter", "row_identity"]

#: The header MuteProducer's rescue adds (``rescue.header`` in the policy; this is its default).
RESCUE_HEADER = "x-mutepro-rescued-from"


class ReplayFilter:
    """Remembers the identities seen (the newest ``capacity``) and reports repeats.

    A message MuteProducer re-sent (rescued from a muted partition, marked ``x-mutepro-rescued-from``, or
    re-queued while it purged its queue) keeps the original's headers, identity included (MuteProducer hands
    them back to the failed report it re-sends from). A copy without them (written by a version that lost
    them) is matched to its original by content (a hash of key and value), in either order. With
    ``headerless_are_copies`` (the default, for a topic only the sink writes), every message without the
    sink's headers is treated so; set it to False when other producers write the topic too: then only
    messages marked rescued are. Capacity bounds memory: pick more than the rows a replay can reach back.
    """

    def __init__(
        self, capacity: int = 10_000_000, *, headerless_are_copies: bool = True, rescue_header: str = RESCUE_HEADER
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.headerless_are_copies = headerless_are_copies
        self.rescue_header = rescue_header
        self._seen: dict[bytes, None] = {}  # canonical identities (identity.row_identity)
        self._content: dict[bytes, bool] = {}  # content hash -> came as an identity-less rescued copy
        self.replays = 0

    def is_replay(self, headers: Headers, key: bytes | None = None, value: bytes | None = None) -> bool:
        """True if a message with these headers (and key and value) was seen before; remembers it otherwise."""
        identity = row_identity(headers)
        if identity is not None:
            if identity in self._seen:
                self.replays += 1
                return True
            self._remember(self._seen, identity, None)
            if value is None:
                return False
            digest = _digest(key, value)
            if self._content.get(digest):  # its rescued copy came first
                self._content[digest] = False
                self.replays += 1
                return True
            self._remember(self._content, digest, False)
            return False
        if value is None:
            return False
        if not self.headerless_are_copies and not any(name == self.rescue_header for name, _ in headers or ()):
            return False
        digest = _digest(key, value)
        if digest in self._content:
            self.replays += 1
            return True
        self._remember(self._content, digest, True)
        return False

    def fresh(self, messages: Iterable[Any]) -> Iterable[Any]:
        """The messages (confluent_kafka ``Message``) that are not replays, in order."""
        for msg in messages:
            if not self.is_replay(msg.headers(), msg.key(), msg.value()):
                yield msg

    def _remember(self, table: dict[Any, Any], item: Any, flag: Any) -> None:
        table[item] = flag
        if len(table) > self.capacity:
            del table[next(iter(table))]  # dicts keep insertion order: the oldest goes


def _digest(key: bytes | None, value: bytes) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update(b"" if key is None else key)
    h.update(b"\0" if key is None else b"\1")
    h.update(value)
    return h.digest()
