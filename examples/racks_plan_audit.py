"""Rack planning and audit: which partitions a rack-aware group reads cross-rack, and what the cluster's replica
placement needs fixing — before you deploy consumers in their own zones.

    python examples/racks_plan_audit.py        # starts (and stops) a local 3-rack cluster
    mutepro cluster up && export MUTEPRO_BOOTSTRAP=...   # or any cluster with broker.rack set
The same from the shell: ``mutepro racks plan`` / ``mutepro racks audit`` / ``mutepro racks reassign``.
"""

from __future__ import annotations

import uuid

from confluent_kafka.admin import AdminClient, NewTopic

from mutepro.cluster import use_cluster
from mutepro.racks import audit, plan_reassignment, snapshot_cluster
from mutepro.racks.assign.planner import plan, scenario_from_cluster


def main() -> None:
    with use_cluster() as cluster:
        topic = f"orders-{uuid.uuid4().hex[:6]}"
        admin = AdminClient(cluster.client_config())
        # RF 2, both replicas of every partition on brokers 1 and 3: rack-b has no local replica, and leaders
        # sit on rack-a only
        admin.create_topics([NewTopic(topic, 6, replica_assignment=[[1, 3]] * 6)])[topic].result(30)
        print("brokers:", cluster.racks)

        # 1. Plan: three consumers, one per rack, with client.rack set (KIP-881), vs the consumer protocol
        scenario = scenario_from_cluster(cluster.bootstrap_servers, [topic], "c0@rack-a,c1@rack-b,c2@rack-c")
        for assignor, protocol in (("range", "classic"), ("cooperative-sticky", "classic"), ("uniform", "consumer")):
            result = plan(scenario, assignor, protocol)
            f = result.target_figures
            print(f"plan {assignor:18} ({protocol:8}): {f.mismatched} of {f.partitions} partitions read cross-rack "
                  f"{ {m.member_id: m.partitions for m in f.members} }")

        # 2. Audit: replicas missing a rack, leader skew, racks without a local replica
        snapshot = snapshot_cluster(admin, [topic])
        report = audit(snapshot)
        print(f"audit clean: {report.clean}; partitions missing a rack: {len(report.partition_issues)}; "
              f"leaders per rack: {[dict(s.leaders_per_rack) for s in report.leader_skews]}")

        # 3. The fewest moves that fix it, as kafka-reassign-partitions JSON (apply_plan() would run it)
        fix = plan_reassignment(snapshot, [topic])
        print(f"reassignment: {len(fix.moves)} partitions to move, {fix.replica_moves} replica copies; first: "
              f"{fix.moves[0].topic}-{fix.moves[0].partition} {list(fix.moves[0].current)} -> "
              f"{list(fix.moves[0].proposed)}" if fix.moves else "reassignment: nothing to move")


if __name__ == "__main__":
    main()
