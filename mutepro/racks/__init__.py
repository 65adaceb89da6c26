"""Rack-aware consumer helpers (KIP-881/KIP-848 assignment planning, KRaft and KIP-36 placement, KIP-392, KIP-345).

- :mod:`~mutepro.racks.striped`: KRaft's ``StripedReplicaPlacer`` (Kafka 4.3.1), seeded like Java.
- :mod:`~mutepro.racks.generate`: what ``kafka-reassign-partitions --generate`` proposes on Kafka 4.x.
- :mod:`~mutepro.racks.placement`: Kafka's rack-aware ``assignReplicasToBrokers`` and its properties.
- :mod:`~mutepro.racks.audit`: where replicas and leaders of live topics sit, rack by rack.
- :mod:`~mutepro.racks.reassign`: the fewest-moves fix as ``kafka-reassign-partitions`` JSON, and applying it.
- :mod:`~mutepro.racks.topics`: creating a topic with an explicit rack-aware assignment.
- :mod:`~mutepro.racks.follower`: KIP-392 readiness, ``client.rack`` derivation, live locality.
- :mod:`~mutepro.racks.static`: KIP-345 ``group.instance.id``, uniqueness, session timeout, fencing.
"""

from __future__ import annotations

from mutepro.racks.audit import (
    AuditReport,
    ClusterSnapshot,
    LeaderSkew,
    PartitionIssue,
    PartitionState,
    ZoneGap,
    audit,
    audit_cluster,
    snapshot_cluster,
)
from mutepro.racks.follower import (
    RACK_AWARE_SELECTOR,
    LocalityReport,
    PartitionLocality,
    RackResolution,
    ReadinessReport,
    StatsCollector,
    check_follower_fetching,
    client_rack,
    evaluate_readiness,
    load_zone_map,
    resolve_client_rack,
)
from mutepro.racks.generate import generate_plan
from mutepro.racks.javarandom import JavaRandom
from mutepro.racks.placement import (
    BrokerMetadata,
    PlacementCheck,
    PlacementError,
    assign_replicas_to_brokers,
    check_placement,
    rack_alternated_broker_list,
)
from mutepro.racks.reassign import (
    PartitionMove,
    ReassignmentError,
    ReassignmentPlan,
    apply_plan,
    apply_reassignment,
    elect_preferred_leaders,
    plan_reassignment,
    read_reassignment_json,
    write_reassignment_json,
)
from mutepro.racks.static import (
    InstanceId,
    SessionTimeoutAdvice,
    UniquenessReport,
    check_instance_id_unique,
    derive_instance_id,
    explain_fenced,
    group_instance_id,
    is_fenced,
    recommend_session_timeout_ms,
)
from mutepro.racks.striped import StripedReplicaPlacer, UsableBroker, reachable_placements, striped_placement
from mutepro.racks.topics import create_rack_aware_topic

__all__ = [
    "RACK_AWARE_SELECTOR",
    "AuditReport",
    "BrokerMetadata",
    "ClusterSnapshot",
    "InstanceId",
    "JavaRandom",
    "LeaderSkew",
    "LocalityReport",
    "PartitionIssue",
    "PartitionLocality",
    "PartitionMove",
    "PartitionState",
    "PlacementCheck",
    "PlacementError",
    "RackResolution",
    "ReadinessReport",
    "ReassignmentError",
    "ReassignmentPlan",
    "SessionTimeoutAdvice",
    "StatsCollector",
    "StripedReplicaPlacer",
    "UniquenessReport",
    "UsableBroker",
    "ZoneGap",
    "apply_plan",
    "apply_reassignment",
    "assign_replicas_to_brokers",
    "audit",
    "audit_cluster",
    "check_follower_fetching",
    "check_instance_id_unique",
    "check_placement",
    "client_rack",
    "create_rack_aware_topic",
    "derive_instance_id",
    "elect_preferred_leaders",
    "evaluate_readiness",
    "explain_fenced",
    "generate_plan",
    "group_instance_id",
    "is_fenced",
    "load_zone_map",
    "plan_reassignment",
    "rack_alternated_broker_list",
    "reachable_placements",
    "read_reassignment_json",
    "recommend_session_timeout_ms",
    "resolve_client_rack",
    "snapshot_cluster",
    "striped_placement",
    "write_reassignment_json",
]
