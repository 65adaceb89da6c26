"""Drop-in producer: MuteProducer where confluent_kafka.Producer was, on a 3-broker cluster with broker 2 stalled.

    python examples/quickstart.py              # starts (and stops) a local 3-rack cluster
    mutepro cluster up && export MUTEPRO_BOOTSTRAP=...   # or reuse one mutepro started
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka.admin import AdminClient, NewTopic

from mutepro import MuteProducer
from mutepro.cluster import use_cluster


def main() -> None:
    with use_cluster() as cluster:
        topic = f"events-{uuid.uuid4().hex[:6]}"
        admin = AdminClient(cluster.client_config())
        # one replica per partition, partitions 1 and 4 on broker 2: nothing else can serve them while it hangs
        admin.create_topics([NewTopic(topic, 6, replica_assignment=[[1], [2], [3]] * 2)])[topic].result(30)
        delivered: dict[int, int] = {}

        def report(err, msg) -> None:  # runs from poll()/flush(), as with confluent-kafka
            if err is None:
                delivered[msg.partition()] = delivered.get(msg.partition(), 0) + 1

        # the same config dict as Producer; mutepro's own settings come separately (a policy)
        with MuteProducer(
            cluster.client_config(**{"linger.ms": 5}), policy={"defaults": {"slow_call": {"threshold_ms": 500}}}
        ) as producer:
            producer.wait_for_topic(topic, 30)
            with cluster.stalled(2):
                # A steady stream of 20,000 events over about 2 s. Unkeyed events stick to one partition for
                # 10 ms at a time (sticky partitioning), so a stream reaches every partition, the stalled ones
                # too; a burst done in 60 ms would pick only ~6 partitions and might miss both of broker 2's.
                for i in range(20_000):
                    producer.produce(topic, value=f"event-{i}".encode(), on_delivery=report)
                    producer.poll(0)
                    if i % 100 == 99:
                        time.sleep(0.01)
                producer.flush(10)
                print("muted while broker 2 is stalled:", producer.mute_manager.muted_partitions())
                print("delivered while broker 2 is stalled:", sum(delivered.values()), "of 20000")
            left = producer.flush(60)
        print("delivered per partition:", dict(sorted(delivered.items())))
        print(f"undelivered: {left}; counters: {producer.counters.as_dict()}")


if __name__ == "__main__":
    main()
