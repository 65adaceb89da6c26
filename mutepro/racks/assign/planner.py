"""Plan a group's assignment: build the scenario (file or live cluster), run an assignor, report the figures.

Scenario file (YAML or JSON)::

    brokers: {1: rack-a, 2: rack-b, 3: rack-c}      # or [{id: 1, rack: rack-a}, ...]; rack may be null
    topics:
      orders: {replicas: [[1], [2], [3]]}          # replica broker ids per partition, leader first
      clicks: {partitions: 6, replication_factor: 2, bytes_per_partition: 1048576}  # striped placement
    partition_bytes: {orders-0: 5000}              # optional per-partition estimates
    members:
      - {id: c0, topics: [orders], rack: rack-a, owned: [orders-0], generation: 3, group_instance_id: i0}

Live: brokers and replica placement come from ``describe_cluster``/``describe_topics``; members come from a
spec such as ``c0@rack-a,c1@rack-b`` (all subscribing to the given topics).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mutepro.errors import ClusterError, ConfigError
from mutepro.racks.assign.figures import Figures, compute_figures
from mutepro.racks.assign.model import Assignment, ClusterMetadata, Member, Scenario, TopicPartition
from mutepro.racks.assign.range import RangeAssignor
from mutepro.racks.assign.sticky import CooperativeStickyAssignor

ASSIGNORS = ("range", "cooperative-sticky")
_ADMIN_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class PlanResult:
    """An assignor's plan for one scenario: this rebalance's assignment, the converged target and figures."""

    assignor: str
    scenario: Scenario
    assignment: Assignment
    target: Assignment
    moving: Mapping[TopicPartition, str] = field(default_factory=dict)

    @property
    def figures(self) -> Figures:
        """Figures of this rebalance's assignment."""
        return compute_figures(self.scenario, self.assignment)

    @property
    def target_figures(self) -> Figures:
        """Figures once every moving partition reached its new owner."""
        return compute_figures(self.scenario, self.target)

    def to_rows(self) -> list[dict[str, object]]:
        """One row per member, for a table."""
        figures = {f.member_id: f for f in self.target_figures.members}
        rows: list[dict[str, object]] = []
        for member in self.scenario.members:
            f = figures[member.member_id]
            incoming = sorted(str(tp) for tp, m in self.moving.items() if m == member.member_id)
            rows.append(
                {
                    "member": member.member_id,
                    "instance": member.group_instance_id or "",
                    "rack": member.rack or "-",
                    "partitions": ", ".join(str(tp) for tp in self.target.get(member.member_id, ())),
                    "count": f.partitions,
                    "local": f.local,
                    "cross_rack": f.mismatched,
                    "cross_rack_bytes": f.cross_rack_bytes,
                    "leader_cross_rack": f.leader_cross_rack,
                    "incoming": ", ".join(incoming),
                }
            )
        return rows

    def to_dict(self) -> dict[str, object]:
        """Plain data for ``--json``."""
        return {
            "assignor": self.assignor,
            "assignment": {m: [str(tp) for tp in ps] for m, ps in self.assignment.items()},
            "target": {m: [str(tp) for tp in ps] for m, ps in self.target.items()},
            "moving": {str(tp): m for tp, m in sorted(self.moving.items(), key=lambda kv: str(kv[0]))},
            "figures": self.figures.to_dict(),
            "target_figures": self.target_figures.to_dict(),
        }


def plan(scenario: Scenario, assignor: str = "range") -> PlanResult:
    """Run ``assignor`` (``range`` or ``cooperative-sticky``) on ``scenario``."""
    if assignor == "range":
        assignment = RangeAssignor().assign(scenario)
        return PlanResult(assignor, scenario, assignment, assignment, {})
    if assignor == "cooperative-sticky":
        now, target, moving = CooperativeStickyAssignor().plan(scenario)
        return PlanResult(assignor, scenario, now, target, moving)
    raise ConfigError(f"assignor {assignor!r} is not supported; use one of {', '.join(ASSIGNORS)}")


# --- scenario files -------------------------------------------------------------------------------------------


def _striped(partitions: int, rf: int, brokers: Sequence[int], offset: int) -> tuple[tuple[int, ...], ...]:
    if rf > len(brokers):
        raise ConfigError(f"replication_factor {rf} exceeds the {len(brokers)} brokers listed; lower it")
    return tuple(tuple(brokers[(p + j + offset) % len(brokers)] for j in range(rf)) for p in range(partitions))


