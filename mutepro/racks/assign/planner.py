"""Plan a group's assignment: build the scenario (file or live cluster), run an assignor, report the figures.

Scenario file (YAML or JSON)::

    brokers: {1: rack-a, 2: rack-b, 3: rack-c}      # or [{id: 1, rack: rack-a}, ...]; rack may be null
    topics:
      orders: {replicas: [[1], [2], [3]]}          # replica broker ids per partition, leader first
      clicks: {partitions: 6, replication_factor: 2, bytes_per_partition: 1048576}  # replica j of p on broker p+j
      events: {replicas: [[1, 2]], id: AAAAAAAAAAEAAAAAAAAAAg}   # the real topic id, for --protocol consumer
    partition_bytes: {orders-0: 5000}              # optional per-partition estimates
    members:
      - {id: c0, topics: [orders], rack: rack-a, owned: [orders-0], generation: 3, group_instance_id: i0}
      - {id: c1, topics: [orders], joining: true}  # --protocol consumer: joining now (last); default: in the group

Live: brokers and replica placement come from ``describe_cluster``/``describe_topics``; members come from a
spec such as ``c0@rack-a,c1@rack-b`` (all subscribing to the given topics).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mutepro.errors import ClusterError, ConfigError
from mutepro.racks.assign.figures import Figures, compute_figures
from mutepro.racks.assign.model import Assignment, ClusterMetadata, Member, Scenario, TopicPartition
from mutepro.racks.assign.range import RangeAssignor
from mutepro.racks.assign.server import KAFKA_VERSION as SERVER_KAFKA_VERSION
from mutepro.racks.assign.server import SERVER_ASSIGNORS, GroupMember, GroupState, GroupTopic, JavaUuid, server_assign
from mutepro.racks.assign.sticky import CooperativeStickyAssignor

ASSIGNORS = ("range", "cooperative-sticky")
PROTOCOLS = ("classic", "consumer")
_ADMIN_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class PlanResult:
    """An assignor's plan for one scenario: this rebalance's assignment, the converged target and figures."""

    assignor: str
    scenario: Scenario
    assignment: Assignment
    target: Assignment
    moving: Mapping[TopicPartition, str] = field(default_factory=dict)
    #: consumer protocol with a joining member only: the coordinator's result when a later heartbeat, not the
    #: joiner's own, computes the assignment (see :class:`GroupState`), if that differs from ``target``
    alternative: Assignment | None = None

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
            "alternative": (
                None if self.alternative is None else {m: [str(tp) for tp in ps] for m, ps in self.alternative.items()}
            ),
        }


def plan(scenario: Scenario, assignor: str = "range", protocol: str = "classic") -> PlanResult:
    """Run ``assignor`` on ``scenario`` under ``protocol``.

    ``classic``: the Java client's ``range`` or ``cooperative-sticky`` (rack-aware, KIP-881). ``consumer``
    (KIP-848): the group coordinator's ``uniform`` or ``range`` of Kafka 4.3.1, which ignore racks; a
    member's ``owned`` partitions are its current target assignment. Members are in the group (subscriptions
    as the coordinator stores them, names sorted) except ``scenario.joining``, which keeps the order it lists.
    """
    if protocol == "consumer":
        if assignor not in SERVER_ASSIGNORS:
            raise ConfigError(
                f"assignor {assignor!r} does not exist in the consumer protocol; "
                f"use one of {', '.join(SERVER_ASSIGNORS)}"
            )
        assignment = consumer_protocol_assignment(scenario, assignor)
        # a joiner's assignment may instead come from a later heartbeat, with the joiner already in the group
        later = consumer_protocol_assignment(scenario, assignor, joined_last=False) if scenario.joining else None
        label = f"{assignor} (consumer protocol, Kafka {SERVER_KAFKA_VERSION} coordinator)"
        return PlanResult(label, scenario, assignment, assignment, {}, None if later == assignment else later)
    if protocol != "classic":
        raise ConfigError(f"protocol {protocol!r} is not known; use one of {', '.join(PROTOCOLS)}")
    if assignor == "range":
        assignment = RangeAssignor().assign(scenario)
        return PlanResult(assignor, scenario, assignment, assignment, {})
    if assignor == "cooperative-sticky":
        now, target, moving = CooperativeStickyAssignor().plan(scenario)
        return PlanResult(assignor, scenario, now, target, moving)
    raise ConfigError(f"assignor {assignor!r} is not supported; use one of {', '.join(ASSIGNORS)}")


def group_state(scenario: Scenario, *, joined_last: bool | None = None) -> GroupState:
    """The scenario as the group coordinator sees it: topic ids, subscriptions, current target assignment.

    Members are in join order; ``joined_last`` as in :class:`GroupState`, by default True exactly when the
    scenario names a ``joining`` member.
    """
    if joined_last is None:
        joined_last = scenario.joining is not None
    cluster = scenario.cluster
    topics = {
        name: GroupTopic(
            name,
            JavaUuid.parse(cluster.topic_ids[name]) if name in cluster.topic_ids else JavaUuid.for_name(name),
            len(parts),
        )
        for name, parts in cluster.topics.items()
    }
    members = []
    for m in scenario.members:
        owned: dict[str, list[int]] = {}
        for tp in m.owned:
            owned.setdefault(tp.topic, []).append(tp.partition)
        members.append(
            GroupMember(
                m.member_id,
                m.topics,
                m.group_instance_id,
                m.rack,
                tuple((t, tuple(ps)) for t, ps in owned.items()),
            )
        )
    return GroupState(tuple(members), topics, joined_last)


def consumer_protocol_assignment(scenario: Scenario, assignor: str, *, joined_last: bool | None = None) -> Assignment:
    """The server-side assignor's assignment as member -> partitions (sorted)."""
    result = server_assign(group_state(scenario, joined_last=joined_last), assignor)
    return {
        m.member_id: sorted(
            (TopicPartition(t, p) for t, ps in result.get(m.member_id, {}).items() for p in ps),
            key=lambda tp: (tp.topic, tp.partition),
        )
        for m in scenario.members
    }


