"""MuteSerializingProducer (mutepro.producer.serializing) on the fake inner producer: SerializationContexts, the
serialization errors, the checks made before serializing, one serialization per message however often MuteProducer
re-sends it, builders and their ownership, the caller's config left alone, close(), and the C fast path for the
bytes."""

from __future__ import annotations

import copy
import gc
from typing import Any

import pytest
from confluent_kafka import KafkaError, Message
from confluent_kafka.error import KeySerializationError, ValueSerializationError
from confluent_kafka.serialization import MessageField, SerializationContext, StringSerializer

from mutepro import MuteSerializingProducer
from mutepro.testing.fakes import FakeClock, FakeInnerProducer
from tests.unit._producer_fakes import CONF, PARTITIONS, TOPIC, Harness, keys_by_home, topic_policy

RESCUE_HEADER = "x-mutepro-rescued-from"
_NOTHING = object()  # equal to no object a test serializes


class Recorder:
    """A serializer that records each call (object, topic, field, headers as seen at the call) and encodes
    ``prefix + str(obj)``; setting ``fail_on`` makes it raise for that object."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.fail_on: Any = _NOTHING
        self.calls: list[tuple[Any, str, str, Any]] = []
        self.closed = 0
        self.resolver: Any = None

    def __call__(self, obj: Any, ctx: SerializationContext) -> bytes | None:
        self.calls.append((obj, ctx.topic, ctx.field, ctx.headers))
        if obj == self.fail_on:
            raise ValueError(f"cannot serialize {obj!r}")
        return None if obj is None else f"{self.prefix}{obj}".encode()

    def close(self) -> None:
        self.closed += 1

    def set_cluster_id_resolver(self, resolver: Any) -> None:
        self.resolver = resolver


class Builder:
    """A ``.builder``: builds a Recorder and consumes its own setting from the config (as Schema Registry
    builders consume ``schema.registry.*``)."""

    def __init__(self, prefix: str, consumes: str = "registry.url") -> None:
        self.prefix = prefix
        self.consumes = consumes
        self.seen: list[tuple[dict[str, Any], bool]] = []
        self.built: Recorder | None = None

    def build(self, conf: dict[str, Any], is_key: bool) -> tuple[Recorder, dict[str, Any]]:
        self.seen.append((dict(conf), is_key))
        self.built = Recorder(self.prefix)
        return self.built, {k: v for k, v in conf.items() if k != self.consumes}


class SerializingHarness(Harness):
    """:class:`Harness` (fake inner producer, fake clock, no threads) around a MuteSerializingProducer; the key
    and value serializers are Recorders unless ``conf`` names others."""

    def __init__(self, conf: dict[str, Any] | None = None, **policy: Any) -> None:
        self.clock = FakeClock()
        self.fake = FakeInnerProducer({TOPIC: PARTITIONS})
        self.reports: list[tuple[int | None, Message]] = []
        self.keys = Recorder("k:")
        self.vals = Recorder("v:")
        self.conf = {**CONF, "key.serializer": self.keys, "value.serializer": self.vals, **(conf or {})}
        self.producer: MuteSerializingProducer = MuteSerializingProducer(
            self.conf, policy=topic_policy(**policy), clock=self.clock,
            _inner_factory=self.fake.factory, _threads=False,
        )
        assert not self.producer.wait_for_topic(TOPIC, 0)  # asks for the topic's metadata...
        self.producer._load_metadata(self.clock())  # ...which the metadata round loads
        assert self.producer.wait_for_topic(TOPIC, 0)

    def produce(self, value: Any, key: Any = None, **kwargs: Any) -> None:
        self.producer.produce(TOPIC, key, value, on_delivery=self.callback, **kwargs)


class ClusteredFake(FakeInnerProducer):
    """The fake inner producer with librdkafka's ``cluster_id()`` (Schema Registry serializers ask for it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cluster_id_calls: list[float | None] = []

    def cluster_id(self, timeout: float | None = None) -> str:
        self.cluster_id_calls.append(timeout)
        return "cluster-x"


