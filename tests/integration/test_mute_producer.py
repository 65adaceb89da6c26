"""MuteProducer against the real cluster under real faults: muting, keyed policies, accounting, parity."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

import pytest
from _helpers import BackgroundLoad, Ledger, consume_all, wait_for
from confluent_kafka import KafkaError, KafkaException, Producer

from mutepro.cluster.launcher import LocalCluster
from mutepro.partition.hashing import key_partitioner
from mutepro.producer import MuteProducer

pytestmark = pytest.mark.integration



# Broker 2 (rack-b) leads partitions 1 and 4 of every RF=1 topic made with this assignment.
RF1 = [[1], [2], [3], [1], [2], [3]]
ON_BROKER_2 = {1, 4}
QUEUED = 3_000  # TestRescueDelay's explicit messages to partition 1 during the stall


def _policy(**defaults: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"slow_call": {"threshold_ms": 500}, "breaker": {"retry_interval_ms": 60_000}}
    for key, value in defaults.items():
        base[key] = {**base.get(key, {}), **value} if isinstance(value, dict) else value
    return {"defaults": base}


def _muted(producer: MuteProducer, topic: str) -> set[int]:
    return set(producer.mute_manager.muted_partitions().get(topic, []))


def _warm(producer: MuteProducer, topic: str, ledger: Ledger, n: int = 60) -> None:
    """Send a few messages to every partition so metadata, connections and windows are established."""
    for i in range(n):
        producer.produce(topic, value=f"w{i}|warm".encode(), partition=i % 6, on_delivery=ledger.callback)
    assert producer.flush(30) == 0
    assert wait_for(lambda: producer.mute_manager.snapshot(topic) is not None, 15, step=lambda: producer.poll(0.1))


class TestStalledBroker:
    def test_stalled_partitions_muted_and_healthy_ones_keep_receiving(
        self, kafka_cluster: LocalCluster, topic_factory
    ) -> None:
        """With broker 2 stopped, its partitions are muted and new messages are delivered to the others."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}), policy=_policy())
        _warm(producer, topic, ledger)
        with kafka_cluster.stalled(2), BackgroundLoad(producer, topic, ledger, rate=400) as load:
            assert wait_for(lambda: _muted(producer, topic) >= ON_BROKER_2, 30, step=lambda: producer.poll(0.1))
            mark = len(load.sent)
            assert wait_for(lambda: len(load.sent) >= mark + 400, 30, step=lambda: producer.poll(0.1))
            after = load.sent[mark : mark + 400]
            assert wait_for(lambda: all(m in ledger.delivered for m in after), 30, step=lambda: producer.poll(0.1)), (
                "messages sent after the mute must be delivered while broker 2 is still stopped"
            )
            assert {ledger.delivered[m] for m in after}.isdisjoint(ON_BROKER_2)
            load.stop()
            assert load.buffer_errors == 0
        assert producer.flush(60) == 0
        # every accepted message got exactly one final report, none failed, all are in Kafka
        assert ledger.reports == len(load.sent) + 60
        assert ledger.failed == {}
        records = consume_all(kafka_cluster.bootstrap_servers, topic, len(ledger.delivered))
        assert {m.value().decode().split("|", 1)[0] for m in records} == set(ledger.delivered)
        events = [e for e in producer.mute_manager.events if e.kind == "mute" and e.topic == topic]
        assert {e.partition for e in events} >= ON_BROKER_2
        assert all(e.broker == 2 for e in events if e.partition in ON_BROKER_2)
        producer.close()

    def test_limping_broker_is_detected_by_slow_calls(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """A broker stopped 80% of every second is muted for slow calls, not failures (broker rule off here)."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        policy = _policy(broker={"enabled": False})
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}), policy=policy)
        _warm(producer, topic, ledger)
        with (
            kafka_cluster.limping(2, duty=0.8, period_s=1.0, max_duration_s=60),
            BackgroundLoad(producer, topic, ledger, rate=300),
        ):
            assert wait_for(lambda: _muted(producer, topic) & ON_BROKER_2, 40, step=lambda: producer.poll(0.1))
        mutes = [e for e in producer.mute_manager.events if e.kind == "mute" and e.partition in ON_BROKER_2]
        assert mutes and mutes[0].reason == "slow_call"
        assert producer.flush(60) == 0
        assert ledger.failed == {}
        producer.close()


    def test_default_policy_mutes_a_limping_broker(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """No policy at all: a broker stopped 80% of every second (never 1 s, the default slow threshold) is muted
        by a relative rule -- the partitions' outlier rule (its third stop) or the broker's rtt rule (two
        statistics emissions), whichever sees it first -- and no partition of a healthy broker is muted."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}))
        _warm(producer, topic, ledger)
        with (
            kafka_cluster.limping(2, duty=0.8, period_s=1.0, max_duration_s=60),
            BackgroundLoad(producer, topic, ledger, rate=600),
        ):
            assert wait_for(lambda: _muted(producer, topic) >= ON_BROKER_2, 30, step=lambda: producer.poll(0.1))
        mutes = [e for e in producer.mute_manager.events if e.kind in ("mute", "remute")]
        first = mutes[0]
        relative = first.detail.get("rule") == "outlier" or "latency" in str(first.detail.get("cause", ""))
        assert first.partition in ON_BROKER_2 and relative, first
        assert {e.partition for e in mutes} <= ON_BROKER_2, mutes
        assert producer.counters.avoids >= 1  # the first stop was steered around, the mute came after
        assert producer.flush(60) == 0
        assert ledger.failed == {}
        producer.close()

    def test_a_limping_broker_stays_muted_through_its_probe_rounds(
        self, kafka_cluster: LocalCluster, topic_factory
    ) -> None:
        """No policy: while broker 2 limps, each probe round fails and re-mutes its partitions, and none is
        unmuted in between (no flapping: mute, unmute, re-mute); nothing sent meanwhile fails."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}))
        _warm(producer, topic, ledger)

        def events() -> list[Any]:
            return [e for e in producer.mute_manager.events if e.topic == topic and e.partition in ON_BROKER_2]

        def two_failed_rounds() -> bool:
            remutes = [e.partition for e in events() if e.kind == "remute"]
            return all(remutes.count(p) >= 2 for p in ON_BROKER_2)

        with (
            kafka_cluster.limping(2, duty=0.8, period_s=1.0, max_duration_s=90),
            BackgroundLoad(producer, topic, ledger, rate=600),
        ):
            assert wait_for(lambda: _muted(producer, topic) >= ON_BROKER_2, 30, step=lambda: producer.poll(0.1))
            # the default retry interval (5 s) and its backoff put the second round ~15 s after the mute
            assert wait_for(two_failed_rounds, 45, step=lambda: producer.poll(0.1)), events()
            during = events()
        assert [e for e in during if e.kind == "unmute"] == [], during
        assert {e.kind for e in during} >= {"mute", "probe", "remute"}
        assert producer.flush(60) == 0
        assert ledger.failed == {}
        producer.close()

    def test_a_single_stop_is_steered_around_not_muted(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """One short stop of broker 2 (what a healthy broker's GC pause looks like): unkeyed messages avoid its
        partitions until it answers again, and nothing is muted (the outlier rule mutes on a second stop)."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        # the absolute slow rule out of the way (5 s): this is about the outlier rule's first step only
        producer = MuteProducer(
            kafka_cluster.client_config(**{"linger.ms": 5}), policy=_policy(slow_call={"threshold_ms": 5000})
        )
        _warm(producer, topic, ledger)
        with BackgroundLoad(producer, topic, ledger, rate=600):
            with kafka_cluster.stalled(2):  # stopped until its partitions are avoided, then resumed
                assert wait_for(lambda: producer.counters.avoids >= 1, 30, step=lambda: producer.poll(0.05))
                snap = producer.mute_manager.snapshot(topic)
                assert snap is not None and set(snap.avoided) <= ON_BROKER_2 and snap.muted == frozenset()
            assert wait_for(
                lambda: not producer.mute_manager.state().get("avoided"), 30, step=lambda: producer.poll(0.05)
            )
        assert [e for e in producer.mute_manager.events if e.kind in ("mute", "remute")] == []
        assert producer.flush(60) == 0
        assert ledger.failed == {}
        producer.close()


class TestRotation:
    def test_brokers_stalled_in_turn_are_each_muted_alone(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """Brokers 1, 3, then 2 stalled in turn (RF 1, acks=1) while the others answer: each stall is a real fault
        and its partitions alone are muted, then unmuted once it ends. (A cluster slow everywhere in turns, where
        the other partitions wait as long, mutes nothing: the overloaded trace of tests/unit/trace.)"""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        # a short retry interval: each broker is unmuted once it answers again, before the next one stalls
        policy = _policy(breaker={"retry_interval_ms": 500})
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}), policy=policy)
        _warm(producer, topic, ledger)
        with BackgroundLoad(producer, topic, ledger, rate=400) as load:
            for broker, led in ((1, {0, 3}), (3, {2, 5}), (2, ON_BROKER_2)):
                with kafka_cluster.stalled(broker):
                    assert wait_for(lambda led=led: _muted(producer, topic) >= led, 30, step=lambda: producer.poll(0.1))
                    assert _muted(producer, topic) <= led  # no partition of an answering broker
                assert wait_for(lambda: not _muted(producer, topic), 30, step=lambda: producer.poll(0.1))
            load.stop()
        assert producer.flush(60) == 0
        assert ledger.failed == {} and ledger.reports == len(load.sent) + 60
        producer.close()


