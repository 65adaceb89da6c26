"""mutepro.aio's AIOProducer (AsyncSerializingProducer: test_serializing.py) over a MuteProducer on the fake
inner producer: every future resolves with the delivered message or fails with the final KafkaError, also for
messages MuteProducer rerouted, held or rescued; the caller's config is never modified; close() flushes and closes
the MuteProducer.

No broker and no MuteProducer threads (``_threads=False``): the test ticks the driver and decides each message's
fate on the fake, between awaits, while no executor call is running (``max_workers=1``, ``buffer_timeout=0``:
nothing runs in the background)."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Iterator
from typing import Any

import confluent_kafka.aio
import pytest
from confluent_kafka import KafkaError, KafkaException

from mutepro import MuteProducer
from mutepro.aio import AIOProducer
from mutepro.testing.fakes import FakeInnerProducer
from tests.unit._producer_fakes import CONF, PARTITIONS, TOPIC, Harness, keys_by_home, topic_policy

RESCUE_HEADER = "x-mutepro-rescued-from"


def _over(h: Harness, **kwargs: Any) -> AIOProducer:
    """An AIOProducer whose inner producer is the harness's MuteProducer."""
    return AIOProducer(
        {"bootstrap.servers": "unused"}, max_workers=1, buffer_timeout=0,
        producer_factory=lambda conf, **_: h.producer, **kwargs,
    )


def _key_for(h: Harness, home: int) -> bytes:
    return next(k for k, p in keys_by_home(h) if p == home)


async def _produce_all(p: AIOProducer, *messages: tuple[bytes, bytes | None]) -> list[asyncio.Future[Any]]:
    """Produce the (value, key) messages and hand them to the MuteProducer (``batch_size`` = their count)."""
    futures = [await p.produce(TOPIC, value, key) for value, key in messages]
    assert len(p._batch_processor._message_buffer) == 0, "batch_size should have flushed the buffer"
    return futures


@pytest.fixture
def holding() -> Iterator[Harness]:
    h = Harness(keyed_policy="hold")
    yield h
    if not h.producer._closed:
        h.close()


@pytest.mark.asyncio
class TestFutures:
    async def test_a_delivered_message_resolves_its_future_with_the_message(self, harness: Harness) -> None:
        p = _over(harness, batch_size=3)
        futures = await _produce_all(p, (b"0", b"a"), (b"1", b"b"), (b"2", None))
        assert [s.value for s in harness.fake.pending] == [b"0", b"1", b"2"]
        assert not any(f.done() for f in futures)  # nothing delivered yet
        placed = [s.partition for s in harness.fake.pending]
        harness.fake.deliver()
        assert await p.flush() == 0
        messages = [f.result() for f in futures]
        assert [m.value() for m in messages] == [b"0", b"1", b"2"]
        assert [m.partition() for m in messages] == placed and all(m.error() is None for m in messages)
        await p.close()

    async def test_a_failed_message_fails_its_future_with_the_kafka_error(self, harness: Harness) -> None:
        p = _over(harness, batch_size=1)
        [future] = await _produce_all(p, (b"big", None))
        harness.fake.fail(TOPIC, None, KafkaError.MSG_SIZE_TOO_LARGE)
        await p.flush()
        with pytest.raises(KafkaException) as raised:
            await future
        assert raised.value.args[0].code() == KafkaError.MSG_SIZE_TOO_LARGE
        await p.close()

    async def test_a_full_queue_fails_the_future_with_queue_full(self, harness: Harness) -> None:
        """MuteProducer.produce_batch records the BufferError as the message's _error, which the executor turns
        into the future's KafkaException; the messages that fit are not affected."""
        harness.fake.capacity = 1
        p = _over(harness, batch_size=2)
        first, second = await _produce_all(p, (b"fits", None), (b"refused", None))
        with pytest.raises(KafkaException) as raised:
            await second
        assert raised.value.args[0].code() == KafkaError._QUEUE_FULL
        harness.fake.deliver()
        await p.flush()
        assert (await first).value() == b"fits"
        await p.close()


