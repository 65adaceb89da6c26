"""Static membership (KIP-345): a stable group.instance.id, a session timeout that covers a restart, a uniqueness
check — and a consumer restarted inside that timeout gets its partitions back without a rebalance.

    python examples/static_membership.py       # starts (and stops) a local 3-rack cluster
    mutepro cluster up && export MUTEPRO_BOOTSTRAP=...   # or any cluster
The same from the shell: ``mutepro racks instance-id``.
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

from mutepro.cluster import use_cluster
from mutepro.racks import check_instance_id_unique, derive_instance_id, recommend_session_timeout_ms


def main() -> None:
    with use_cluster() as cluster:
        topic, group = f"orders-{uuid.uuid4().hex[:6]}", f"billing-{uuid.uuid4().hex[:6]}"
        admin = AdminClient(cluster.client_config())
        admin.create_topics([NewTopic(topic, 6, 1)])[topic].result(30)

        # explicit > $MUTEPRO_GROUP_INSTANCE_ID > Kubernetes pod name > Spark executor id > hostname
        instance = derive_instance_id(suffix="0")
        print(f"group.instance.id {instance.value!r} (from {instance.source})")
        advice = recommend_session_timeout_ms(restart_seconds=8)  # the restart's p99
        print("session:", advice.config(), "-", advice.reasoning[0])
        config = {**cluster.client_config(), "group.id": group, "group.instance.id": instance.value,
                  "auto.offset.reset": "earliest", **advice.config()}
        consumer = _join(config, topic)
        first = _assigned(consumer)
        print("first start, assigned:", first)
        # is the id unique? this process holds it (own_member_id); a second process with it would fence us
        print(check_instance_id_unique(admin, group, instance.value, own_member_id=consumer.memberid()).explain())
        print("for another process:", check_instance_id_unique(admin, group, instance.value).explain())
        consumer.close()  # a static member's close does not leave the group
        # a restart within the session timeout: same id, same partitions, no rebalance of the others
        consumer = _join(config, topic)
        second = _assigned(consumer)
        consumer.close()
        print("after restart, assigned:", second, "- same partitions" if second == first else "- moved")


def _join(config: dict, topic: str, timeout_s: float = 30.0) -> Consumer:
    """A consumer that has its assignment (bounded wait)."""
    consumer = Consumer(config)
    consumer.subscribe([topic])
    deadline = time.monotonic() + timeout_s
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(0.5)
    return consumer


def _assigned(consumer: Consumer) -> list[int]:
    return sorted(tp.partition for tp in consumer.assignment())


if __name__ == "__main__":
    main()