class TestRescueDelay:
    @pytest.mark.parametrize("after_ms", [0, 60_000], ids=["rescue-at-the-mute", "rescue-after-60s"])
    def test_a_pause_that_ends_before_rescue_after_ms_costs_no_purge(
        self, kafka_cluster: LocalCluster, topic_factory, after_ms: int
    ) -> None:
        """Broker 2 stopped until its partitions are muted, then resumed: with rescue.after_ms 60 s its queue drains
        by itself and nothing is purged; the same pause with 0 is purged (the control: this test can fail)."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        # one request in flight per broker: what broker 2 did not take stays in librdkafka's queue, where a purge
        # (in_queue) reaches it -- with many in flight the control could find nothing to purge
        conf = kafka_cluster.client_config(**{"linger.ms": 5, "max.in.flight.requests.per.connection": 1})
        producer = MuteProducer(conf, policy=_policy(rescue={"after_ms": after_ms}))
        _warm(producer, topic, ledger)
        with BackgroundLoad(producer, topic, ledger, rate=400) as load:
            with kafka_cluster.stalled(2):
                # 3 MB for partition 1, more than one request to broker 2 takes (batch.size 1 MB): whatever the
                # unkeyed load happened to send there before it steered away, messages wait in librdkafka's queue
                # behind the request in flight, so the control always has something to purge
                pad = bytes(1000)
                for i in range(QUEUED):
                    producer.produce(topic, value=f"q{i}|".encode() + pad, partition=1, on_delivery=ledger.callback)
                assert wait_for(lambda: _muted(producer, topic) >= ON_BROKER_2, 30, step=lambda: producer.poll(0.1))
            mark = len(load.sent)
            assert wait_for(lambda: len(load.sent) >= mark + 200, 30, step=lambda: producer.poll(0.1))
            load.stop()
        assert producer.flush(60) == 0
        assert ledger.failed == {} and ledger.reports == len(load.sent) + 60 + QUEUED
        if after_ms:
            assert producer.counters.rescued == 0 and producer.counters.requeued == 0
        else:
            # purged: the explicit messages go back to partition 1 (requeued, never moved), unkeyed ones stuck
            # there, if the load had sent any before it steered away, move (rescued); CI once saw 0 of the latter
            assert producer.counters.rescued + producer.counters.requeued > 0
        producer.close()


    # 20, not the default 90: how much of the queue the stall's messages fill depends on how soon unkeyed messages
    # are steered away from broker 2 (one of its two partitions sometimes held nothing, and the other 37-47 %
    # while the loop kept the rest full: 3 failures in 20 runs at 90 on a slow machine). A partition muted for
    # congestion holds >= 25 % when muted. The 90 % default itself is pinned by tests/unit/producer/test_rescue.py.
    @pytest.mark.parametrize("blocked_share_pct", [20, None], ids=["blocked-rescues-at-once", "always-wait"])
    def test_a_writer_blocked_by_a_stall_gets_its_rescue_before_after_ms(
        self, kafka_cluster: LocalCluster, topic_factory, blocked_share_pct: int | None
    ) -> None:
        """A closed loop fills a small queue while broker 2 is stopped: with rescue.after_ms 60 s, the stuck
        messages are still taken back and re-sent elsewhere during the stall, because produce() keeps meeting a
        full queue they fill at least rescue.blocked_share_pct of. With it null nothing is purged (the control).
        Nothing is lost either way."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        # A small queue the loop fills in moments, and one request in flight per broker: broker 2's messages wait
        # in librdkafka's queue, where a purge (in_queue) takes them back, not in a request already sent.
        # 2,000, not more: the mutes stop new messages going to broker 2, so the queue must fill before them. On a
        # loaded machine (CI, pure path) 2,746 messages were stuck when both of broker 2's partitions were muted,
        # which never filled a 5,000-message queue: the writer was never blocked and the premise failed.
        conf = kafka_cluster.client_config(
            **{"linger.ms": 5, "queue.buffering.max.messages": 2_000, "max.in.flight.requests.per.connection": 1}
        )
        rescue = {"after_ms": 60_000, "blocked_share_pct": blocked_share_pct}
        pad = bytes(1000)
        # The steering (the age-outlier rule's avoid) off: with it, unkeyed messages sometimes left broker 2 so soon
        # that too few were stuck there to fill the queue, the writer never blocked and the premise never held (CI:
        # 1,387,360 sent in 30 s, 1 avoid, 2 mutes, 0 BufferErrors). Without it they keep going there until the
        # slow-call rule mutes (500 ms), which fills the 2,000-message queue: the case this test is about.
        producer = MuteProducer(conf, policy=_policy(rescue=rescue, slow_call={"outlier_factor": 1}))
        _warm(producer, topic, ledger)
        sent = refused = 0
        with kafka_cluster.stalled(2):
            deadline = time.monotonic() + 30
            muted_at: float | None = None
            # bounded by the 30 s deadline; the count bound is generous: a loop that steers around broker 2 at once
            # (an avoid) can send 200,000 messages before the stall rule mutes (CI once: 200,060 sent, no mute yet)
            while time.monotonic() < deadline and sent < 2_000_000:
                try:
                    producer.produce(topic, value=f"c{sent}|".encode() + pad, on_delivery=ledger.callback)
                    sent += 1
                except BufferError:
                    refused += 1
                    producer.poll(0.01)
                if sent % 100 == 0:
                    producer.poll(0)
                if muted_at is None and _muted(producer, topic) & ON_BROKER_2:
                    muted_at = time.monotonic()
                if producer.counters.rescued:
                    break
                if muted_at is not None and blocked_share_pct is None and time.monotonic() > muted_at + 5:
                    break  # the control: five seconds of a blocked writer after the mutes, and no rescue
            rescued_during_stall = producer.counters.rescued
        assert muted_at is not None and refused > 0, f"no mute or never blocked: {producer.counters.as_dict()}"
        assert producer.flush(60) == 0
        assert ledger.failed == {} and len(ledger.delivered) == sent + 60
        if blocked_share_pct is None:
            assert rescued_during_stall == 0
        else:
            assert rescued_during_stall > 0
        producer.close()


