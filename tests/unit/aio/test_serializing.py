"""confluent-kafka's AsyncSerializingProducer over mutepro's AIOProducer (mutepro.aio.serializing): the caller's
config untouched, each message serialized once (a rescue re-sends the bytes), close() closing the MuteProducer."""

from __future__ import annotations

from typing import Any

import confluent_kafka.aio
import pytest
from confluent_kafka.serialization import SerializationContext, StringSerializer

from mutepro.aio import AIOProducer, AsyncSerializingProducer
from tests.unit._producer_fakes import TOPIC, Harness


@pytest.mark.asyncio
class TestAsyncSerializingProducer:
    async def test_each_message_is_serialized_once_even_when_rescued(self, harness: Harness) -> None:
        h = harness
        calls: list[Any] = []
        to_str = StringSerializer()

        def counting(obj: Any, ctx: SerializationContext) -> bytes | None:
            calls.append(obj)
            return to_str(obj, ctx)

        conf = {"bootstrap.servers": "unused", "value.serializer": counting, "key.serializer": to_str}
        before = dict(conf)
        p = await AsyncSerializingProducer(
            conf, max_workers=1, batch_size=6, buffer_timeout=0, producer_factory=lambda c, **_: h.producer,
        )
        assert conf == before
        assert isinstance(p, confluent_kafka.aio.AsyncSerializingProducer) and isinstance(p, AIOProducer)
        futures = [await p.produce(TOPIC, value=f"v{i}") for i in range(6)]
        victim = h.fake.sent[0].partition
        h.producer.mute_manager.mute(TOPIC, victim)
        h.tick()
        assert h.producer.counters.rescued > 0
        h.fake.deliver()
        await p.flush()
        messages = [f.result() for f in futures]
        assert sorted(m.value() for m in messages) == [f"v{i}".encode() for i in range(6)]
        assert all(m.partition() != victim for m in messages)
        assert calls == [f"v{i}" for i in range(6)]  # once each, the re-sends carried the bytes
        await p.close()
        assert p._is_closed and h.producer._closed