# --- scenario files -------------------------------------------------------------------------------------------

#: Refused before any work: a plan over more is not a plan anyone reads, and it costs gigabytes of memory.
MAX_PARTITIONS = 100_000
MAX_MEMBERS = 10_000
MAX_BROKERS = 10_000
MAX_SCENARIO_BYTES = 10 * 1024 * 1024


def _striped(partitions: int, rf: int, brokers: Sequence[int], offset: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(brokers[(p + j + offset) % len(brokers)] for j in range(rf)) for p in range(partitions))


def _int_field(value: Any, where: str, *, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an int within bounds, or a ConfigError naming ``where`` and the allowed range."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(f"{where} must be an integer, not {type(value).__name__} {value!r}")
    try:
        number = int(value)
    except ValueError as err:
        raise ConfigError(f"{where} must be an integer, not {value!r}") from err
    if number < minimum or (maximum is not None and number > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise ConfigError(f"{where} is {number}; it must be {bound}")
    return number


def _mapping(value: Any, where: str) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a mapping, not {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ConfigError(f"{where} must be a list, not {type(value).__name__}")
    return value


def _brokers(raw: Any) -> dict[int, str | None]:
    if isinstance(raw, Mapping):
        items = list(raw.items())
    elif isinstance(raw, list):
        items = [(_mapping(b, f"brokers[{i}]").get("id"), b.get("rack")) for i, b in enumerate(raw)]
    else:
        raise ConfigError("brokers must be a mapping {id: rack} or a list of {id, rack}")
    if not items:
        raise ConfigError("brokers is empty; list every broker id with its rack (rack may be null)")
    if len(items) > MAX_BROKERS:
        raise ConfigError(f"brokers lists {len(items)} brokers; at most {MAX_BROKERS} are planned")
    result: dict[int, str | None] = {}
    for broker, rack in items:
        result[_int_field(broker, "brokers: broker id", minimum=0)] = None if rack is None else str(rack)
    return result


def _topic(name: str, spec: Any, brokers: dict[int, str | None], offset: int) -> tuple[tuple[int, ...], ...]:
    spec = _mapping(spec, f"topics.{name}")
    if "replicas" in spec:
        layout = []
        for index, replicas in enumerate(_list(spec["replicas"], f"topics.{name}.replicas")):
            where = f"topics.{name}.replicas[{index}]"
            ids = tuple(_int_field(b, where, minimum=0) for b in _list(replicas, where))
            if not ids:
                raise ConfigError(f"{where} is empty; a partition needs at least one replica")
            twice = sorted({b for b in ids if ids.count(b) > 1})
            if twice:
                raise ConfigError(f"{where} lists broker(s) {twice} more than once; a broker holds one replica")
            layout.append(ids)
        if not layout:
            raise ConfigError(f"topics.{name}.replicas is empty; give at least one partition")
        return tuple(layout)
    if "partitions" not in spec:
        raise ConfigError(f"topics.{name} needs partitions (with replication_factor) or replicas")
    partitions = _int_field(spec["partitions"], f"topics.{name}.partitions", minimum=1, maximum=MAX_PARTITIONS)
    rf = _int_field(
        spec.get("replication_factor", 1), f"topics.{name}.replication_factor", minimum=1, maximum=len(brokers)
    )
    return _striped(partitions, rf, sorted(brokers), offset)


def scenario_from_dict(data: Mapping[str, Any]) -> Scenario:
    """Build a scenario from parsed YAML/JSON (see the module docstring for the format).

    Every bad value is refused with the field's name before any planning (``topics.orders.partitions is -5;
    it must be between 1 and 100000``), and so are sizes no plan needs (over :data:`MAX_PARTITIONS`
    partitions in all, :data:`MAX_MEMBERS` members).
    """
    try:
        for key in ("brokers", "topics", "members"):
            if key not in data:
                raise KeyError(key)
        brokers = _brokers(data["brokers"])
        topics: dict[str, tuple[tuple[int, ...], ...]] = {}
        topic_ids: dict[str, str] = {}
        partition_bytes: dict[TopicPartition, int] = {}
        offset = 0
        for raw_name, spec in _mapping(data["topics"], "topics").items():
            name = str(raw_name)
            topics[name] = _topic(name, spec, brokers, offset)
            offset += len(topics[name])
            if offset > MAX_PARTITIONS:
                raise ConfigError(
                    f"topics: {offset} partitions in all (so far, at topics.{name}); "
                    f"at most {MAX_PARTITIONS} are planned"
                )
            if "bytes_per_partition" in spec:
                size = _int_field(spec["bytes_per_partition"], f"topics.{name}.bytes_per_partition", minimum=0)
                for p in range(len(topics[name])):
                    partition_bytes[TopicPartition(name, p)] = size
            if spec.get("id") is not None:
                topic_ids[name] = str(JavaUuid.parse(str(spec["id"])))
        for key, value in _mapping(data.get("partition_bytes") or {}, "partition_bytes").items():
            partition_bytes[TopicPartition.parse(str(key))] = _int_field(value, f"partition_bytes.{key}", minimum=0)
        raw_members = _list(data["members"], "members")
        if len(raw_members) > MAX_MEMBERS:
            raise ConfigError(f"members lists {len(raw_members)} members; at most {MAX_MEMBERS} are planned")
        members = []
        joining: list[str] = []
        for index, raw in enumerate(raw_members):
            m = _mapping(raw, f"members[{index}]")
            if "id" not in m:
                raise ConfigError(f"members[{index}] has no id")
            flag = m.get("joining", False)
            if not isinstance(flag, bool):
                raise ConfigError(f"members[{index}].joining must be true or false, not {flag!r}")
            if flag:
                joining.append(str(m["id"]))
            subscribed = m.get("topics") or list(topics)
            owned = tuple(TopicPartition.parse(str(t)) for t in _list(m.get("owned") or [], f"members[{index}].owned"))
            for tp in owned:
                if not 0 <= tp.partition < len(topics.get(tp.topic, ())):
                    raise ConfigError(f"members[{index}].owned: {tp} is not a partition of the scenario's topics")
            members.append(
                Member(
                    member_id=str(m["id"]),
                    topics=tuple(str(t) for t in _list(subscribed, f"members[{index}].topics")),
                    rack=None if m.get("rack") is None else str(m["rack"]),
                    owned=owned,
                    generation=m.get("generation"),
                    group_instance_id=None if m.get("group_instance_id") is None else str(m["group_instance_id"]),
                )
            )
        if len(joining) > 1:
            raise ConfigError(
                f"members: {joining} are all marked joining; one heartbeat computes an assignment, so mark only "
                "the member joining now (the last one); the others are in the group already"
            )
    except KeyError as err:
        raise ConfigError(f"scenario is missing the field {err.args[0]!r} (need brokers, topics, members)") from err
    except (TypeError, ValueError, AttributeError) as err:
        raise ConfigError(f"scenario is malformed: {err}") from err
    return Scenario(
        tuple(members), ClusterMetadata(brokers, topics, partition_bytes, topic_ids), joining[0] if joining else None
    )


def load_scenario(path: str | Path) -> Scenario:
    """Read a YAML or JSON scenario file (at most 10 MiB of UTF-8 text)."""
    file = Path(path)
    try:
        size = file.stat().st_size
        if size > MAX_SCENARIO_BYTES:
            raise ConfigError(f"{path}: {size} bytes; a scenario file is at most {MAX_SCENARIO_BYTES} bytes")
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"{path}: not a text file (not UTF-8 at byte {err.start}); give a YAML or JSON scenario"
        ) from err
    except OSError as err:
        raise ConfigError(f"{path}: cannot be read: {err.strerror or err}") from err
    if "\x00" in text:
        raise ConfigError(f"{path}: contains NUL bytes; give a YAML or JSON scenario")
    try:
        data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError, RecursionError) as err:
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


def cluster_from_admin(admin: Any, topics: Sequence[str], timeout_s: float = _ADMIN_TIMEOUT_S) -> ClusterMetadata:
    """Brokers' racks, topic ids and replica placement of ``topics`` from a confluent_kafka ``AdminClient``.

    An unreachable cluster is a :class:`~mutepro.errors.ClusterError` after ``timeout_s``, not a traceback.
    """
    from confluent_kafka import KafkaException, TopicCollection

    try:
        description = admin.describe_cluster(request_timeout=timeout_s).result(timeout=timeout_s + 1)
        brokers = {node.id: node.rack for node in description.nodes}
        futures = admin.describe_topics(TopicCollection(list(topics)), request_timeout=timeout_s)
        layout: dict[str, tuple[tuple[int, ...], ...]] = {}
        topic_ids: dict[str, str] = {}
        for name, future in futures.items():
            topic = future.result(timeout=timeout_s + 1)
            if getattr(topic, "topic_id", None) is not None:
                topic_ids[name] = str(topic.topic_id)
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
            f"could not describe the cluster/topics {list(topics)}: {err}; check --bootstrap-servers "
            "(host:port reachable, a broker running) and that the topics exist",
            kafka_error=err.args[0] if err.args else None,
        ) from err
    except TimeoutError as err:  # concurrent.futures' timeout: the cluster did not answer at all
        raise ClusterError(
            f"the cluster did not answer within {timeout_s:g}s while describing {list(topics)}; check "
            "--bootstrap-servers (host:port reachable, a broker running) or raise --timeout"
        ) from err
    return ClusterMetadata(brokers, layout, topic_ids=topic_ids)


def scenario_from_cluster(
    bootstrap_servers: str,
    topics: Sequence[str],
    members_spec: str,
    extra_config: Mapping[str, str] | None = None,
    timeout_s: float = _ADMIN_TIMEOUT_S,
) -> Scenario:
    """A scenario with live metadata for ``topics`` and the members described by ``members_spec``."""
    from confluent_kafka.admin import AdminClient

    members = parse_members(members_spec, topics)  # bad input is refused before connecting
    # librdkafka's own log lines (a refused connection every 50 ms) go to a logger, silent unless configured
    logger = logging.getLogger("mutepro.racks.kafka")
    config: dict[str, Any] = {"bootstrap.servers": bootstrap_servers, "logger": logger}
    admin = AdminClient({**config, **(extra_config or {})})
    return Scenario(members, cluster_from_admin(admin, topics, timeout_s))