class TestKilledBroker:
    def test_unmute_after_leadership_moves(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """RF=3: the killed leader's partitions are muted, then unmuted when leadership moves to a live broker."""
        topic = topic_factory(replica_assignment=[[2, 1, 3], [1, 2, 3], [3, 1, 2], [2, 3, 1], [1, 3, 2], [3, 2, 1]])
        led_by_2 = {0, 3}
        ledger = Ledger()
        conf = kafka_cluster.client_config(**{"linger.ms": 5, "acks": "1", "topic.metadata.refresh.interval.ms": 2000})
        producer = MuteProducer(
            conf, policy=_policy(breaker={"retry_interval_ms": 120_000, "max_retry_interval_ms": 120_000})
        )
        _warm(producer, topic, ledger)
        with kafka_cluster.killed(2), BackgroundLoad(producer, topic, ledger, rate=200):
            assert wait_for(lambda: _muted(producer, topic) >= led_by_2, 30, step=lambda: producer.poll(0.1))

            def unmuted_by_leader_move() -> bool:
                moved = {
                    e.partition
                    for e in producer.mute_manager.events
                    if e.kind == "unmute" and e.topic == topic and e.reason.startswith("leader_moved")
                }
                return moved >= led_by_2

            assert wait_for(unmuted_by_leader_move, 60, step=lambda: producer.poll(0.1))
            assert not (_muted(producer, topic) & led_by_2)
            assert {producer.mute_manager.leader(topic, p) for p in led_by_2} <= {1, 3}
        assert producer.flush(60) == 0
        assert ledger.failed == {}
        producer.close()


class TestKeyedPolicies:
    def test_hold_preserves_per_key_order_across_a_stall(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """keyed_policy=hold: every key's sequence numbers are consumed complete and in order after a stall."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        policy = _policy(keyed_policy="hold", breaker={"retry_interval_ms": 1000, "half_open_probes": 2})
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}), policy=policy)
        _warm(producer, topic, ledger)
        keys = [f"key-{i}".encode() for i in range(40)]
        with BackgroundLoad(producer, topic, ledger, rate=300, keys=keys, max_s=60) as load:
            with kafka_cluster.stalled(2):
                assert wait_for(lambda: _muted(producer, topic) >= ON_BROKER_2, 30, step=lambda: producer.poll(0.1))
                assert wait_for(lambda: producer.held(topic) > 50, 30, step=lambda: producer.poll(0.1))
            assert wait_for(lambda: not _muted(producer, topic), 60, step=lambda: producer.poll(0.1))
            load.stop()
        assert producer.flush(60) == 0
        assert ledger.failed == {}
        assert producer.counters.released > 0
        records = consume_all(kafka_cluster.bootstrap_servers, topic, len(ledger.delivered))
        seen: dict[str, list[int]] = defaultdict(list)
        for msg in records:
            parts = msg.value().decode().split("|")
            if len(parts) == 3:
                seen[parts[1]].append(int(parts[2]))
        assert seen, "keyed messages were consumed"
        for key, seqs in seen.items():
            assert seqs == list(range(load.sequence[key.encode()])), f"{key}: order or completeness broken"
        producer.close()

    def test_reroute_moves_only_the_muted_partitions_keys(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """keyed_policy=reroute: keys homed on muted partitions move (always to the same place); others stay."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}), policy=_policy(keyed_policy="reroute"))
        _warm(producer, topic, ledger)
        home = key_partitioner("consistent_random")
        keys = [f"user-{i}".encode() for i in range(60)]
        producer.mute_manager.mute(topic, 1)
        producer.mute_manager.mute(topic, 4)
        placed: dict[bytes, set[int]] = defaultdict(set)

        def record(err: KafkaError | None, msg: Any) -> None:
            assert err is None
            placed[msg.key()].add(msg.partition())

        for _ in range(3):
            for key in keys:
                producer.produce(topic, value=b"v", key=key, on_delivery=record)
        assert producer.flush(30) == 0
        for key in keys:
            expected_home = home(key, 6)
            assert len(placed[key]) == 1, f"{key!r} must always go to the same partition"
            (got,) = placed[key]
            if expected_home in ON_BROKER_2:
                assert got not in ON_BROKER_2
            else:
                assert got == expected_home
        moved = [k for k in keys if home(k, 6) in ON_BROKER_2]
        assert moved and producer.counters.rerouted == 3 * len(moved)
        # after unmute every key goes home again
        producer.mute_manager.unmute(topic, 1)
        producer.mute_manager.unmute(topic, 4)
        placed.clear()
        for key in keys:
            producer.produce(topic, value=b"v", key=key, on_delivery=record)
        assert producer.flush(30) == 0
        assert all(placed[k] == {home(k, 6)} for k in keys)
        producer.close()

    def test_keyed_only_traffic_unmutes_after_a_stall(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """Default policy (reroute), keyed messages only: partitions muted by a stall come back once it ends
        (keyed messages carry the probes; there is no unkeyed traffic to do it) and their keys go home again."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}))
        _warm(producer, topic, ledger)
        keys = [f"user-{i}".encode() for i in range(60)]
        with BackgroundLoad(producer, topic, ledger, rate=400, keys=keys, max_s=120) as load:
            with kafka_cluster.stalled(2):
                assert wait_for(lambda: _muted(producer, topic) & ON_BROKER_2, 30), "the stall was never seen"
            assert wait_for(lambda: not _muted(producer, topic), 90), producer.mute_manager.state()
            sent_before = len(load.sent)
            assert wait_for(lambda: len(load.sent) > sent_before + 200, 30)
            load.stop()
        assert producer.flush(60) == 0 and ledger.failed == {}
        assert producer.counters.as_dict()["probes"] > 0
        home = key_partitioner("consistent_random")
        records = consume_all(kafka_cluster.bootstrap_servers, topic, len(load.sent) + 60)
        # sent after the unmute (values are "m<n>|key|seq"): every key on its home partition again
        late = [m for m in records if m.key() is not None and int(m.value().split(b"|")[0][1:]) >= sent_before]
        assert late and all(m.partition() == home(m.key(), 6) for m in late)
        producer.close()

    def test_fail_reports_at_once(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """keyed_policy=fail: a keyed message for a muted partition gets a muted error on the next poll."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        producer = MuteProducer(kafka_cluster.client_config(), policy=_policy(keyed_policy="fail"))
        _warm(producer, topic, ledger)
        key = next(
            f"k{i}".encode() for i in range(1000) if key_partitioner("consistent_random")(f"k{i}".encode(), 6) == 4
        )
        with kafka_cluster.stalled(2):
            producer.mute_manager.mute(topic, 4)
            got: list[KafkaError] = []
            producer.produce(topic, value=b"v", key=key, on_delivery=lambda err, msg: got.append(err))
            assert producer.poll(5) == 1  # reported at once although broker 2 answers nothing
        assert got and got[0].code() == KafkaError._STATE and "muted" in got[0].str()
        assert producer.counters.muted_fail == 1
        assert producer.flush(30) == 0
        producer.close()


class TestDropIn:
    @pytest.mark.parametrize("partitioner", ["consistent_random", "murmur2_random", "consistent", "murmur2", "fnv1a"])
    def test_keyed_partitions_equal_plain_librdkafka(
        self, kafka_cluster: LocalCluster, topic_factory, partitioner: str
    ) -> None:
        """For each partitioner setting, MuteProducer puts every key where plain librdkafka does."""
        topic = topic_factory(partitions=7, replication_factor=1)
        conf = kafka_cluster.client_config(partitioner=partitioner)
        keys = [f"key-{i}".encode() for i in range(300)] + [b""]
        plain_at: dict[bytes, int] = {}
        mute_at: dict[bytes, int] = {}
        plain = Producer(conf)
        for k in keys:
            plain.produce(
                topic, value=b"p", key=k, on_delivery=lambda e, m: plain_at.__setitem__(m.key(), m.partition())
            )
        assert plain.flush(30) == 0
        producer = MuteProducer(conf)
        producer.produce(topic, value=b"warm", partition=0)
        assert producer.flush(30) == 0
        assert wait_for(lambda: producer.mute_manager.snapshot(topic) is not None, 15, step=lambda: producer.poll(0.1))
        for k in keys:
            producer.produce(
                topic, value=b"m", key=k, on_delivery=lambda e, m: mute_at.__setitem__(m.key(), m.partition())
            )
        assert producer.flush(30) == 0
        deterministic = [k for k in keys if key_partitioner(partitioner)(k, 7) is not None]
        assert len(deterministic) >= 300
        assert {k: mute_at[k] for k in deterministic} == {k: plain_at[k] for k in deterministic}
        producer.close()

    def test_same_api_and_same_exceptions(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """produce/poll/flush/len/list_topics/purge behave like confluent_kafka.Producer, errors included."""
        topic = topic_factory(partitions=3, replication_factor=1)
        conf = kafka_cluster.client_config()
        original = dict(conf)
        with pytest.raises(KafkaException) as plain_err:
            Producer({**conf, "no.such.setting": 1})
        with pytest.raises(KafkaException) as mute_err:
            MuteProducer({**conf, "no.such.setting": 1})
        assert mute_err.value.args[0].code() == plain_err.value.args[0].code()
        with MuteProducer(conf) as producer:
            assert conf == original, "the caller's config dict is never modified"
            with pytest.raises(TypeError):
                producer.produce(123, value=b"x")  # type: ignore[arg-type]
            ledger = Ledger()
            producer.produce(topic, b"0|a", partition=2, on_delivery=ledger.callback)
            producer.produce(
                topic,
                value=b"1|b",
                key=b"k",
                headers=[("h", b"v")],
                timestamp=1_700_000_000_000,
                callback=ledger.callback,
            )
            assert (
                producer.produce_batch(
                    topic, [{"value": b"2|c"}, {"value": b"3|d", "key": b"z"}], on_delivery=ledger.callback
                )
                == 2
            )
            assert len(producer) >= 1
            assert producer.flush(30) == 0 and len(producer) == 0
            assert ledger.delivered["0"] == 2 and len(ledger.delivered) == 4
            assert ledger.callback_threads == {threading.get_ident()}, "callbacks run on the polling thread"
            assert topic in producer.list_topics(topic, timeout=10).topics
            producer.purge()
            assert producer.poll(0) == 0

    def test_healthy_traffic_takes_the_c_path(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """Healthy keyed and unkeyed traffic is produced and reported in C and callbacks run straight from the
        application's poll: every message is reported once, on the application's thread."""
        topic = topic_factory(partitions=6, replication_factor=1)
        ledger = Ledger()
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}))
        _warm(producer, topic, ledger)
        # once more now that the topic is tracked: each partition's first deliveries (everything sent before
        # them) are judged by the Python path, so the loop below starts on warm partitions
        _warm(producer, topic, ledger)
        fast = producer._fast
        assert producer.produce == fast.produce
        before = fast.fallbacks
        for i in range(3000):
            producer.produce(topic, f"{i}|".encode(), None if i % 2 else f"k{i % 50}", on_delivery=ledger.callback)
            if i % 100 == 99:
                producer.poll(0)
        assert producer.flush(30) == 0
        assert ledger.reports == 3120 and len(ledger.delivered) == 3060  # 2 x 60 warm-up (same ids) + 3000
        assert ledger.callback_threads == {threading.get_ident()}  # only ever on the application thread
        assert producer.metrics()["counters"]["delivered"] == 3120
        # (a produce() that finds the driver thread holding the producer lock takes the Python path once)
        assert fast.fallbacks - before < 3000 // 2
        assert fast.direct_reports > 0
        producer.close()

    @pytest.mark.parametrize("client", ["plain", "mute"])
    def test_reports_waiting_for_poll_count_against_the_queue(
        self, kafka_cluster: LocalCluster, topic_factory, client: str
    ) -> None:
        """A producer that polls only when produce() raises BufferError (confluent-kafka's documented pattern),
        paced at 500 messages per 20 ms, queue.buffering.max.messages 5,000, a healthy cluster (RF 1, acks=all):
        the brokers answer between bursts, so what fills the queue is reports waiting for poll(). With either
        client the messages not yet handed to their callbacks never pass 5,000 plus one burst, and BufferError
        comes. Before MuteProducer counted the reports it serves early into its callback queue, len() reached
        15,000 here (every message of the run) and no BufferError came."""
        topic = topic_factory(partitions=6, replication_factor=1)
        conf = kafka_cluster.client_config(**{"queue.buffering.max.messages": 5000, "linger.ms": 5})
        producer: Any = Producer(conf) if client == "plain" else MuteProducer(conf)
        reported = [0]

        def count(err: Any, msg: Any) -> None:
            reported[0] += 1

        producer.produce(topic, b"warm", on_delivery=count)
        assert producer.flush(30) == 0
        most = buffer_errors = 0
        accepted = 1
        for _ in range(30):
            for _ in range(500):
                try:
                    producer.produce(topic, b"x" * 100, on_delivery=count)
                    accepted += 1
                except BufferError as e:
                    assert str(e) == "Local: Queue full"
                    buffer_errors += 1
                    producer.poll(0.001)
            most = max(most, len(producer))
            time.sleep(0.02)  # the application's pace, not a wait for anything
        assert producer.flush(30) == 0 and reported[0] == accepted
        assert buffer_errors > 0, "the queue never filled: the loop never had to poll"
        assert most <= 5000 + 500, most
        if client == "mute":
            producer.close()

    def test_stats_and_error_callbacks_still_reach_the_application(self, kafka_cluster: LocalCluster) -> None:
        """The user's stats_cb is served from poll() with librdkafka's JSON, as with the plain client."""
        seen: list[str] = []
        producer = MuteProducer(kafka_cluster.client_config(**{"statistics.interval.ms": 200, "stats_cb": seen.append}))
        assert wait_for(lambda: bool(seen), 15, step=lambda: producer.poll(0.1))
        assert seen[0].startswith("{") and '"brokers"' in seen[0]
        producer.close()


class TestPolicyFromYaml:
    def test_yaml_threshold_decides_whether_a_stall_mutes(
        self, kafka_cluster: LocalCluster, topic_factory, tmp_path
    ) -> None:
        """slow_call.threshold_ms from YAML drives muting: 300 ms mutes during a stall, 120 s does not (the
        relative rule, which would see the stall without any threshold, turned off in both)."""
        topic = topic_factory(replica_assignment=RF1)
        for threshold in (300, 120_000):
            path = tmp_path / f"policy-{threshold}.yaml"
            path.write_text(
                "client:\n  bootstrap.servers: ${BOOT}\n  linger.ms: 5\n"
                f"defaults:\n  slow_call:\n    threshold_ms: {threshold}\n    outlier_factor: 1\n"
                "  congestion:\n    enabled: false\n  breaker:\n    retry_interval_ms: 60000\n"
            )
        import os

        os.environ["BOOT"] = kafka_cluster.bootstrap_servers
        fast = MuteProducer.from_policy(tmp_path / "policy-300.yaml")
        slow = MuteProducer.from_policy(tmp_path / "policy-120000.yaml")
        fast_ledger, slow_ledger = Ledger(), Ledger()
        _warm(fast, topic, fast_ledger)
        _warm(slow, topic, slow_ledger)
        with (
            kafka_cluster.stalled(2),
            BackgroundLoad(fast, topic, fast_ledger, rate=200),
            BackgroundLoad(slow, topic, slow_ledger, rate=200),
        ):
            assert wait_for(
                lambda: _muted(fast, topic) >= ON_BROKER_2, 30, step=lambda: fast.poll(0.05) + slow.poll(0.05)
            )
            slow_muted = _muted(slow, topic)
        mute = next(e for e in fast.mute_manager.events if e.kind == "mute" and e.partition in ON_BROKER_2)
        assert mute.detail["threshold_s"] == 0.3
        assert slow_muted == set()
        assert fast.flush(60) == 0 and slow.flush(60) == 0
        fast.close()
        slow.close()


class TestThreadsAndDriver:
    def test_many_threads_produce_and_every_message_is_reported_once(
        self, kafka_cluster: LocalCluster, topic_factory
    ) -> None:
        """Four threads producing 2,500 messages each: 10,000 reports, 10,000 distinct records in Kafka."""
        topic = topic_factory(partitions=6, replication_factor=3)
        ledger = Ledger()
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}))

        def work(t: int) -> None:
            for i in range(2500):
                while True:
                    try:
                        key = None if i % 3 else f"k{i % 17}".encode()
                        producer.produce(topic, value=f"t{t}-{i}|".encode(), key=key, on_delivery=ledger.callback)
                        break
                    except BufferError:
                        time.sleep(0.001)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        assert producer.flush(60) == 0
        assert ledger.reports == 10_000 and len(ledger.delivered) == 10_000
        records = consume_all(kafka_cluster.bootstrap_servers, topic, 10_000)
        assert len(records) == 10_000
        producer.close()

    def test_muting_does_not_wait_for_the_application_to_poll(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """The driver thread mutes a stalled broker's partitions while the application never calls poll()."""
        topic = topic_factory(replica_assignment=RF1)
        ledger = Ledger()
        producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 5}), policy=_policy())
        _warm(producer, topic, ledger)
        served_before = ledger.reports
        with kafka_cluster.stalled(2):
            for i in range(600):
                producer.produce(topic, value=f"n{i}|".encode(), partition=i % 6, on_delivery=ledger.callback)
            # no poll() here: only wait for the driver's decision
            assert wait_for(lambda: _muted(producer, topic) >= ON_BROKER_2, 30)
            assert ledger.reports == served_before, "no callback ran: the application did not poll"
        assert producer.flush(60) == 0
        assert ledger.reports == served_before + 600
        producer.close()

    def test_error_cb_reaches_the_application(self) -> None:
        """With no broker listening, the user's error_cb is called from poll() like with the plain client."""
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]  # closed again: nothing listens there
        errors: list[KafkaError] = []
        producer = MuteProducer({"bootstrap.servers": f"127.0.0.1:{port}", "error_cb": errors.append})
        assert wait_for(lambda: bool(errors), 30, step=lambda: producer.poll(0.2))
        assert errors[0].code() in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN)
        producer.close(timeout=0)