def _brokers(raw: Any) -> dict[int, str | None]:
    if isinstance(raw, Mapping):
        return {int(k): (None if v is None else str(v)) for k, v in raw.items()}
    if isinstance(raw, list):
        return {int(b["id"]): (None if b.get("rack") is None else str(b["rack"])) for b in raw}
    raise ConfigError("brokers must be a mapping {id: rack} or a list of {id, rack}")


def scenario_from_dict(data: Mapping[str, Any]) -> Scenario:
    """Build a scenario from parsed YAML/JSON (see the module docstring for the format)."""
    try:
        brokers = _brokers(data["brokers"])
        broker_ids = sorted(brokers)
        topics: dict[str, tuple[tuple[int, ...], ...]] = {}
        partition_bytes: dict[TopicPartition, int] = {}
        offset = 0
        for name, spec in dict(data["topics"]).items():
            if "replicas" in spec:
                topics[name] = tuple(tuple(int(b) for b in r) for r in spec["replicas"])
            else:
                topics[name] = _striped(
                    int(spec["partitions"]), int(spec.get("replication_factor", 1)), broker_ids, offset
                )
            if "bytes_per_partition" in spec:
                for p in range(len(topics[name])):
                    partition_bytes[TopicPartition(name, p)] = int(spec["bytes_per_partition"])
            offset += len(topics[name])
        for key, value in dict(data.get("partition_bytes") or {}).items():
            partition_bytes[TopicPartition.parse(str(key))] = int(value)
        members = tuple(
            Member(
                member_id=str(m["id"]),
                topics=tuple(m.get("topics") or topics),
                rack=m.get("rack"),
                owned=tuple(TopicPartition.parse(str(t)) for t in m.get("owned") or ()),
                generation=m.get("generation"),
                group_instance_id=m.get("group_instance_id"),
            )
            for m in data["members"]
        )
    except KeyError as err:
        raise ConfigError(f"scenario is missing the field {err.args[0]!r} (need brokers, topics, members)") from err
    except (TypeError, ValueError) as err:
        raise ConfigError(f"scenario is malformed: {err}") from err
    return Scenario(members, ClusterMetadata(brokers, topics, partition_bytes))


def load_scenario(path: str | Path) -> Scenario:
    """Read a YAML or JSON scenario file."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise ConfigError(f"{path}: not valid YAML/JSON: {err}") from err
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: the top level must be a mapping with brokers, topics and members")
    return scenario_from_dict(data)


# --- live cluster -----------------------------------------------------------------------------------------------


def parse_members(spec: str, topics: Sequence[str]) -> tuple[Member, ...]:
    """``"c0@rack-a,c1@rack-b,c2"`` -> members subscribing to ``topics`` (no ``@`` means no rack)."""
    members = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        member_id, _, rack = item.partition("@")
        members.append(Member(member_id, tuple(topics), rack or None))
    if not members:
        raise ConfigError("members spec is empty; give e.g. 'c0@rack-a,c1@rack-b'")
    return tuple(members)


def cluster_from_admin(admin: Any, topics: Sequence[str]) -> ClusterMetadata:
    """Brokers' racks and replica placement of ``topics`` from a confluent_kafka ``AdminClient``."""
    from confluent_kafka import KafkaException, TopicCollection

    try:
        description = admin.describe_cluster(request_timeout=_ADMIN_TIMEOUT_S).result(timeout=_ADMIN_TIMEOUT_S)
        brokers = {node.id: node.rack for node in description.nodes}
        futures = admin.describe_topics(TopicCollection(list(topics)), request_timeout=_ADMIN_TIMEOUT_S)
        layout: dict[str, tuple[tuple[int, ...], ...]] = {}
        for name, future in futures.items():
            topic = future.result(timeout=_ADMIN_TIMEOUT_S)
            ordered = sorted(topic.partitions, key=lambda p: p.id)
            layout[name] = tuple(
                tuple([p.leader.id] + [r.id for r in p.replicas if p.leader is None or r.id != p.leader.id])
                if p.leader is not None
                else tuple(r.id for r in p.replicas)
                for p in ordered
            )
            for replicas in layout[name]:
                for b in replicas:
                    brokers.setdefault(b, None)
    except KafkaException as err:
        raise ClusterError(
            f"could not describe the cluster/topics {list(topics)}: {err}",
            kafka_error=err.args[0] if err.args else None,
        ) from err
    return ClusterMetadata(brokers, layout)


def scenario_from_cluster(
    bootstrap_servers: str, topics: Sequence[str], members_spec: str, extra_config: Mapping[str, str] | None = None
) -> Scenario:
    """A scenario with live metadata for ``topics`` and the members described by ``members_spec``."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap_servers, **(extra_config or {})})
    return Scenario(parse_members(members_spec, topics), cluster_from_admin(admin, topics))