def _offline(**conf: Any) -> dict[str, Any]:
    return {**CONF, **conf}


class TestSerialization:
    def test_each_serializer_gets_its_field_the_topic_and_the_headers(self) -> None:
        """Key then value, each with SerializationContext(topic, KEY / VALUE, headers); librdkafka gets the bytes,
        the headers, timestamp and partition unchanged."""
        h = SerializingHarness()
        headers = [("h", b"1")]
        h.producer.produce(TOPIC, key="a", value="b", partition=2, timestamp=1234, headers=headers)
        assert h.keys.calls == [("a", TOPIC, MessageField.KEY, headers)]
        assert h.vals.calls == [("b", TOPIC, MessageField.VALUE, headers)]
        (sent,) = h.fake.sent
        assert (sent.key, sent.value, sent.partition, sent.timestamp) == (b"k:a", b"v:b", 2, 1234)
        assert sent.headers == headers
        h.close()

    def test_headers_a_serializer_adds_go_with_the_message(self) -> None:
        """Schema ids in headers (confluent's header_schema_id_serializer appends to ctx.headers): the list the
        serializers saw is the one produced (as with SerializingProducer)."""

        def with_schema_header(obj: Any, ctx: SerializationContext) -> bytes:
            ctx.headers.append(("__value_schema_id", b"\x01"))
            return str(obj).encode()

        h = SerializingHarness(conf={"value.serializer": with_schema_header})
        h.producer.produce(TOPIC, key="k", value="v", partition=2, headers=[("app", b"1")])
        assert h.fake.sent[0].headers == [("app", b"1"), ("__value_schema_id", b"\x01")]
        h.close()

    def test_key_before_value_positionally_as_serializing_producer(self) -> None:
        """produce(topic, key, value, partition, on_delivery, timestamp, headers): SerializingProducer's order."""
        h = SerializingHarness()
        h.producer.produce(TOPIC, "K", "V", 1, h.callback, 99, None)
        assert [(s.key, s.value, s.partition, s.timestamp) for s in h.fake.sent] == [(b"k:K", b"v:V", 1, 99)]
        h.fake.deliver()
        assert h.producer.flush(1) == 0 and [c for c, _ in h.reports] == [None]
        h.close()

    def test_without_a_serializer_the_object_goes_as_it_is(self) -> None:
        """No key.serializer: the key is handed on untouched (bytes or str, as SerializingProducer does)."""
        h = SerializingHarness(conf={"key.serializer": None})
        h.producer.produce(TOPIC, key=b"raw", value="x", partition=0)
        h.producer.produce(TOPIC, key="text", value="y", partition=0)
        assert [(s.key, s.value) for s in h.fake.sent] == [(b"raw", b"v:x"), ("text", b"v:y")]
        assert h.keys.calls == []
        h.close()

    def test_none_objects_are_serialized_too(self) -> None:
        """Serializers see None (a tombstone's value), as with SerializingProducer, and decide what it becomes."""
        h = SerializingHarness()
        h.producer.produce(TOPIC, key="k", partition=3)
        assert h.vals.calls == [(None, TOPIC, MessageField.VALUE, None)]
        assert h.fake.sent[0].value is None
        h.close()

    def test_confluents_string_serializer(self) -> None:
        """A confluent_kafka.serialization.Serializer instance, not only a callable."""
        h = SerializingHarness(conf={"value.serializer": StringSerializer("utf_8")})
        h.producer.produce(TOPIC, value="héllo", partition=0)
        assert h.fake.sent[0].value == "héllo".encode()
        h.close()