class TestVisibility:
    def test_prometheus_endpoint_serves_the_counters(self, kafka_cluster: LocalCluster, topic_factory) -> None:
        """metrics.prometheus_port in the policy serves mutepro_* counters and per-partition gauges."""
        import socket
        import urllib.request

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        topic = topic_factory(partitions=3, replication_factor=1)
        producer = MuteProducer(
            kafka_cluster.client_config(), policy={"metrics": {"prometheus_port": port, "namespace": "mtest"}}
        )
        for i in range(50):
            producer.produce(topic, value=f"{i}".encode(), partition=i % 3)
        assert producer.flush(30) == 0
        assert wait_for(lambda: producer.mute_manager.snapshot(topic) is not None, 15, step=lambda: producer.poll(0.1))
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
        produced = [line for line in body.splitlines() if line.startswith("mtest_produced_total{")]
        assert produced and float(produced[0].rsplit(" ", 1)[1]) == 50.0
        assert (
            f'mtest_partition_muted{{partition="0",producer="{producer.name}",state="closed",topic="{topic}"}}' in body
        )
        producer.close()


class TestSharedState:
    def test_a_mute_in_another_process_is_adopted_through_redis(
        self, kafka_cluster: LocalCluster, topic_factory, redis_url: str
    ) -> None:
        """A partition muted by a producer in a separate Python process is muted here too (Redis state backend)."""
        import json
        import subprocess
        import sys

        topic = topic_factory(partitions=6, replication_factor=3)
        policy = {"state": {"backend": "redis", "url": redis_url, "key_prefix": f"t-{topic}"}}
        here = MuteProducer(kafka_cluster.client_config(), policy=policy)
        ledger = Ledger()
        _warm(here, topic, ledger)
        script = f"""
import json, time
from mutepro import MuteProducer
policy = json.loads({json.dumps(json.dumps(policy))})
p = MuteProducer({{"bootstrap.servers": {kafka_cluster.bootstrap_servers!r}}}, policy=policy)
p.produce({topic!r}, value=b"other", partition=0)
p.flush(30)
deadline = time.monotonic() + 30
while p.mute_manager.snapshot({topic!r}) is None and time.monotonic() < deadline:
    p.poll(0.1)
p.mute_manager.mute({topic!r}, 3, reason="maintenance on broker disk")
p.close()
print("muted")
"""
        out = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and "muted" in out.stdout, out.stderr[-2000:]
        assert wait_for(lambda: 3 in _muted(here, topic), 30, step=lambda: here.poll(0.1))
        placed: set[int] = set()
        for _ in range(200):
            here.produce(topic, value=b"u", on_delivery=lambda e, m: placed.add(m.partition()))
        assert here.flush(30) == 0
        assert 3 not in placed
        here.close()


