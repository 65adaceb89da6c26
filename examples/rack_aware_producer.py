"""Rack-aware producing (KIP-1123): unkeyed messages stay with the leaders in the producer's rack, and move to the
other racks only while none of those is writable.

    python examples/rack_aware_producer.py     # starts (and stops) a local 3-rack cluster
"""

from __future__ import annotations

import uuid
from collections import Counter

from confluent_kafka.admin import AdminClient, NewTopic

from mutepro import MuteProducer
from mutepro.cluster import use_cluster


def main() -> None:
    with use_cluster() as cluster:
        topic = f"clicks-{uuid.uuid4().hex[:6]}"
        admin = AdminClient(cluster.client_config())
        # 6 partitions, one replica each, leaders on brokers 1, 2, 3 in turn (one rack each)
        admin.create_topics([NewTopic(topic, 6, replica_assignment=[[1], [2], [3]] * 2)])[topic].result(30)
        rack = cluster.racks[1]
        leaders = {p: [1, 2, 3][p % 3] for p in range(6)}
        unkeyed: Counter[int] = Counter()
        keyed: list[int] = []

        def report(err, msg) -> None:
            if err is None:
                (keyed.append(msg.partition()) if msg.key() else unkeyed.update([msg.partition()]))

        # the plain client dict, plus client.rack and Java's partitioner.rack.aware (read by mutepro)
        conf = cluster.client_config(**{"client.rack": rack, "partitioner.rack.aware": True})
        with MuteProducer(conf) as producer:
            producer.wait_for_topic(topic, 30)
            for _ in range(100):  # the brokers' racks arrive with the producer's first metadata round
                if producer.mute_manager.racks.local_partitions(topic):
                    break
                producer.poll(0.1)
            for i in range(5_000):
                producer.produce(topic, value=f"click-{i}".encode(), on_delivery=report)
                producer.poll(0)
            for user in range(6):  # keyed messages go where their key hashes, rack or not
                producer.produce(topic, value=b"profile", key=f"user-{user}".encode(), on_delivery=report)
            producer.flush(30)
            local = sorted(producer.mute_manager.racks.local_partitions(topic) or ())
            print(f"client.rack {rack}: partitions led in it: {local}")
            per_broker = Counter()
            for p, n in unkeyed.items():
                per_broker[leaders[p]] += n
            print(f"unkeyed messages per leader broker: {dict(sorted(per_broker.items()))}")
            print(f"unkeyed messages on local leaders: {sum(unkeyed[p] for p in local)} of 5000")
            print(f"keyed messages' partitions: {sorted(keyed)}")
            print(f"metrics rack: {producer.metrics()['rack']}")


if __name__ == "__main__":
    main()