class TestErrors:
    def test_a_failing_key_serializer_raises_key_serialization_error(self) -> None:
        """KeySerializationError carrying the serializer's exception; the value is not serialized, nothing sent."""
        h = SerializingHarness()
        h.keys.fail_on = "bad"
        with pytest.raises(KeySerializationError) as info:
            h.producer.produce(TOPIC, key="bad", value="v")
        assert isinstance(info.value.exception, ValueError) and info.value.__cause__ is info.value.exception
        assert h.vals.calls == [] and h.fake.sent == [] and len(h.producer) == 0
        h.close()

    def test_a_failing_value_serializer_raises_value_serialization_error(self) -> None:
        h = SerializingHarness()
        h.vals.fail_on = "bad"
        with pytest.raises(ValueSerializationError) as info:
            h.producer.produce(TOPIC, key="k", value="bad")
        assert isinstance(info.value.exception, ValueError)
        assert len(h.keys.calls) == 1 and h.fake.sent == [] and h.producer.counters.produced == 0
        h.close()

    def test_a_full_queue_is_buffer_error_after_serializing(self) -> None:
        """librdkafka's BufferError comes through as it is (not wrapped): the application polls and retries."""
        h = SerializingHarness()
        h.fake.capacity = 0
        with pytest.raises(BufferError):
            h.producer.produce(TOPIC, key="k", value="v", partition=1)
        assert len(h.vals.calls) == 1
        h.fake.capacity = 100
        h.close()


class TestChecksBeforeSerializing:
    def test_a_closed_producer_raises_runtime_error_before_any_serializer(self) -> None:
        h = SerializingHarness()
        h.close()
        with pytest.raises(RuntimeError, match="Producer has been closed"):
            h.producer.produce(TOPIC, key="k", value="v")
        assert h.keys.calls == [] and h.vals.calls == []

    def test_a_topic_that_is_not_a_str_is_type_error_before_any_serializer(self) -> None:
        h = SerializingHarness()
        with pytest.raises(TypeError, match="topic must be a str, not bytes"):
            h.producer.produce(b"orders", key="k", value="v")  # type: ignore[arg-type]
        assert h.keys.calls == [] and h.vals.calls == [] and h.fake.sent == []
        h.close()

    def test_an_instance_never_initialised_is_closed(self) -> None:
        """A subclass that skips __init__: produce() raises the closed RuntimeError, as the real client."""
        bare = MuteSerializingProducer.__new__(MuteSerializingProducer)
        with pytest.raises(RuntimeError, match="Producer has been closed"):
            bare.produce(TOPIC, value="v")


class TestOncePerMessage:
    def test_messages_rescued_from_a_muted_partition_are_not_serialized_again(self) -> None:
        """Ten messages queued, the first one's partition muted: its messages are purged and re-sent elsewhere (with
        the rescue header) as the same bytes; the serializers ran ten times, not once more per re-send."""
        h = SerializingHarness()
        for i in range(10):
            h.produce(f"m{i}")
        victim = h.fake.sent[0].partition
        queued = h.values(victim)
        assert queued
        h.producer.mute_manager.mute(TOPIC, victim)
        h.tick()
        moved = [s for s in h.fake.pending if (RESCUE_HEADER, str(victim).encode()) in (s.headers or [])]
        assert [s.value for s in moved] == queued and h.producer.counters.rescued == len(queued)
        assert len(h.fake.sent) == 10 + len(queued) + (h.producer.counters.requeued)
        assert len(h.vals.calls) == 10 and len(h.keys.calls) == 10
        h.fake.deliver()
        assert h.producer.flush(1) == 0 and len(h.reports) == 10 and {c for c, _ in h.reports} == {None}
        assert sorted(m.value() for _, m in h.reports) == sorted(f"v:m{i}".encode() for i in range(10))
        h.close()

    def test_a_timed_out_message_is_resent_as_its_bytes(self) -> None:
        """_MSG_TIMED_OUT on a partition muted meanwhile: re-sent elsewhere, not re-serialized."""
        h = SerializingHarness()
        h.produce("t")
        first = h.fake.sent[-1].partition
        h.producer.mute_manager.mute(TOPIC, first)
        h.fake.fail(TOPIC, first, KafkaError._MSG_TIMED_OUT)
        h.producer.poll(0)
        assert len(h.fake.sent) == 2 and h.fake.sent[1].partition != first and h.fake.sent[1].value == b"v:t"
        assert len(h.vals.calls) == 1
        h.close()

    def test_held_messages_are_released_as_their_bytes(self) -> None:
        """keyed_policy hold: messages of a muted home are held, then released after the unmute, serialized once."""
        h = SerializingHarness(keyed_policy="hold", conf={"key.serializer": None})
        key = next(k for k, p in keys_by_home(h) if p == 1)
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        for i in range(5):
            h.produce(i, key)
        assert h.producer.held(TOPIC) == 5 and h.values(1) == []
        h.producer.mute_manager.unmute(TOPIC, 1)
        h.tick()
        assert h.values(1) == [f"v:{i}".encode() for i in range(5)]
        assert [c[0] for c in h.vals.calls] == [0, 1, 2, 3, 4]
        h.close()


