"""mutepro.aio.AIOProducer against the real cluster with a stalled broker: thousands of concurrent
``await produce()`` calls, every future resolved, every delivered message read back, nothing lost."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from _helpers import consume_all
from confluent_kafka import KafkaException, Message

from mutepro.aio import AIOProducer
from mutepro.cluster.launcher import LocalCluster

pytestmark = pytest.mark.integration

# Broker 2 leads partitions 1 and 4 of a topic made with this assignment (RF=1: nothing fails over).
RF1 = [[1], [2], [3], [1], [2], [3]]
ON_BROKER_2 = {1, 4}
PER_WAVE = 2_500  # two waves: one sent as the stall begins, one once broker 2's partitions are muted
POLICY = {"defaults": {"slow_call": {"threshold_ms": 500}, "breaker": {"retry_interval_ms": 60_000}}}


async def _wave(producer: AIOProducer, topic: str, wave: str) -> list[asyncio.Future[Any]]:
    """PER_WAVE concurrent produce() calls (every other one keyed); their delivery futures, in send order."""

    async def send(i: int) -> asyncio.Future[Any]:
        key = f"k{i % 97}".encode() if i % 2 else None
        return await producer.produce(topic, f"{wave}{i}".encode(), key)

    return list(await asyncio.gather(*(send(i) for i in range(PER_WAVE))))


async def _until(predicate: Any, timeout_s: float) -> bool:
    """Condition polling: the mute is a state change inside MuteProducer's driver thread, with no awaitable."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def _outcome(future: asyncio.Future[Any]) -> Message | KafkaException:
    assert future.done(), "every future must be resolved once the producer is closed"
    err = future.exception()
    if err is not None:
        assert isinstance(err, KafkaException), f"a delivery future fails with KafkaException, not {err!r}"
        return err
    msg: Message = future.result()
    return msg


async def _scenario(cluster: LocalCluster, topic: str) -> dict[str, Any]:
    conf = cluster.client_config(**{"linger.ms": 5})
    before = dict(conf)
    producer = AIOProducer(conf, batch_size=200, buffer_timeout=0.05, policy=POLICY)
    inner = producer.mute_producer

    def muted() -> set[int]:
        return set(inner.mute_manager.muted_partitions().get(topic, []))

    warm = [await producer.produce(topic, f"warm{p}".encode(), partition=p) for p in range(6)]
    await producer.flush(30)
    assert all(not f.exception() for f in warm)
    assert await _until(lambda: inner.mute_manager.snapshot(topic) is not None, 15)
    with cluster.stalled(2):
        first = await _wave(producer, topic, "a")  # some land on broker 2 before it is muted
        await producer.flush(0)
        assert await _until(lambda: muted() >= ON_BROKER_2, 30), f"muted: {muted()}"
        second = await _wave(producer, topic, "b")
        # with broker 2 still stalled: the second wave is delivered around it
        await asyncio.wait_for(asyncio.gather(*second, return_exceptions=True), 60)
        during = [_outcome(f) for f in second]
        rescued_during = inner.counters.rescued
    await producer.close()  # flushes: the first wave's stranded messages resolve (rescued, or after the resume)
    assert conf == before
    return {
        "first": [_outcome(f) for f in first], "second": during, "rescued": rescued_during,
        "counters": inner.counters.as_dict(),
    }


def test_concurrent_produce_under_a_stalled_broker_resolves_every_future(
    kafka_cluster: LocalCluster, topic_factory: Any
) -> None:
    topic = topic_factory(replica_assignment=RF1)
    result = asyncio.run(_scenario(kafka_cluster, topic))
    outcomes = result["first"] + result["second"]
    failed = [o for o in outcomes if isinstance(o, KafkaException)]
    assert failed == [], f"{len(failed)} failed deliveries, e.g. {failed[:3]}"
    assert all(isinstance(m, Message) and m.offset() >= 0 and m.error() is None for m in outcomes)
    # the wave sent once broker 2 was muted went around it: its keyed messages for partitions 1 and 4 rerouted
    assert {m.partition() for m in result["second"]}.isdisjoint(ON_BROKER_2)
    assert result["counters"]["rerouted"] > 0
    values = [m.value() for m in outcomes]
    assert len(set(values)) == 2 * PER_WAVE
    # every delivered message is in Kafka exactly where its future said, once
    records = consume_all(kafka_cluster.bootstrap_servers, topic, 2 * PER_WAVE + 6)
    where = {(r.partition(), r.offset()): r.value() for r in records}
    assert len(records) == 2 * PER_WAVE + 6, f"read back {len(records)} records"
    assert all(where.get((m.partition(), m.offset())) == m.value() for m in outcomes)
    print(f"aio stalled-broker: {len(outcomes)} futures, rescued during the stall {result['rescued']}, "
          f"counters {result['counters']}")
