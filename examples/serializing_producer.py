"""Schema Registry users: MuteSerializingProducer where confluent_kafka.SerializingProducer was, writing Avro records
through a cluster with broker 2 stalled, then reading them back with AvroDeserializer.

    pip install -e '.[schema-registry]'        # fastavro and confluent-kafka's Schema Registry client
    python examples/serializing_producer.py    # starts (and stops) a local 3-rack cluster
    SCHEMA_REGISTRY_URL=http://localhost:8081 python examples/serializing_producer.py   # a real registry

Without ``SCHEMA_REGISTRY_URL`` the example uses confluent-kafka's in-process mock registry (``mock://``), so that it
runs anywhere; point it at a real Schema Registry and nothing else changes.
"""

from __future__ import annotations

import os
import time
import uuid

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, StringSerializer

from mutepro import MuteSerializingProducer
from mutepro.cluster import use_cluster

SCHEMA = """{
  "type": "record", "name": "Reading", "namespace": "example",
  "fields": [
    {"name": "sensor", "type": "string"}, {"name": "seq", "type": "long"}, {"name": "celsius", "type": "double"}
  ]
}"""
COUNT = 4_000


def main() -> None:
    registry = SchemaRegistryClient.new_client({"url": os.environ.get("SCHEMA_REGISTRY_URL", "mock://example")})
    with use_cluster() as cluster:
        topic = f"readings-{uuid.uuid4().hex[:6]}"
        admin = AdminClient(cluster.client_config())
        # one replica per partition, partitions 1 and 4 on broker 2: nothing else can serve them while it hangs
        admin.create_topics([NewTopic(topic, 6, replica_assignment=[[1], [2], [3]] * 2)])[topic].result(30)
        failed: list[str] = []

        def report(err, msg) -> None:  # runs from poll()/flush(), as with SerializingProducer
            if err is not None:
                failed.append(str(err))

        # SerializingProducer's config as it was (serializers included); mutepro's settings come as a policy
        conf = cluster.client_config(**{
            "linger.ms": 5,
            "key.serializer": StringSerializer("utf_8"),
            "value.serializer": AvroSerializer(registry, SCHEMA),
        })
        with MuteSerializingProducer(conf, policy={"defaults": {"slow_call": {"threshold_ms": 500}}}) as producer:
            producer.wait_for_topic(topic, 30)
            with cluster.stalled(2):
                # about 2 s of readings from 40 sensors (keyed: a sensor's readings share a partition while it is
                # healthy; keys of a muted partition are rerouted, each key to one other partition)
                for i in range(COUNT):
                    reading = {"sensor": f"s{i % 40}", "seq": i, "celsius": 20 + (i % 50) / 10}
                    producer.produce(topic, key=reading["sensor"], value=reading, on_delivery=report)
                    producer.poll(0)
                    if i % 100 == 99:
                        time.sleep(0.05)
                producer.flush(10)
                print("muted while broker 2 is stalled:", producer.mute_manager.muted_partitions())
            left = producer.flush(60)
        print(f"undelivered: {left}; failed: {len(failed)}; rerouted: {producer.counters.rerouted}")

        decode = AvroDeserializer(registry)
        consumer = Consumer(cluster.client_config(**{
            "group.id": f"example-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest",
        }))
        consumer.subscribe([topic])
        seqs: set[int] = set()
        deadline = time.monotonic() + 60
        while len(seqs) < COUNT and time.monotonic() < deadline:
            for msg in consumer.consume(500, timeout=0.5):
                if msg.error() is None:
                    seqs.add(decode(msg.value(), SerializationContext(topic, MessageField.VALUE))["seq"])
        consumer.close()
        print(f"read back and decoded: {len(seqs)} of {COUNT} readings")


if __name__ == "__main__":
    main()