def test_the_bytes_take_the_c_fast_path() -> None:
    """produce() is overridden (so MuteProducer leaves it alone), but the serialized message goes to the C fast
    path's produce: healthy keyed traffic never falls back to Python (FastPath.fallbacks unchanged)."""
    h = SerializingHarness()
    fast = h.producer._fast
    assert fast is not None and h.producer._produce_bytes == fast.produce
    before = fast.fallbacks
    for i in range(200):
        h.produce(f"v{i}", f"key{i % 7}")
    assert fast.fallbacks == before and len(h.fake.sent) == 200
    assert h.producer._tracker.totals.produced == 200
    h.close()


class TestConstruction:
    def test_the_callers_config_is_never_modified(self) -> None:
        """Serializers, builders, callbacks and settings: the dict is the same (keys, values, identities) after
        construction and after close."""
        builder = Builder("b:")
        conf = _offline(**{
            "key.serializer": Recorder("k:"), "value.serializer.builder": builder, "registry.url": "mock://x",
            "on_delivery": lambda err, msg: None, "error_cb": lambda err: None, "delivery.report.only.error": False,
        })
        before = copy.copy(conf)
        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        producer = MuteSerializingProducer(conf, _inner_factory=fake.factory, _threads=False)
        assert conf == before and all(conf[k] is before[k] for k in conf)
        producer.close(0)
        assert conf == before

    def test_builders_get_the_config_and_what_they_consume_never_reaches_librdkafka(self) -> None:
        """Each builder gets the whole config (and is_key); a setting any of them consumed is left out of the
        librdkafka config, and mutepro's keyword arguments are not settings."""
        kb, vb = Builder("K:"), Builder("V:")
        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        producer = MuteSerializingProducer(
            _offline(**{"key.serializer.builder": kb, "value.serializer.builder": vb, "registry.url": "mock://x"}),
            name="serde-1", policy=topic_policy(), _inner_factory=fake.factory, _threads=False,
            **{"message.timeout.ms": 5000},
        )
        assert [is_key for _, is_key in kb.seen + vb.seen] == [True, False]
        assert kb.seen[0][0]["registry.url"] == "mock://x" and kb.seen[0][0]["message.timeout.ms"] == 5000
        assert "registry.url" not in fake.config and fake.config["message.timeout.ms"] == 5000
        assert not any(k.endswith((".serializer", ".builder")) for k in fake.config)
        assert "name" not in fake.config and producer.name == "serde-1"
        producer.produce(TOPIC, key="a", value="b", partition=0)
        assert (fake.sent[0].key, fake.sent[0].value) == (b"K:a", b"V:b")
        fake.deliver()
        producer.close(1)

    def test_from_policy_takes_the_serializers_from_config(self) -> None:
        """from_policy: librdkafka settings from the policy's client: block, the serializers from ``config``."""
        vals = Recorder("v:")
        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        producer = MuteSerializingProducer.from_policy(
            {"client": {"bootstrap.servers": "127.0.0.1:1", "linger.ms": 7}}, config={"value.serializer": vals},
            _inner_factory=fake.factory, _threads=False,
        )
        assert isinstance(producer, MuteSerializingProducer) and fake.config["linger.ms"] == 7
        assert "value.serializer" not in fake.config
        producer.produce(TOPIC, value="x", partition=0)
        assert fake.sent[0].value == b"v:x" and len(vals.calls) == 1
        fake.deliver()
        producer.close(1)

    def test_a_serializer_and_its_builder_together_are_refused(self) -> None:
        with pytest.raises(ValueError, match=r"Cannot configure both value\.serializer and value\.serializer\.builder"):
            MuteSerializingProducer(
                _offline(**{"value.serializer": Recorder("v:"), "value.serializer.builder": Builder("b:")}),
                _threads=False,
            )

    def test_built_serializers_are_closed_when_construction_fails(self) -> None:
        """The producer refused its arguments after the builders ran: what they built is closed here."""
        builder = Builder("b:")
        with pytest.raises(TypeError, match="policy must be"):
            MuteSerializingProducer(_offline(**{"value.serializer.builder": builder}), policy=42, _threads=False)
        assert builder.built is not None and builder.built.closed == 1

    def test_serializers_get_a_cluster_id_resolver_that_asks_the_client(self) -> None:
        """Ready-made and built serializers with set_cluster_id_resolver get one; it asks librdkafka's cluster_id
        (here the fake's) and does not keep the producer alive."""
        fake = ClusteredFake({TOPIC: PARTITIONS})
        ready, builder = Recorder("k:"), Builder("v:")
        producer = MuteSerializingProducer(
            _offline(**{"key.serializer": ready, "value.serializer.builder": builder}),
            _inner_factory=fake.factory, _threads=False,
        )
        assert builder.built is not None and builder.built.resolver is not None
        assert ready.resolver() == "cluster-x" and fake.cluster_id_calls == [60.0]
        producer.close(0)
        del producer, fake  # (the fake keeps the config, and so the producer's own callbacks)
        gc.collect()  # MuteProducer's parts refer to each other: the cycle collector frees it
        with pytest.raises(RuntimeError, match="Producer has been closed"):
            ready.resolver()


