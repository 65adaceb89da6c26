"""The local cluster's fault injection: stall one broker and watch plain confluent_kafka stall with it.

    python examples/cluster_faults.py          # starts (and stops) a local 3-rack cluster
    mutepro cluster up && export MUTEPRO_BOOTSTRAP=...   # or reuse one mutepro started
"""

from __future__ import annotations

import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from mutepro.cluster import use_cluster


def main() -> None:
    with use_cluster() as cluster:
        print("brokers and racks:", cluster.racks)
        topic = f"events-{uuid.uuid4().hex[:6]}"
        admin = AdminClient(cluster.client_config())
        admin.create_topics([NewTopic(topic, 3, replica_assignment=[[1], [2], [3]])])[topic].result(30)
        producer = Producer(cluster.client_config(**{"message.timeout.ms": 30_000}))
        producer.list_topics(topic, timeout=10)
        with cluster.stalled(2):  # SIGSTOP: the broker keeps its sockets and answers nothing
            for i in range(300):
                producer.produce(topic, value=f"{i}".encode(), partition=i % 3)
            left = producer.flush(3)
            print(f"after 3 s with broker 2 stalled: {left} messages still undelivered (partition 1's)")
        # limping: stopped 80 % of every second, so requests are served late rather than not at all
        with cluster.limping(2, duty=0.8, period_s=1.0, max_duration_s=10):
            for i in range(300):
                producer.produce(topic, value=f"{i}".encode(), partition=i % 3)
            print(f"while broker 2 limps: {producer.flush(3)} undelivered after 3 s")
        print(f"after resume: {producer.flush(30)} undelivered")


if __name__ == "__main__":
    main()
