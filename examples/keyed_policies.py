"""Keyed policies: what happens to a keyed message whose partition is muted — reroute, hold, or fail — per topic.

    python examples/keyed_policies.py          # starts (and stops) a local 3-rack cluster
    mutepro cluster up && export MUTEPRO_BOOTSTRAP=...   # or any cluster with brokers 1, 2 and 3

Broker 2 is muted by hand here (``mute_broker``), so no fault is needed; detection mutes the same way.
"""

from __future__ import annotations

import uuid
from collections import Counter

from confluent_kafka.admin import AdminClient, NewTopic

from mutepro import MuteProducer
from mutepro.cluster import use_cluster

POLICY = {
    "defaults": {"keyed_policy": "reroute"},  # clicks: keys move to a healthy partition while theirs is muted
    "topics": {
        "orders-*": {"keyed_policy": "hold", "hold": {"max_messages": 10_000}},  # keep key order: wait
        "payments-*": {"keyed_policy": "fail"},  # the application decides: an error naming the partition
    },
}


def main() -> None:
    with use_cluster() as cluster:
        suffix = uuid.uuid4().hex[:6]
        topics = {kind: f"{kind}-{suffix}" for kind in ("clicks", "orders", "payments")}
        admin = AdminClient(cluster.client_config())
        futures = admin.create_topics([NewTopic(t, 3, replica_assignment=[[1], [2], [3]]) for t in topics.values()])
        for future in futures.values():
            future.result(30)
        landed: dict[str, Counter[int]] = {t: Counter() for t in topics.values()}
        errors: Counter[str] = Counter()

        def report(err, msg) -> None:
            if err is None:
                landed[msg.topic()][msg.partition()] += 1
            else:
                errors[f"{msg.topic().split('-')[0]}: {err.name()}"] += 1

        with MuteProducer(cluster.client_config(**{"linger.ms": 5}), policy=POLICY) as producer:
            for topic in topics.values():
                producer.wait_for_topic(topic, 30)
            producer.mute_manager.mute_broker(2)  # partition 1 of each topic
            for topic in topics.values():
                for i in range(300):  # keys spread over all three partitions, a third of them homed on partition 1
                    producer.produce(topic, value=b"v", key=f"customer-{i}".encode(), on_delivery=report)
            producer.flush(10)
            print("muted:", producer.mute_manager.muted_partitions())
            for kind, topic in topics.items():
                print(f"{kind:9} ({POLICY['topics'].get(kind + '-*', POLICY['defaults'])['keyed_policy']}) "
                      f"while broker 2 is muted: delivered per partition {dict(sorted(landed[topic].items()))}")
            print("errors:", dict(errors))
            print("held (orders, waiting for their partition):", len(producer))
            producer.mute_manager.unmute_broker(2)
            left = producer.flush(30)
        print(f"after unmute, orders per partition: {dict(sorted(landed[topics['orders']].items()))}; "
              f"undelivered: {left}")


if __name__ == "__main__":
    main()
