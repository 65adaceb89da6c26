"""asyncio: ``mutepro.aio.AIOProducer`` where ``confluent_kafka.aio.AIOProducer`` was, broker 2 stalled, every
delivery future awaited (rerouted and rescued messages included).

    python examples/asyncio_producer.py        # starts (and stops) a local 3-rack cluster
    mutepro cluster up && export MUTEPRO_BOOTSTRAP=...   # or reuse one mutepro started
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from mutepro.aio import AIOProducer
from mutepro.cluster import use_cluster


async def produce_all(cluster, topic: str) -> None:
    # The same arguments as confluent_kafka.aio.AIOProducer, plus MuteProducer's own (here: a policy).
    async with AIOProducer(
        cluster.client_config(**{"linger.ms": 5}), batch_size=200, buffer_timeout=0.05,
        policy={"defaults": {"slow_call": {"threshold_ms": 500}}},
    ) as producer:
        futures: list[asyncio.Future] = []
        # Know the topic before the fault, as an application that has been running does: a new topic's first
        # metadata request can go to the broker about to stall, and then no client can send anything until it
        # answers (CI saw every message of the stream wait for the resume, nothing muted: no metadata, no judging).
        assert await asyncio.to_thread(producer.mute_producer.wait_for_topic, topic, 30)
        with cluster.stalled(2):
            # A steady stream of 10,000 events over about 2 s, every other one keyed: sticky partitioning reaches
            # every partition over time, broker 2's too, before they are muted.
            for i in range(10_000):
                key = f"user-{i % 50}".encode() if i % 2 else None
                futures.append(await producer.produce(topic, f"event-{i}".encode(), key))
                if i % 50 == 49:
                    await asyncio.sleep(0.01)  # pacing the stream, not waiting for anything
            await producer.flush(10)
            print("muted while broker 2 is stalled:", producer.mute_producer.mute_manager.muted_partitions())
            done = sum(f.done() for f in futures)
            print(f"futures resolved while broker 2 is stalled: {done} of {len(futures)}")
        # leaving `async with` flushes what is left (the stranded messages, rescued or delivered after the resume)
    per_partition: Counter[int] = Counter()
    failed = 0
    for future in futures:
        try:
            per_partition[future.result().partition()] += 1  # where the message finally landed
        except KafkaException as err:
            failed += 1
            print("failed:", err.args[0])
    print("delivered per partition:", dict(sorted(per_partition.items())))
    print(f"failed: {failed}; counters: {producer.mute_producer.counters.as_dict()}")


def main() -> None:
    with use_cluster() as cluster:
        topic = f"events-{uuid.uuid4().hex[:6]}"
        admin = AdminClient(cluster.client_config())
        # one replica per partition, partitions 1 and 4 on broker 2: nothing else can serve them while it hangs
        admin.create_topics([NewTopic(topic, 6, replica_assignment=[[1], [2], [3]] * 2)])[topic].result(30)
        asyncio.run(produce_all(cluster, topic))


if __name__ == "__main__":
    main()