class TestClose:
    def test_close_closes_built_serializers_once_and_leaves_ready_made_ones(self) -> None:
        ready, builder = Recorder("k:"), Builder("v:")
        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        producer = MuteSerializingProducer(
            _offline(**{"key.serializer": ready, "value.serializer.builder": builder}),
            _inner_factory=fake.factory, _threads=False,
        )
        assert producer.close(0) is True and producer.close(0) is True
        assert builder.built is not None and builder.built.closed == 1 and ready.closed == 0
        assert fake.closed and len(producer) == 0

    def test_the_with_statement_closes_the_serializers(self) -> None:
        builder = Builder("v:")
        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        with MuteSerializingProducer(
            _offline(**{"value.serializer.builder": builder}), _inner_factory=fake.factory, _threads=False
        ) as producer:
            producer.produce(TOPIC, value="x", partition=0)
            fake.deliver()
        assert builder.built is not None and builder.built.closed == 1 and fake.closed

    def test_a_callback_raising_in_close_keeps_the_serializers_for_the_next_close(self) -> None:
        """close()'s flush runs a callback that raises: the exception propagates, the producer is closed, the
        serializers it built are closed by the next close() (SerializingProducer.close's contract)."""
        builder = Builder("v:")
        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        producer = MuteSerializingProducer(
            _offline(**{"value.serializer.builder": builder}), _inner_factory=fake.factory, _threads=False
        )

        def boom(err: Any, msg: Any) -> None:
            raise ZeroDivisionError("callback")

        producer.produce(TOPIC, value="x", partition=0, on_delivery=boom)
        fake.deliver()
        with pytest.raises(ZeroDivisionError):
            producer.close()
        assert builder.built is not None and builder.built.closed == 0
        with pytest.raises(RuntimeError, match="closed"):
            producer.produce(TOPIC, value="y")
        assert producer.close() is True and builder.built.closed == 1

    def test_callbacks_run_by_close_may_still_produce(self) -> None:
        """The flush inside close() runs callbacks before the producer counts as closed: a callback's produce()
        is serialized and delivered, as with SerializingProducer."""
        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        vals = Recorder("v:")
        producer = MuteSerializingProducer(
            _offline(**{"value.serializer": vals}), _inner_factory=fake.factory, _threads=False
        )
        again: list[bytes] = []

        def resend(err: Any, msg: Any) -> None:
            if not again:
                producer.produce(TOPIC, value="second", partition=0)
                again.append(msg.value())
                fake.deliver()

        producer.produce(TOPIC, value="first", partition=0, on_delivery=resend)
        fake.deliver()
        assert producer.close(1) is True
        assert again == [b"v:first"] and [s.value for s in fake.sent] == [b"v:first", b"v:second"]


