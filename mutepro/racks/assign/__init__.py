"""Consumer partition assignment: ports of Kafka's assignors with KIP-881 racks, and the planner that compares them.

- :mod:`~mutepro.racks.assign.model`: the assignor input (members, cluster metadata) and result.
- :mod:`~mutepro.racks.assign.range` / :mod:`~mutepro.racks.assign.sticky`: the classic client-side assignors.
- :mod:`~mutepro.racks.assign.server`: KIP-848's server-side ``uniform``/``range`` assignors.
- :mod:`~mutepro.racks.assign.figures`: rack locality, cross-rack bytes, balance and moves of an assignment.
- :mod:`~mutepro.racks.assign.planner`: ``mutepro racks plan`` — build a scenario, run an assignor, report.
"""

from __future__ import annotations

from mutepro.racks.assign.figures import Figures, compute_figures
from mutepro.racks.assign.model import (
    Assignment,
    AssignmentStateError,
    ClusterMetadata,
    Member,
    Scenario,
    TopicPartition,
)
from mutepro.racks.assign.planner import PlanResult, load_scenario, plan, scenario_from_cluster, scenario_from_dict
from mutepro.racks.assign.range import RangeAssignor
from mutepro.racks.assign.server import server_assign
from mutepro.racks.assign.sticky import CooperativeStickyAssignor

__all__ = [
    "Assignment",
    "AssignmentStateError",
    "ClusterMetadata",
    "CooperativeStickyAssignor",
    "Figures",
    "Member",
    "PlanResult",
    "RangeAssignor",
    "Scenario",
    "TopicPartition",
    "compute_figures",
    "load_scenario",
    "plan",
    "scenario_from_cluster",
    "scenario_from_dict",
    "server_assign",
]