@pytest.mark.asyncio
class TestMutedPartitions:
    async def test_a_rerouted_message_resolves_with_the_partition_it_landed_on(self, harness: Harness) -> None:
        key = _key_for(harness, 2)
        harness.producer.mute_manager.mute(TOPIC, 2)
        harness.tick()
        p = _over(harness, batch_size=1)
        [future] = await _produce_all(p, (b"moved", key))
        [sent] = harness.fake.pending
        assert sent.partition != 2
        harness.fake.deliver()
        await p.flush()
        assert (await future).partition() == sent.partition

    async def test_a_held_message_resolves_once_released_and_delivered(self, holding: Harness) -> None:
        harness = holding
        key = _key_for(harness, 1)
        harness.producer.mute_manager.mute(TOPIC, 1)
        harness.tick()
        p = _over(harness, batch_size=2)
        futures = await _produce_all(p, (b"0", key), (b"1", key))
        assert harness.producer.held(TOPIC) == 2 and harness.fake.pending == []
        assert len(p) == 2  # held messages count as pending, as in MuteProducer
        await p.poll(0)
        assert not any(f.done() for f in futures)
        harness.producer.mute_manager.unmute(TOPIC, 1)
        harness.tick()
        assert harness.values(1) == [b"0", b"1"]
        harness.fake.deliver()
        await p.flush()
        assert [((await f).value(), (await f).partition()) for f in futures] == [(b"0", 1), (b"1", 1)]

    async def test_a_held_message_that_is_purged_fails_with_purge_queue(self, holding: Harness) -> None:
        harness = holding
        key = _key_for(harness, 3)
        harness.producer.mute_manager.mute(TOPIC, 3)
        harness.tick()
        p = _over(harness, batch_size=1)
        [future] = await _produce_all(p, (b"held", key))
        assert harness.producer.held(TOPIC) == 1
        await p.purge()
        await p.poll(0)
        with pytest.raises(KafkaException) as raised:
            await future
        assert raised.value.args[0].code() == KafkaError._PURGE_QUEUE

    async def test_keyed_policy_fail_fails_the_future_with_state(self) -> None:
        h = Harness(keyed_policy="fail")
        key = _key_for(h, 0)
        h.producer.mute_manager.mute(TOPIC, 0)
        h.tick()
        p = _over(h, batch_size=1)
        [future] = await _produce_all(p, (b"refused", key))
        await p.poll(0)
        with pytest.raises(KafkaException) as raised:
            await future
        assert raised.value.args[0].code() == KafkaError._STATE and h.fake.sent == []
        await p.close()

    async def test_rescued_messages_resolve_with_the_partition_they_were_resent_to(self, harness: Harness) -> None:
        p = _over(harness, batch_size=10)
        futures = await _produce_all(p, *((f"{i}".encode(), None) for i in range(10)))
        victim = harness.fake.sent[0].partition
        stranded = harness.values(victim)
        harness.producer.mute_manager.mute(TOPIC, victim)
        harness.tick()  # the rescue: purge the victim's queue, re-send it elsewhere
        assert harness.producer.counters.rescued == len(stranded) > 0 and harness.values(victim) == []
        harness.fake.deliver()
        assert await p.flush() == 0
        delivered = {(await f).value(): await f for f in futures}
        assert sorted(delivered) == [f"{i}".encode() for i in range(10)]
        for value in stranded:
            msg = delivered[value]
            assert msg.partition() != victim and (RESCUE_HEADER, str(victim).encode()) in (msg.headers() or [])
        await p.close()


@pytest.mark.asyncio
async def test_a_timestamp_fails_its_batch_as_with_confluent_kafka(harness: Harness) -> None:
    """produce_batch carries no timestamps (the real one refuses them too): the batch's futures fail and the call
    that flushed raises, as confluent-kafka's AIOProducer over the plain client does."""
    p = _over(harness, batch_size=2)
    first = await p.produce(TOPIC, b"plain")
    with pytest.raises(NotImplementedError):
        await p.produce(TOPIC, b"stamped", timestamp=1_700_000_000_000)
    with pytest.raises(NotImplementedError):
        await first
    assert harness.fake.sent == []
    # confluent-kafka puts the failed batch back in the buffer, futures already failed (the stamped one's future
    # never reached the caller)
    assert [type(f.exception()) for f in p._batch_processor._buffer_futures] == [NotImplementedError] * 2
    p._batch_processor.clear_buffer()
    await p.close()


