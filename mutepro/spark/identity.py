"""The identity the sink stamps on every row, so that a reader can tell a replay from a new row.

A row is named by (batch label, Spark partition id, row index in the task): the label is
``<query id or write id>:<batch id>``, the same on every attempt of a task and every re-run of a micro-batch, so a
replayed row repeats its first copy's identity exactly (as long as the batch's input is deterministic).

**Binary (the default)**: one header ``x-mutepro-id``, 29 bytes::

    version (1 byte, = 1) | blake2b-128 of the label (16) | partition id (4, big-endian) | row index (8, big-endian)

The first 21 bytes are the same for every row of a task and are built once per task (:func:`task_prefix`); C
appends the row index (``_fastpath.row_id``, also behind ``FastPath.produce_rows``), so the per-row Python path
and the C loop write the same bytes. Kafka has no per-batch or per-producer-request headers (the v2 record batch
carries headers per record only; its producer id and base sequence belong to librdkafka and change with the
producer), so the label cannot be written once per task: every record carries it, here as a 16-byte digest.

**Collision bound**: partition and row index are stored exactly, so distinct rows share an identity only if two
distinct labels share a 128-bit digest. Among ``n`` labels that is at most ``n(n-1)/2 / 2**128``: for a billion
labels (a micro-batch every 100 ms for three years) about ``1.5e-21``.

**Two strings (the older format)**: ``x-mutepro-batch`` (the label) and ``x-mutepro-row``
(``<partition>:<row index>``). :func:`row_identity` reads both formats into the same canonical 29 bytes, so a
row first written in one format and replayed in the other is still recognised.
"""

from __future__ import annotations

import functools
import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mutepro.producer.accel import fastpath
from mutepro.spark.errors import IdentityError

#: The default: one binary header per row (the layout above).
ID_HEADER = "x-mutepro-id"
#: Older format, first header: the batch label, ``<query id or write id>:<batch id>``.
BATCH_HEADER = "x-mutepro-batch"
#: Older format, second header: ``<Spark partition id>:<row index in the task>``.
ROW_HEADER = "x-mutepro-row"

ID_VERSION = 1
_PREFIX = struct.Struct(">B16sI")  # version, label digest, partition id: 21 bytes, once per task
_ID = struct.Struct(">B16sIQ")  # ... and the row index: 29 bytes per row
ID_SIZE = _ID.size

Headers = Sequence[tuple[str, Any]] | None


@dataclass(frozen=True)
class RowId:
    """One decoded identity: the batch label's digest, the Spark partition id and the row index in the task."""

    label_digest: bytes
    partition: int
    row: int

    def of_label(self, label: str | bytes) -> bool:
        """True if this row was written in the batch labelled ``label``."""
        return label_digest(label) == self.label_digest


@functools.lru_cache(maxsize=4096)  # a reader of old headers sees the same few labels on millions of rows
def label_digest(label: str | bytes) -> bytes:
    """blake2b-128 of the batch label (UTF-8 when a str)."""
    data = label.encode() if isinstance(label, str) else bytes(label)
    return hashlib.blake2b(data, digest_size=16).digest()


def task_prefix(label: str | bytes, partition: int) -> bytes:
    """The 21 bytes every row of a task starts its identity with."""
    if not 0 <= partition < 2**32:
        raise ValueError(f"partition id {partition} does not fit the identity's 4 bytes (0 .. 2**32-1)")
    return _PREFIX.pack(ID_VERSION, label_digest(label), partition)


def row_id(prefix: bytes, row: int) -> bytes:
    """One row's identity: ``prefix`` then ``row`` as 8 bytes big-endian, built by the same C code the loop uses."""
    return fastpath.row_id(prefix, row)


def decode_identity(value: bytes) -> RowId:
    """The parts of an ``x-mutepro-id`` value; :class:`~mutepro.spark.errors.IdentityError` (a ValueError) says
    what is wrong with one that is not."""
    if len(value) != ID_SIZE or value[0] != ID_VERSION:
        raise IdentityError(
            f"{ID_HEADER}: expected {ID_SIZE} bytes starting with version {ID_VERSION}, got {len(value)} bytes "
            f"starting with {value[:1]!r}; a value written by a newer mutepro needs that version to decode it "
            "(ReplayFilter compares values without decoding them)"
        )
    _, digest, partition, row = _ID.unpack(value)
    return RowId(digest, partition, row)


def from_strings(batch: bytes, row: bytes) -> bytes:
    """The canonical identity of a row written with the two string headers (the same bytes the binary header of
    that row would hold). A row header that is not ``<partition>:<row>`` keeps its raw text, marked by a version
    byte of 0 so that it can never equal a binary identity."""
    part, sep, index = bytes(row).partition(b":")
    if sep and part.isdigit() and index.isdigit() and int(part) < 2**32 and int(index) < 2**64:
        return _ID.pack(ID_VERSION, label_digest(bytes(batch)), int(part), int(index))
    raw = bytes(batch)
    return b"\0" + len(raw).to_bytes(4, "big") + raw + bytes(row)


def row_identity(headers: Headers) -> bytes | None:
    """The canonical identity (29 bytes, see the module) of a message written by the sink in either format, or
    None for other messages."""
    batch = row = None
    for name, value in headers or ():
        if name == ID_HEADER and value is not None:
            return bytes(value)
        if name == BATCH_HEADER:
            batch = value
        elif name == ROW_HEADER:
            row = value
    if batch is None or row is None:
        return None
    return from_strings(batch, row)


@dataclass(frozen=True)
class TaskIds:
    """The writer's side: how one task stamps its rows, in the arguments ``FastPath.produce_rows`` takes."""

    name: str  # the per-row header's name
    prefix: str | bytes  # bytes: binary (task_prefix); str: the strings format's "<partition>:"
    fixed: tuple[str, bytes] | None = None  # the strings format's batch header, the same pair on every row

    @classmethod
    def for_task(cls, id_format: str, label: str, partition: int) -> TaskIds:
        """The task's identity in ``id_format`` (``binary`` or ``strings``, SinkOptions.id_format)."""
        if id_format == "strings":
            return cls(ROW_HEADER, f"{partition}:", (BATCH_HEADER, label.encode()))
        return cls(ID_HEADER, task_prefix(label, partition))

    def headers(self, row: int) -> list[tuple[str, Any]]:
        """The identity headers of row ``row`` of the task, as ``produce_rows`` writes them."""
        if isinstance(self.prefix, bytes):
            return [(self.name, row_id(self.prefix, row))]
        assert self.fixed is not None  # for_task sets it with a str prefix
        return [self.fixed, (self.name, f"{self.prefix}{row}")]