class OnceDetector:
    """A custom detector (plug-in Protocol): mutes its partition on the first check, then never again."""

    name = "chaos_drill"

    def __init__(self) -> None:
        self.fired = False

    def record(self, delivery: Any) -> None:
        """Nothing to remember."""

    def check(self, load: Any, now: float) -> Any:
        from mutepro.detect.model import Verdict

        if self.fired:
            return None
        self.fired = True
        return Verdict("chaos_drill", {"drill": 1})

    def reset(self) -> None:
        """Keep `fired`: one drill per partition."""


class TestPluginsAndRecovery:
    def test_custom_detector_mutes_everything_and_probes_recover_it(
        self, kafka_cluster: LocalCluster, topic_factory
    ) -> None:
        """A custom detector mutes all partitions; with nothing writable, probes still close every breaker."""
        topic = topic_factory(partitions=6, replication_factor=3)
        ledger = Ledger()
        policy = _policy(breaker={"retry_interval_ms": 1000, "half_open_probes": 2})
        producer = MuteProducer(
            kafka_cluster.client_config(**{"linger.ms": 5}),
            policy=policy,
            detector_factory=lambda t, p: [OnceDetector()],
        )
        _warm(producer, topic, ledger, n=30)
        assert wait_for(lambda: _muted(producer, topic) == set(range(6)), 15, step=lambda: producer.poll(0.05))
        with BackgroundLoad(producer, topic, ledger, rate=200, max_s=40):
            assert wait_for(lambda: not _muted(producer, topic), 30, step=lambda: producer.poll(0.1))
        reasons = {e.reason for e in producer.mute_manager.events if e.kind == "mute"}
        assert reasons == {"chaos_drill"}
        assert producer.mute_manager.outstanding(topic, 0) == producer.outstanding(topic, 0)
        assert producer.mute_manager.accumulated(topic, 0) >= 0 and producer.mute_manager.in_flight(topic, 0) >= 0
        assert producer.counters.probes >= 12 and producer.counters.unmutes >= 6
        assert producer.flush(30) == 0 and ledger.failed == {}
        producer.close()
