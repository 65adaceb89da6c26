"""Run ``KraftHarness.java`` (the real ``StripedReplicaPlacer`` and server-side assignors) from Python.

Cases are built from the same objects the ports take, so a differential test hands one list of inputs to
both sides; every case runs in one JVM (see :func:`javaharness.harness.run_harness`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from javaharness.harness import run_harness
from mutepro.racks.assign.server import GroupAssignment, GroupState
from mutepro.racks.striped import UsableBroker

SOURCE = Path(__file__).with_name("KraftHarness.java")


@dataclass(frozen=True)
class PlacementStep:
    """One ``place()`` call: ``partitions`` new partitions from ``start`` at ``rf`` over ``brokers``."""

    brokers: tuple[UsableBroker, ...]
    partitions: int
    rf: int
    start: int = 0


def placement_case(case_id: str, seed: int, steps: Sequence[PlacementStep]) -> dict[str, Any]:
    """A placement case: one placer seeded with ``seed`` runs ``steps`` in order."""
    return {
        "id": case_id,
        "kind": "placement",
        "seed": seed,
        "steps": [
            {
                "partitions": s.partitions,
                "rf": s.rf,
                "start": s.start,
                "brokers": [{"id": b.id, "rack": b.rack, "fenced": b.fenced} for b in s.brokers],
            }
            for s in steps
        ],
    }


def controller_case(
    case_id: str, seed: int, brokers: Sequence[UsableBroker], partitions: int, rf: int
) -> dict[str, Any]:
    """A placement through a real ``BrokerHeartbeatManager``: ``brokers`` registered in this order."""
    return {
        "id": case_id,
        "kind": "controller",
        "seed": seed,
        "partitions": partitions,
        "rf": rf,
        "brokers": [{"id": b.id, "rack": b.rack, "fenced": b.fenced} for b in brokers],
    }


def group_case(case_id: str, assignor: str, group: GroupState) -> dict[str, Any]:
    """A group case for the server-side ``assignor`` (``uniform`` or ``range``)."""
    return {
        "id": case_id,
        "kind": "group",
        "assignor": assignor,
        "topics": [
            {"name": t.name, "msb": t.topic_id.msb, "lsb": t.topic_id.lsb, "partitions": t.partitions}
            for t in group.topics.values()
        ],
        "members": [
            {
                "id": m.member_id,
                "instance": m.instance_id,
                "rack": m.rack,
                "topics": list(m.topics),
                "assignment": [{"topic": t, "partitions": list(ps)} for t, ps in m.assignment],
            }
            for m in group.members
        ],
        "joined_last": group.joined_last,
    }


@dataclass(frozen=True)
class KraftOutcome:
    """Java's answer to one case: placements (per step, per partition), a group assignment, or an error."""

    placements: list[list[list[int]]] | None = None
    assignment: GroupAssignment | None = None
    error: str | None = None


def run_kraft(cases: Sequence[dict[str, Any]]) -> dict[str, KraftOutcome]:
    """Run every case in one JVM; outcomes by case id."""
    outcomes: dict[str, KraftOutcome] = {}
    for row in run_harness(SOURCE, cases):
        if "error" in row:
            outcomes[row["id"]] = KraftOutcome(error=row["error"])
        elif "placements" in row:
            outcomes[row["id"]] = KraftOutcome(placements=row["placements"])
        else:
            assignment = {m: {t: set(ps) for t, ps in topics.items()} for m, topics in row["assignment"].items()}
            outcomes[row["id"]] = KraftOutcome(assignment=assignment)
    return outcomes