@pytest.mark.asyncio
class TestConstruction:
    async def test_the_callers_config_is_not_modified(self) -> None:
        async def on_error(err: KafkaError) -> None:
            pass

        async def on_stats(raw: str) -> None:
            pass

        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        conf = {**CONF, "error_cb": on_error, "stats_cb": on_stats}
        before = dict(conf)
        factory = functools.partial(MuteProducer, _inner_factory=fake.factory, _threads=False)
        p = AIOProducer(conf, buffer_timeout=0, producer_factory=factory, policy=topic_policy())
        assert conf == before and conf["error_cb"] is on_error and conf["stats_cb"] is on_stats
        assert fake.config["bootstrap.servers"] == CONF["bootstrap.servers"]
        await p.close()
        assert conf == before

    async def test_mute_options_reach_the_factory_and_the_default_is_mute_producer(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The default factory is the name ``mutepro.aio.producer.MuteProducer``, looked up at construction."""
        built: list[tuple[dict[str, Any], dict[str, Any]]] = []
        fake = FakeInnerProducer({TOPIC: PARTITIONS})

        def recording(conf: dict[str, Any], **options: Any) -> MuteProducer:
            built.append((conf, options))
            return MuteProducer(conf, _inner_factory=fake.factory, _threads=False, **options)

        monkeypatch.setattr("mutepro.aio.producer.MuteProducer", recording)
        policy = topic_policy(keyed_policy="hold")
        p = AIOProducer({"bootstrap.servers": "x"}, buffer_timeout=0, policy=policy, name="aio-test")
        assert built == [({"bootstrap.servers": "x"}, {"policy": policy, "name": "aio-test"})]
        assert isinstance(p, confluent_kafka.aio.AIOProducer) and isinstance(p.mute_producer, MuteProducer)
        assert p.mute_producer.name == "aio-test"
        await p.close()

    async def test_it_sets_every_attribute_confluent_kafkas_constructor_sets(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """mutepro's __init__ stands in for confluent-kafka's (which builds a plain Producer): the inherited methods
        need everything that one sets. Fails when a confluent-kafka upgrade adds a part mutepro does not build."""
        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        monkeypatch.setattr("confluent_kafka.aio.producer._AIOProducer.confluent_kafka.Producer", fake.factory)
        theirs = confluent_kafka.aio.AIOProducer(dict(CONF), buffer_timeout=0)
        factory = functools.partial(MuteProducer, _inner_factory=FakeInnerProducer({TOPIC: PARTITIONS}).factory,
                                    _threads=False)
        ours = AIOProducer(CONF, buffer_timeout=0, producer_factory=factory)
        assert set(vars(theirs)) <= set(vars(ours))
        same = set(vars(theirs)) - {"_producer", "_batch_processor"}  # those two differ on purpose
        assert {k: type(vars(theirs)[k]) for k in same} == {k: type(vars(ours)[k]) for k in same}
        await theirs.close()
        await ours.close()

    async def test_a_factory_that_raises_leaves_no_executor_behind(self) -> None:
        def broken(conf: dict[str, Any], **options: Any) -> Any:
            raise KafkaException(KafkaError(KafkaError._INVALID_ARG, "No such configuration property"))

        threads = threading.active_count()
        with pytest.raises(KafkaException):
            AIOProducer({"bootstrap.servers": "x", "bogus": 1}, producer_factory=broken)
        assert threading.active_count() == threads


class _AutoDeliver(FakeInnerProducer):
    """A fake whose poll() delivers whatever is pending first (a broker that always answers)."""

    def poll(self, timeout: float | None = None) -> int:
        self.deliver()
        return super().poll(timeout)


@pytest.mark.asyncio
class TestClose:
    async def test_close_flushes_buffered_messages_and_closes_the_mute_producer(self) -> None:
        fake = _AutoDeliver({TOPIC: PARTITIONS})
        factory = functools.partial(MuteProducer, _inner_factory=fake.factory, _threads=False)
        async with AIOProducer(CONF, batch_size=100, buffer_timeout=0, producer_factory=factory) as p:
            futures = [await p.produce(TOPIC, f"{i}".encode()) for i in range(5)]
            assert len(p) == 5 and fake.sent == []  # still in the batch buffer
        assert [(await f).value() for f in futures] == [f"{i}".encode() for i in range(5)]
        assert p.mute_producer._closed and fake.closed and len(p) == 0
        await p.close()  # a second close does nothing

    async def test_futures_resolve_without_an_explicit_flush(self) -> None:
        """The buffer-timeout task sends the buffer and polls: the future resolves with nobody calling flush()."""
        fake = _AutoDeliver({TOPIC: PARTITIONS})
        factory = functools.partial(MuteProducer, _inner_factory=fake.factory, _threads=False)
        p = AIOProducer(CONF, batch_size=100, buffer_timeout=0.05, producer_factory=factory)
        future = await p.produce(TOPIC, b"alone")
        assert (await asyncio.wait_for(future, 10)).value() == b"alone"
        await p.close()
