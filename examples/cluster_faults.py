"""Start a local rack-aware cluster, stall one broker, and watch plain confluent_kafka stall with it.

    python examples/cluster_faults.py
"""

from __future__ import annotations

from confluent_kafka import Producer

from mutepro.cluster import ClusterSpec, LocalCluster
from mutepro.cluster.topics import create_topic


def main() -> None:
    with LocalCluster(ClusterSpec(brokers=3)) as cluster:
        from confluent_kafka.admin import AdminClient

        create_topic(AdminClient(cluster.client_config()), "events", replica_assignment=[[1], [2], [3]])
        producer = Producer(cluster.client_config(**{"message.timeout.ms": 10_000}))
        with cluster.stalled(2):
            for i in range(300):
                producer.produce("events", value=f"{i}".encode(), partition=i % 3)
            left = producer.flush(3)
            print(f"after 3 s with broker 2 stalled: {left} messages still undelivered (its partition)")
        print(f"after resume: {producer.flush(30)} undelivered")


if __name__ == "__main__":
    main()
