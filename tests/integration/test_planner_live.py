"""Live check: three racked consumers on the real 3-rack cluster get the locality the planner predicted."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from mutepro.racks.assign.figures import compute_figures
from mutepro.racks.assign.model import Member, Scenario, TopicPartition
from mutepro.racks.assign.planner import cluster_from_admin, plan

pytestmark = pytest.mark.integration

RACKS = ("rack-a", "rack-b", "rack-c")
DEADLINE_S = 90.0


class _RackedConsumer:
    """A consumer with client.rack whose latest statistics are kept for inspection."""

    def __init__(self, bootstrap: str, group: str, topic: str, rack: str) -> None:
        self.rack = rack
        self.client_id = f"planner-{rack}"
        self.stats: dict[str, Any] = {}
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "client.id": self.client_id,
                "client.rack": rack,
                "partition.assignment.strategy": "range",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "statistics.interval.ms": 200,
                "session.timeout.ms": 10000,
                "stats_cb": self._on_stats,
            }
        )
        self.consumer.subscribe([topic])

    def _on_stats(self, payload: str) -> None:
        self.stats = json.loads(payload)

    def fetching_from(self, topic: str) -> dict[int, tuple[int, int]]:
        """Assigned partition -> (broker fetched from, leader), from the statistics."""
        partitions = self.stats.get("topics", {}).get(topic, {}).get("partitions", {})
        return {
            int(p): (int(s["broker"]), int(s["leader"]))
            for p, s in partitions.items()
            if int(p) >= 0 and s.get("fetch_state") == "active" and int(s.get("broker", -1)) >= 0
        }


def test_live_range_assignment_has_planned_locality(kafka_cluster, topic_factory):
    """RF=1 over 3 racks, 3 consumers with client.rack: live assignment and fetch racks match the plan."""
    # partitions 0..5 alternate over brokers 1, 2, 3 (racks a, b, c)
    topic = topic_factory(partitions=6, replication_factor=1, replica_assignment=[[1], [2], [3], [1], [2], [3]])
    group = f"planner-live-{uuid.uuid4().hex[:8]}"
    bootstrap = kafka_cluster.bootstrap_servers
    consumers = [_RackedConsumer(bootstrap, group, topic, rack) for rack in RACKS]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        live: dict[str, set[int]] = {}
        deadline = time.monotonic() + DEADLINE_S
        described = None
        while time.monotonic() < deadline:
            for c in consumers:
                c.consumer.poll(0.1)
            assigned = {c.client_id: {tp.partition for tp in c.consumer.assignment()} for c in consumers}
            fetching = {c.client_id: c.fetching_from(topic) for c in consumers}
            complete = sum(len(p) for p in assigned.values()) == 6 and all(assigned.values())
            if complete and all(set(fetching[cid]) == assigned[cid] for cid in assigned):
                described = admin.describe_consumer_groups([group])[group].result(timeout=15)
                if str(described.state).endswith("STABLE") and len(described.members) == 3:
                    live = assigned
                    break
        assert described is not None and live, f"group {group} did not settle within {DEADLINE_S}s"

        # the planner's prediction for exactly these members (ids from the live group, racks by client.id)
        rack_of = {c.client_id: c.rack for c in consumers}
        members = tuple(
            Member(m.member_id, (topic,), rack_of[m.client_id], group_instance_id=m.group_instance_id)
            for m in described.members
        )
        scenario = Scenario(members, cluster_from_admin(admin, [topic]))
        predicted = plan(scenario, "range")
        client_of = {m.member_id: m.client_id for m in described.members}
        planned = {client_of[m]: {tp.partition for tp in tps} for m, tps in predicted.assignment.items()}
        assert planned == live

        live_assignment = {
            m.member_id: [TopicPartition(topic, p) for p in sorted(live[m.client_id])] for m in described.members
        }
        live_figures = compute_figures(scenario, live_assignment)
        assert live_figures.mismatched == predicted.figures.mismatched == 0

        # and the consumers' own statistics: every partition is fetched from a broker on the consumer's rack
        racks = kafka_cluster.racks
        cross_rack_fetches = [
            (c.client_id, p, broker)
            for c in consumers
            for p, (broker, _leader) in c.fetching_from(topic).items()
            if racks[broker] != c.rack
        ]
        assert cross_rack_fetches == []
    finally:
        for c in consumers:
            c.consumer.close()