def test_produce_batch_sends_the_messages_unserialized() -> None:
    """produce_batch() takes bytes/str and skips the serializers, as SerializingProducer's (the C Producer's)
    does; key and value keep their places."""
    h = SerializingHarness()
    assert h.producer.produce_batch(TOPIC, [{"value": b"v1", "key": b"k1"}, {"value": "v2"}], partition=1) == 2
    assert [(s.key, s.value, s.partition) for s in h.fake.sent] == [(b"k1", b"v1", 1), (None, "v2", 1)]
    assert h.keys.calls == [] and h.vals.calls == []
    h.close()


def test_the_spark_sinks_rows_go_unserialized_in_their_places() -> None:
    """MuteProducer._produce_rows (the Spark sink's loop) on this subclass sends bytes through the bytes produce:
    value and key in their places, no serializer called."""
    h = SerializingHarness()
    assert h.producer._produce_rows(TOPIC, [b"a", b"b"], [b"k1", b"k2"], None, "x-row", "p", 0) == 2
    assert [(s.value, s.key) for s in h.fake.sent] == [(b"a", b"k1"), (b"b", b"k2")]
    assert h.keys.calls == [] and h.vals.calls == []
    h.close()


def test_avro_through_a_mock_schema_registry() -> None:
    """confluent-kafka's AvroSerializer (mock:// Schema Registry) as value.serializer: the bytes librdkafka gets
    read back with AvroDeserializer, under the subject the topic's VALUE context names (the default associated
    strategy asks the client for its cluster id, then falls back to ``<topic>-value``)."""
    pytest.importorskip("fastavro")
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

    schema = '{"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"}]}'
    registry = SchemaRegistryClient.new_client({"url": "mock://unit-serializing"})  # the in-process mock
    fake = ClusteredFake({TOPIC: PARTITIONS})
    producer = MuteSerializingProducer(
        _offline(**{"key.serializer": StringSerializer(), "value.serializer": AvroSerializer(registry, schema)}),
        _inner_factory=fake.factory, _threads=False,
    )
    producer.produce(TOPIC, key="u1", value={"name": "ada"}, partition=0)
    assert registry.get_subjects() == [f"{TOPIC}-value"]
    decoded = AvroDeserializer(registry)(fake.sent[0].value, SerializationContext(TOPIC, MessageField.VALUE))
    assert decoded == {"name": "ada"} and fake.sent[0].key == b"u1" and fake.cluster_id_calls
    fake.deliver()
    producer.close(1)


def test_every_member_is_documented_as_confluents_test_docs_requires() -> None:
    """confluent-kafka's tests/test_docs.py rule, for the class it would find as confluent_kafka.SerializingProducer
    under the drop-in plugin: every member of the class itself (None skipped) has a docstring with a ':' in it."""
    members = {n: o for n, o in vars(MuteSerializingProducer).items() if not n.startswith("__") and o is not None}
    assert {"produce", "close"} <= set(members)
    undocumented = [n for n, o in members.items() if ":" not in (o.__doc__ or "")]
    assert undocumented == []
    assert ":" in (MuteSerializingProducer.__doc__ or "")
