"""MuteProducer as a drop-in for confluent_kafka.Producer, on a local 3-broker cluster with one broker stalled.

python examples/quickstart.py
"""

from __future__ import annotations

from confluent_kafka.admin import AdminClient

from mutepro import MuteProducer
from mutepro.cluster import ClusterSpec, LocalCluster
from mutepro.cluster.topics import create_topic


def main() -> None:
    with LocalCluster(ClusterSpec(brokers=3)) as cluster:
        create_topic(AdminClient(cluster.client_config()), "events", replica_assignment=[[1], [2], [3]] * 2)
        delivered: dict[int, int] = {}

        def report(err, msg) -> None:  # runs from poll()/flush(), as with confluent-kafka
            if err is None:
                delivered[msg.partition()] = delivered.get(msg.partition(), 0) + 1

        with MuteProducer(
            cluster.client_config(**{"linger.ms": 5}), policy={"defaults": {"slow_call": {"threshold_ms": 500}}}
        ) as producer:
            with cluster.stalled(2):  # broker 2 leads partitions 1 and 4
                for i in range(20_000):
                    producer.produce("events", value=f"event-{i}".encode(), on_delivery=report)
                    producer.poll(0)
                producer.flush(10)
                print("muted while broker 2 is stalled:", producer.mute_manager.muted_partitions())
                print("delivered while broker 2 is stalled:", dict(sorted(delivered.items())))
            producer.flush(60)
        print("delivered per partition:", dict(sorted(delivered.items())))
        print("counters:", producer.counters.as_dict())


if __name__ == "__main__":
    main()
