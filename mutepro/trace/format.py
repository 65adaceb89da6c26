"""The trace file: what a detector saw, one JSON record per line, gzip-compressed.

A trace holds the *evidence* a mute decision is made from, not the decisions' inputs of one particular model: per
detection round, each busy partition's counts (sent, undelivered, their bytes), the age of its oldest undelivered
message and how many undelivered messages are older than each of :data:`AGE_EDGES_S`, and the delivery reports
since the round before (calls, failures, slow); the topic's metadata (leader, replicas, in-sync replicas) when it
changes; librdkafka's broker statistics; the decisions the recording producer made; and, from a harness that
injects faults, the faults themselves (what replay tests judge decisions against).

Records (``kind`` first):

- ``{"kind": "start", "version": 1, "t": ..., "wall": ..., "policy": {topic: TopicPolicy dump}, "client": {...}}``
- ``{"kind": "meta", "t": ..., "topic": ..., "partitions": [[p, leader, [replicas], [isr]], ...]}``
- ``{"kind": "round", "t": ..., "reports": [[topic, p, calls, failures, slow], ...],
  "loads": [[topic, p, sent, outstanding, bytes, oldest_ms, warm, [older than each edge]], ...]}``
- ``{"kind": "stats", "t": ..., "msg_cnt": ..., ..., "brokers": {id: BrokerStats fields}}`` (per emission)
- ``{"kind": "decision", "t": ..., "event": kind, "topic": ..., "partition": ..., "broker": ..., "reason": ...}``
- ``{"kind": "fault", "t": ..., "broker": id, "fault": "stall" | "limp" | "kill", "end": t or null, ...}``

``t`` is the recording producer's monotonic clock in seconds; only differences mean anything.

Size, worked: 12 busy partitions at 20 rounds a second is 240 load rows a second, ~60 bytes each before gzip and
~10 after: a 60 s trace is ~150 KB. A producer writing 300 partitions makes ~25x that, which is why the recorder
bounds a trace by records (:data:`MAX_RECORDS`) rather than by time.
"""

from __future__ import annotations

import bisect
import gzip
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutepro.errors import ConfigError

VERSION = 1

#: The ages (seconds) at which a round counts a partition's undelivered messages: enough to answer "how many are
#: older than X" for any X a policy may set, to the nearest edge below it (1 s, the default slow threshold, is an
#: edge, so the default policy replays exactly).
AGE_EDGES_S: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0)

#: A trace stops recording after this many records (a round is one record): 20 rounds a second for 2.5 hours.
MAX_RECORDS = 200_000


@dataclass(frozen=True)
class AgeCounts(Sequence[float]):
    """A partition's undelivered messages as a trace holds them: the oldest one's age and how many are older than
    each of :data:`AGE_EDGES_S`. Stands in for the tracker's lazy ages (``PartitionLoad.ages_s``) on replay."""

    oldest_s: float | None
    older: tuple[int, ...]
    outstanding: int

    def count_older_than(self, age_s: float) -> int:
        """How many undelivered messages were older than ``age_s``: exact at an edge, else the count at the edge
        just above ``age_s`` (never more than were there), and 1 for the oldest past the last edge."""
        if self.oldest_s is None or self.oldest_s <= age_s:
            return 0
        i = bisect.bisect_left(AGE_EDGES_S, age_s)
        if i < len(AGE_EDGES_S) and i < len(self.older):
            return max(1, self.older[i])
        return 1

    def __len__(self) -> int:
        return self.outstanding

    def __getitem__(self, i: Any) -> Any:
        """The ``i``-th oldest age (descending): exact for the oldest, else the largest edge that more than ``i``
        messages were older than (a lower bound), 0.0 below the first edge."""
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.outstanding))]
        if i < 0:
            i += self.outstanding
        if not 0 <= i < self.outstanding or self.oldest_s is None:
            raise IndexError(i)
        if i == 0:
            return self.oldest_s
        age = 0.0
        for edge, n in zip(AGE_EDGES_S, self.older, strict=False):
            if n > i:
                age = edge
        return age


class TraceError(ConfigError):
    """A trace file that cannot be read: missing, not a trace, or of another version."""


def open_trace(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The records of a trace file, in order (gzip or plain JSON lines)."""
    p = Path(path)
    if not p.is_file():
        raise TraceError(f"trace: {p} is not a file (record one with `mutepro trace record` or trace=...)")
    opener = gzip.open if p.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(p, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise TraceError(f"trace: {p} line {n} is not JSON ({err.msg}); is it a mutepro trace?") from None
            if n == 1 and (rec.get("kind") != "start" or rec.get("version") != VERSION):
                raise TraceError(
                    f"trace: {p} does not start with a version-{VERSION} start record; record it again with this "
                    "mutepro version"
                )
            yield rec


class TraceWriter:
    """Appends records to a gzip JSON-lines file; stops (and says so once) after ``max_records``."""

    def __init__(self, path: str | os.PathLike[str], *, max_records: int = MAX_RECORDS) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = gzip.open(self.path, "wt", encoding="utf-8", compresslevel=6)  # noqa: SIM115 - closed by close()
        self._left = max_records
        self.truncated = False

    def write(self, record: Mapping[str, Any]) -> None:
        if self._left <= 0:
            self.truncated = True
            return
        self._left -= 1
        self._f.write(json.dumps(record, separators=(",", ":")))
        self._f.write("\n")

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()


def append_records(path: str | os.PathLike[str], records: Sequence[Mapping[str, Any]]) -> None:
    """Append records to a finished trace as one more gzip member (readers see one stream): how a harness adds
    the faults it injected, on the producer's clock (``time.monotonic``), once the producer has closed."""
    with gzip.open(Path(path), "at", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, separators=(",", ":")))
            f.write("\n")
