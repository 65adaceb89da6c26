"""keyed_policy: hold keeps every key's order in the regime users run it in: RF=3, acks=all, idempotence, the
default policy otherwise, the application polling on its own thread while another produces, one broker stopped."""

from __future__ import annotations

import itertools
import threading
from collections import defaultdict
from typing import Any

from _helpers import BackgroundLoad, Ledger, consume_all, wait_for

from mutepro import MuteProducer
from mutepro.cluster.launcher import LocalCluster


def _exercised(producer: MuteProducer) -> bool:
    counters = producer.counters.as_dict()
    return counters["mutes"] > 0 and counters["held"] > 0


def test_hold_keeps_per_key_order_through_a_stall(
    kafka_cluster: LocalCluster, topic_factory: Any
) -> None:
    """60 keys at 1,500 msg/s, broker 2 stopped and muted by hand until the hold holds, everything read back: every
    key's sequence numbers arrive complete and in order (the plain producer's outcome), none failed.

    Muted by hand: with RF=3 and acks=all a stopped broker holds up *every* partition (it is in every ISR) until the
    controller fences it (broker.session.timeout.ms, 9 s), which also moves its leaderships away, so there is no
    moment in which only its partitions are stuck and the detectors rightly mute nothing (earlier runs caught a
    mute at the instant of recovery, on partitions whose leader had already moved). The operator's mute is what
    puts keyed messages on hold here, and the hold's order is what this test is about."""
    topic = topic_factory(partitions=12, replication_factor=3)
    ledger = Ledger()
    # idempotent, as order-sensitive applications configure it: mutepro then never purges (see README), so the
    # order rests on the hold and its barrier (nothing released while older messages await their reports)
    conf = kafka_cluster.client_config(**{"linger.ms": 5, "acks": "all", "enable.idempotence": True})
    producer = MuteProducer(conf, policy={"defaults": {"keyed_policy": "hold"}})
    stop = threading.Event()

    def app_poll() -> None:  # the application's own poll loop, concurrent with the producing thread
        while not stop.is_set():
            producer.poll(0.1)

    poller = threading.Thread(target=app_poll, daemon=True)
    poller.start()
    keys = [f"key-{i}".encode() for i in range(60)]
    try:
        # max_messages for the whole 120 s: with the default 50,000 (33 s at this rate) a slow start -- an idempotent
        # producer waiting for its PID while the coordinator loads (CI) -- spent the load before the stall began,
        # and nothing was left to hold
        with BackgroundLoad(producer, topic, ledger, rate=1500, keys=keys, max_s=120, max_messages=180_000) as load:
            assert wait_for(lambda: len(ledger.delivered) > 3000, 30)
            with kafka_cluster.stalled(2):
                producer.mute_manager.mute_broker(2)
                assert wait_for(lambda: _exercised(producer), 60), producer.counters.as_dict()
                stop.wait(3)
            producer.mute_manager.unmute_broker(2)
            # a partition muted again by a failed probe backs off up to breaker.max_retry_interval_ms (60 s)
            assert wait_for(lambda: not producer.mute_manager.muted_partitions().get(topic), 150)
            stop.wait(2)
            load.stop()
        assert producer.flush(150) == 0
    finally:
        stop.set()
        poller.join(10)
    assert ledger.failed == {}
    records = consume_all(kafka_cluster.bootstrap_servers, topic, len(load.sent))
    seen: dict[str, list[int]] = defaultdict(list)
    where: dict[str, list[tuple[int, int, int, Any]]] = defaultdict(list)
    for msg in records:
        _mid, key, seq = msg.value().decode().split("|")
        seen[key].append(int(seq))
        where[key].append((int(seq), msg.partition(), msg.offset(), msg.headers()))
    for key, items in where.items():
        for a, b in itertools.pairwise(items):
            if b[0] < a[0]:
                print(f"inversion {key}: {a[:3]} then {b[:3]} headers {a[3]} / {b[3]}")
                break
    inversions = {k: sum(1 for a, b in itertools.pairwise(s) if b < a) for k, s in seen.items()}
    print(f"hold order: {len(records)} records, inversions {sum(inversions.values())}, "
          f"counters {producer.counters.as_dict()}, late purge reports {producer._stragglers}")
    assert sum(inversions.values()) == 0, {k: v for k, v in inversions.items() if v}
    counters = producer.counters.as_dict()
    assert counters["mutes"] > 0 and counters["held"] > 0  # the hold was exercised
    assert counters["requeued"] == 0 and counters["rescued"] == 0  # the idempotent producer was never purged
    for key in keys:
        assert sorted(seen[key.decode()]) == list(range(load.sequence[key])), f"{key!r}: incomplete or duplicated"
    producer.close()
