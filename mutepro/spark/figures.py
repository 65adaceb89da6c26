"""Per-task and per-batch figures: rows written, rerouted, held, rescued, failed, muted partitions, write time.

Each task returns its :class:`TaskFigures` to the driver (the data source's commit message, or a row of the
``foreachBatch`` sink's tiny result), and logs them as one structured event in the executor's log. The driver
folds them into one :class:`BatchFigures` per batch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field


@dataclass
class TaskFigures:
    """What one task wrote."""

    partition: int = -1  # Spark's partition id of the task
    attempt: int = 0
    producer: str = ""  # "<worker pid>/<producer name>": the worker's cached producer that wrote the rows
    rows: int = 0
    rerouted: int = 0
    held: int = 0
    rescued: int = 0
    failed: int = 0
    # times the task's flush took back messages stuck in flight to muted partitions (see mutepro.spark.flushing)
    inflight_rescues: int = 0
    # partitions the task's flush muted itself (mutepro.hedgeAfter: its last messages waited on them alone)
    hedged: int = 0
    muted: list[str] = field(default_factory=list)  # "topic:partition" muted at the task's end
    seconds: float = 0.0  # the whole task: produce and flush
    flush_seconds: float = 0.0  # of which waiting for deliveries at the end
    # mute decisions of the worker's producer since its previous task: [kind, "topic:partition", broker, epoch s]
    # (kind: mute, remute, unmute), so the driver sees when partitions were muted and unmuted, not just that
    events: list[list[object]] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> TaskFigures:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class BatchFigures:
    """One batch (or one batch write) over all its tasks."""

    batch_id: int | None
    tasks: int
    rows: int
    rerouted: int
    held: int
    rescued: int
    failed: int
    muted_partitions: tuple[str, ...]
    write_seconds: float  # the slowest task: what the batch waited for
    flush_seconds: float  # the slowest task's end-of-task wait for deliveries
    producers: tuple[str, ...] = ()  # the distinct worker producers that wrote the batch
    inflight_rescues: int = 0  # over all tasks: see TaskFigures
    hedged: int = 0  # over all tasks: see TaskFigures
    # every task's mute decisions, oldest first: (kind, "topic:partition", broker, epoch s, producer)
    events: tuple[tuple[object, ...], ...] = ()

    @classmethod
    def of(cls, batch_id: int | None, tasks: Iterable[TaskFigures]) -> BatchFigures:
        items = list(tasks)
        return cls(
            batch_id=batch_id,
            tasks=len(items),
            rows=sum(t.rows for t in items),
            rerouted=sum(t.rerouted for t in items),
            held=sum(t.held for t in items),
            rescued=sum(t.rescued for t in items),
            failed=sum(t.failed for t in items),
            muted_partitions=tuple(sorted({m for t in items for m in t.muted})),
            write_seconds=max((t.seconds for t in items), default=0.0),
            flush_seconds=max((t.flush_seconds for t in items), default=0.0),
            producers=tuple(sorted({t.producer for t in items if t.producer})),
            inflight_rescues=sum(t.inflight_rescues for t in items),
            hedged=sum(t.hedged for t in items),
            events=tuple(sorted(((*e, t.producer) for t in items for e in t.events), key=lambda e: float(e[3])))  # type: ignore[arg-type]  # [kind, where, broker, at],
        )

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["muted_partitions"] = list(self.muted_partitions)
        data["producers"] = list(self.producers)
        data["events"] = [list(e) for e in self.events]
        return data
