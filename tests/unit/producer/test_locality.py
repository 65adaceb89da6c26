"""Rack-aware partitioning through MuteProducer (KIP-1123), on the fake librdkafka producer: unkeyed messages stay
in the producer's rack while it has a writable leader, fall back to every writable partition when it has none, and
keyed messages and explicit partitions are never affected; its settings and its local/remote figure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from mutepro import MuteProducer
from mutepro.errors import ConfigError
from mutepro.producer.locality import AdminRackSource, LocalityMeter
from mutepro.testing.fakes import FakeClock, FakeInnerProducer
from tests.unit._producer_fakes import topic_policy

TOPIC = "clicks"
LEADERS = {p: p % 3 + 1 for p in range(12)}  # brokers 1, 2, 3 in turn
RACKS = {1: "rack-a", 2: "rack-b", 3: "rack-c"}
LOCAL = {0, 3, 6, 9}  # led by broker 1, in rack-a
# every unkeyed message draws anew (no stickiness), so the sets below are exact rather than one sticky pick
CONF = {"bootstrap.servers": "127.0.0.1:1", "sticky.partitioning.linger.ms": 0}


class FakeRacks:
    def __init__(self, racks: Mapping[int, str] | None) -> None:
        self.racks = racks
        self.asked = 0
        self.closed = False

    def broker_racks(self) -> Mapping[int, str] | None:
        self.asked += 1
        return self.racks

    def close(self) -> None:
        self.closed = True


def build(
    conf: dict[str, Any] | None = None, racks: Mapping[int, str] | None = RACKS, **policy: Any
) -> tuple[MuteProducer, FakeInnerProducer, FakeClock]:
    clock = FakeClock()
    fake = FakeInnerProducer({TOPIC: 12}, leader=LEADERS)
    producer = MuteProducer(
        {**CONF, "client.rack": "rack-a", "partitioner.rack.aware": True, **(conf or {})},
        policy=topic_policy(**policy), clock=clock, _inner_factory=fake.factory,
        _threads=False, _rack_source=FakeRacks(racks),
    )
    producer.wait_for_topic(TOPIC, 0)
    producer._load_metadata(clock())
    assert producer.wait_for_topic(TOPIC, 0)
    return producer, fake, clock


def done(*pairs: tuple[MuteProducer, FakeInnerProducer]) -> None:
    for producer, fake in pairs:
        fake.deliver()
        assert producer.close(1) is True


def partitions_of(fake: FakeInnerProducer, since: int = 0) -> Counter[int]:
    return Counter(s.partition for s in fake.sent[since:])


class TestRouting:
    def test_unkeyed_messages_stay_in_the_producers_rack(self) -> None:
        producer, fake, _ = build()
        for _ in range(400):
            producer.produce(TOPIC, b"v" * 100)
        assert set(partitions_of(fake)) == LOCAL
        done((producer, fake))

    def test_muted_local_leaders_send_traffic_to_the_other_racks_and_back(self) -> None:
        producer, fake, _ = build()
        for p in LOCAL:
            producer.mute_manager.mute(TOPIC, p)
        for _ in range(400):
            producer.produce(TOPIC, b"v")
        assert set(partitions_of(fake)) == set(range(12)) - LOCAL
        mark = len(fake.sent)
        producer.mute_manager.mute(TOPIC, 3)  # still muted: only 3 stays out once the others come back
        for p in LOCAL - {3}:
            producer.mute_manager.unmute(TOPIC, p)
        for _ in range(400):
            producer.produce(TOPIC, b"v")
        assert set(partitions_of(fake, mark)) == LOCAL - {3}
        done((producer, fake))

    def test_keyed_messages_and_explicit_partitions_are_not_affected(self) -> None:
        producer, fake, _ = build()
        plain, plain_fake, _ = build(conf={"partitioner.rack.aware": False})
        for i in range(200):
            producer.produce(TOPIC, b"v", f"k{i}".encode())
            plain.produce(TOPIC, b"v", f"k{i}".encode())
        producer.produce(TOPIC, b"v", partition=1)
        plain.produce(TOPIC, b"v", partition=1)
        assert [s.partition for s in fake.sent] == [s.partition for s in plain_fake.sent]
        assert set(partitions_of(fake)) - LOCAL  # keys did land on the other racks' partitions
        done((producer, fake), (plain, plain_fake))

    def test_until_the_racks_are_known_every_partition_takes_traffic(self) -> None:
        producer, fake, _ = build(racks=None)
        for _ in range(600):
            producer.produce(TOPIC, b"v")
        assert set(partitions_of(fake)) == set(range(12))
        assert producer.mute_manager.racks.local_partitions(TOPIC) == frozenset()  # on, and no leader known to be local
        done((producer, fake))

    def test_a_leader_moving_into_the_rack_makes_its_partition_local(self) -> None:
        producer, fake, _ = build()
        producer.mute_manager.rounds.update_leaders(TOPIC, {1: 1})  # partition 1: broker 2 -> broker 1 (rack-a)
        for _ in range(600):
            producer.produce(TOPIC, b"v")
        assert set(partitions_of(fake)) == LOCAL | {1}
        done((producer, fake))

    def test_the_figure_splits_bytes_by_rack(self) -> None:
        producer, fake, clock = build()
        for _ in range(50):
            producer.produce(TOPIC, b"v" * 10)
        producer.produce(TOPIC, b"w" * 7, partition=1)  # remote: broker 2
        producer._tick(clock.advance(1.5))
        rack = producer.metrics()["rack"]
        assert rack == {"client_rack": "rack-a", "local_bytes": 500, "remote_bytes": 7, "local_share": 500 / 507}
        done((producer, fake))


class TestSettings:
    def test_the_java_key_is_read_by_mutepro_and_not_handed_to_librdkafka(self) -> None:
        conf = {**CONF, "client.rack": "rack-a", "partitioner.rack.aware": "true"}
        before = dict(conf)
        fake = FakeInnerProducer({TOPIC: 12}, leader=LEADERS)
        source = FakeRacks(RACKS)
        producer = MuteProducer(conf, _inner_factory=fake.factory, _threads=False, _rack_source=source)
        assert conf == before  # the caller's dict is never touched
        assert "partitioner.rack.aware" not in fake.config
        assert fake.config["client.rack"] == "rack-a"
        assert producer.mute_manager.racks.client_rack == "rack-a"
        producer.close(0)
        assert source.closed  # the admin client goes with the producer

    def test_off_by_default(self) -> None:
        fake = FakeInnerProducer({TOPIC: 12}, leader=LEADERS)
        producer = MuteProducer({**CONF, "client.rack": "rack-a"}, _inner_factory=fake.factory, _threads=False)
        assert producer.mute_manager.racks.client_rack is None
        assert producer.metrics()["rack"] is None
        producer.close(0)

    def test_on_without_client_rack_names_the_missing_key(self) -> None:
        fake = FakeInnerProducer({TOPIC: 12})
        with pytest.raises(ConfigError, match=r"^client\.rack: partitioner\.rack\.aware is on .* set client\.rack"):
            MuteProducer({**CONF, "partitioner.rack.aware": True}, _inner_factory=fake.factory, _threads=False)

    def test_a_value_that_is_not_a_boolean_is_refused(self) -> None:
        fake = FakeInnerProducer({TOPIC: 12})
        with pytest.raises(ConfigError, match=r"^partitioner\.rack\.aware: expected true or false, got 'yes'"):
            MuteProducer(
                {**CONF, "client.rack": "a", "partitioner.rack.aware": "yes"}, _inner_factory=fake.factory,
                _threads=False,
            )

    def test_the_policy_setting_turns_it_on_per_topic(self) -> None:
        producer, fake, _ = build(conf={"partitioner.rack.aware": False}, partitioner={"rack_aware": True})
        for _ in range(400):
            producer.produce(TOPIC, b"v")
        assert set(partitions_of(fake)) == LOCAL
        done((producer, fake))

    def test_the_policy_setting_without_client_rack_is_an_error(self) -> None:
        fake = FakeInnerProducer({TOPIC: 12})
        with pytest.raises(ConfigError, match=r"client\.rack: partitioner\.rack_aware \(policy\) is on"):
            MuteProducer(
                CONF, policy=topic_policy(partitioner={"rack_aware": True}), _inner_factory=fake.factory,
                _threads=False,
            )


class TestLocalityMeter:
    def test_growth_is_counted_once_by_where_the_leader_is(self) -> None:
        meter = LocalityMeter()
        meter.update("t", [10, 20, 0], frozenset({0}))
        meter.update("t", [15, 20, 4], frozenset({0, 2}))
        assert (meter.local_bytes, meter.remote_bytes) == (19, 20)

    def test_a_topic_that_is_not_rack_aware_is_not_counted(self) -> None:
        meter = LocalityMeter()
        meter.update("t", [10], None)
        meter.update("t", [30], frozenset({0}))
        assert (meter.local_bytes, meter.remote_bytes) == (20, 0)
        assert meter.as_dict("r")["local_share"] == 1.0


class TestAdminRackSource:
    def test_the_admin_config_keeps_connection_settings_and_drops_the_producers_callbacks(self) -> None:
        def cb(*_: Any) -> None:
            return None

        source = AdminRackSource(
            {"bootstrap.servers": "b:1", "security.protocol": "SSL", "on_delivery": cb, "error_cb": cb,
             "enable.idempotence": True, "client.rack": "a"}
        )
        assert source._config == {"bootstrap.servers": "b:1", "security.protocol": "SSL", "client.rack": "a"}

    def test_an_unreachable_cluster_answers_none(self) -> None:
        source = AdminRackSource({"bootstrap.servers": "127.0.0.1:1", "socket.timeout.ms": 100}, timeout_s=0.2)
        assert source.broker_racks() is None
        assert source._admin is not None
        source.close()
        assert source._admin is None
