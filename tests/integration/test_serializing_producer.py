"""MuteSerializingProducer on the real cluster: Avro messages written with confluent-kafka's ``AvroSerializer`` while a
broker is stalled are all read back and decoded with ``AvroDeserializer``, none lost, each serialized once.

Schema Registry: confluent-kafka's in-process mock (``SchemaRegistryClient.new_client({"url": "mock://..."})``, a
``MockSchemaRegistryClient``), shared by the serializer and the deserializer. No real registry runs here: Confluent's
is not on Maven Central, and the Confluent-compatible alternatives found (Apicurio's ``apicurio-registry-app``) are
published as Quarkus modules that need a Quarkus build, not as runnable servers. Everything else -- librdkafka, the
brokers, the stall, the mutes, the reroutes and re-sends -- is real.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from _helpers import consume_all, wait_for
from confluent_kafka import KafkaError, Message
from confluent_kafka.serialization import MessageField, SerializationContext, StringSerializer

from mutepro.cluster.launcher import LocalCluster
from mutepro.producer import MuteSerializingProducer

pytestmark = pytest.mark.integration

fastavro = pytest.importorskip("fastavro", reason="Avro needs fastavro: pip install -e '.[schema-registry]'")

from confluent_kafka.schema_registry import SchemaRegistryClient  # noqa: E402  (after the fastavro check)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402

# Broker 2 (rack-b) leads partitions 1 and 4 of every RF=1 topic made with this assignment.
RF1 = [[1], [2], [3], [1], [2], [3]]
ON_BROKER_2 = {1, 4}
SCHEMA = """{
  "type": "record", "name": "Order", "namespace": "mutepro.test",
  "fields": [{"name": "id", "type": "string"}, {"name": "n", "type": "long"}, {"name": "note", "type": "string"}]
}"""
RATE = 400.0  # messages per second while the broker is stalled (open loop)
AFTER_MUTE = 400  # messages produced once broker 2's partitions are muted


class CountingSerializer:
    """Wraps a serializer and counts its calls (the message ids it was asked for): once per message, however often
    MuteProducer moves or re-sends it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, obj: Any, ctx: SerializationContext) -> bytes | None:
        with self.lock:
            self.calls.append(obj["id"])
        data: bytes | None = self.inner(obj, ctx)
        return data


class Reports:
    """Every message's final report by its id (the value is Avro: the id travels in the callback's closure)."""

    def __init__(self) -> None:
        self.delivered: dict[str, int] = {}
        self.failed: dict[str, KafkaError] = {}
        self.count = 0

    def callback_for(self, mid: str) -> Any:
        def report(err: KafkaError | None, msg: Message) -> None:
            self.count += 1
            if err is None:
                self.delivered[mid] = msg.partition()
            else:
                self.failed[mid] = err

        return report


def _muted(producer: MuteSerializingProducer, topic: str) -> set[int]:
    return set(producer.mute_manager.muted_partitions().get(topic, []))


def test_avro_messages_written_through_a_stalled_broker_are_all_read_back(
    kafka_cluster: LocalCluster, topic_factory: Any
) -> None:
    """Broker 2 stopped: its partitions are muted, later messages (keyed ones rerouted, unkeyed ones around it) are
    delivered while it is still stopped, and after the resume every message -- warm-up, during the stall, after
    the mute -- is in Kafka exactly as produced, decoded by AvroDeserializer with the schema the serializer
    registered; the serializer ran once per produce() call and never for a re-send."""
    topic = topic_factory(replica_assignment=RF1)
    registry = SchemaRegistryClient.new_client({"url": "mock://mutepro-serializing"})
    values = CountingSerializer(AvroSerializer(registry, SCHEMA))
    conf = kafka_cluster.client_config(**{
        "linger.ms": 5, "key.serializer": StringSerializer("utf_8"), "value.serializer": values,
    })
    policy = {"defaults": {"slow_call": {"threshold_ms": 500}, "breaker": {"retry_interval_ms": 60_000}}}
    producer: MuteSerializingProducer = MuteSerializingProducer(conf, policy=policy)
    reports = Reports()
    produced: dict[str, dict[str, Any]] = {}

    def send(mid: str, n: int, key: str | None = None, partition: int = -1) -> None:
        value = {"id": mid, "n": n, "note": f"{key or '-'}|" + "x" * 48}
        producer.produce(topic, key=key, value=value, partition=partition, on_delivery=reports.callback_for(mid))
        produced[mid] = value

    for i in range(60):  # connections, metadata and every partition's first deliveries
        send(f"w{i}", i, partition=i % 6)
    assert producer.flush(30) == 0
    assert wait_for(lambda: producer.mute_manager.snapshot(topic) is not None, 15, step=lambda: producer.poll(0.1))

    n = 0
    with kafka_cluster.stalled(2):
        start = time.monotonic()

        def paced_send() -> None:
            nonlocal n
            # half keyed (20 keys: several live on broker 2), half unkeyed
            send(f"m{n}", n, key=f"k{n % 20}" if n % 2 else None)
            n += 1
            producer.poll(0)
            time.sleep(max(0.0, start + n / RATE - time.monotonic()))

        assert wait_for(lambda: _muted(producer, topic) >= ON_BROKER_2, 30, step=paced_send), "broker 2 never muted"
        mark = n
        for _ in range(AFTER_MUTE):
            paced_send()
        after = [f"m{i}" for i in range(mark, n)]
        assert wait_for(lambda: all(m in reports.delivered for m in after), 30, step=lambda: producer.poll(0.1)), (
            "messages produced after the mute must be delivered while broker 2 is still stopped"
        )
        assert {reports.delivered[m] for m in after}.isdisjoint(ON_BROKER_2)
        assert producer.counters.rerouted > 0  # keyed messages of broker 2's partitions went elsewhere
    assert producer.flush(60) == 0

    assert reports.failed == {} and reports.count == len(produced) == 60 + n
    assert sorted(values.calls) == sorted(produced)  # once per message: no re-send serialized again
    records = consume_all(kafka_cluster.bootstrap_servers, topic, len(produced))
    decode = AvroDeserializer(registry)
    read = {}
    for msg in records:
        value = decode(msg.value(), SerializationContext(topic, MessageField.VALUE, msg.headers()))
        read[value["id"]] = value
        key = msg.key()
        assert key is None or value["note"].startswith(key.decode() + "|")
    assert read == produced  # none lost, none altered
    assert registry.get_subjects() == [f"{topic}-value"]
    producer.close()
