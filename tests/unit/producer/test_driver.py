"""The driver (mutepro.producer.driver) on a fake inner producer and a fake clock: metadata, and a tick turning
failed reports into a mute."""

from __future__ import annotations

import logging

import pytest
from confluent_kafka import KafkaError

from mutepro import MuteProducer
from mutepro.producer.driver import _METADATA_REFRESH_S, METADATA_RETRY_MAX_S, METADATA_RETRY_S
from mutepro.testing.fakes import FakeInnerProducer
from tests.unit._producer_fakes import CONF, PARTITIONS, TOPIC, Harness


class TestDriver:
    def test_metadata_is_loaded_for_a_topic_produced_to_before_it_was_known(self) -> None:
        """A message to an unknown topic is left to librdkafka's partitioner; the metadata round then loads the
        topic and later messages are placed by mutepro."""
        h = Harness()
        h.fake.topics["fresh"] = 3
        h.producer.produce("fresh", b"x")
        assert h.fake.sent[-1].partition == -1 and h.producer.mute_manager.snapshot("fresh") is None
        h.fake.deliver("fresh")  # librdkafka placed it: the topic may now be routed by mutepro
        h.producer.poll(0)
        h.producer._load_metadata(h.clock())
        snap = h.producer.mute_manager.snapshot("fresh")
        assert snap is not None and snap.partition_count == 3
        h.producer.produce("fresh", b"y")
        assert 0 <= h.fake.sent[-1].partition < 3
        h.close()

    def test_failures_reported_between_ticks_mute_the_partition_at_the_tick(self) -> None:
        """Four failed deliveries (minimum_calls 4, 50 %) on a warm partition: muted by the next tick, and unkeyed
        traffic leaves it."""
        h = Harness()
        h.warm()
        for i in range(4):
            h.producer.produce(TOPIC, f"{i}".encode(), partition=2)
        h.fake.fail(TOPIC, 2, KafkaError.REQUEST_TIMED_OUT)
        assert h.producer.mute_manager.muted_partitions() == {}
        h.tick()
        assert h.producer.mute_manager.muted_partitions() == {TOPIC: [2]}
        assert h.producer.counters.mutes == 1
        for i in range(50):
            h.produce(f"u{i}".encode())
        assert 2 not in {s.partition for s in h.fake.sent[-50:]}
        h.close()

    def test_errors_of_the_message_are_not_held_against_the_partition(self) -> None:
        """MSG_SIZE_TOO_LARGE says nothing about the partition: reported, never a mute."""
        h = Harness()
        h.warm()
        for i in range(PARTITIONS):
            h.producer.produce(TOPIC, f"{i}".encode(), partition=2)
        h.fake.fail(TOPIC, 2, KafkaError.MSG_SIZE_TOO_LARGE)
        h.tick()
        assert h.producer.mute_manager.muted_partitions() == {}
        h.close()


_STALL_RULE = {"failure_rate": {"enabled": False}, "slow_call": {"threshold_ms": 500}}


class TestFirstStall:
    def _stall(self, h: Harness, topic: str, partition: int) -> None:
        """Four messages to ``partition`` that never get a report, then ticks for 0.6 s (past the 0.5 s threshold)."""
        for i in range(4):
            h.producer.produce(topic, f"s{i}".encode(), partition=partition)
        for _ in range(12):
            h.tick(0.05)

    def test_a_stall_after_the_first_deliveries_is_judged_at_the_threshold(self) -> None:
        """The first deliveries (not judged themselves) end the cold start: a stall right after is muted at 0.5 s."""
        h = Harness(**_STALL_RULE)
        h.warm()
        self._stall(h, TOPIC, 2)
        assert h.producer.mute_manager.muted_partitions() == {TOPIC: [2]}
        h.close()

    def test_deliveries_before_the_topic_was_tracked_end_the_cold_start(self) -> None:
        """Messages delivered before the topic's metadata was loaded count as the partition's first deliveries."""
        h = Harness(**_STALL_RULE)
        h.fake.topics["fresh"] = 3
        for p in range(3):
            h.producer.produce("fresh", b"early", partition=p)
        h.fake.deliver("fresh")
        h.producer.poll(0)
        h.producer._load_metadata(h.clock())
        assert h.producer.mute_manager.snapshot("fresh") is not None
        self._stall(h, "fresh", 1)
        assert h.producer.mute_manager.muted_partitions() == {"fresh": [1]}
        h.close()

    def test_a_cold_stall_whose_leader_delivers_other_partitions_waits_for_the_warm_up(self) -> None:
        """Right after its first deliveries a partition waits past the threshold while its leader keeps delivering
        another partition (a saturated start over many partitions): not muted at 0.6 s; still stuck after the
        5 s warm-up, it is."""
        h = Harness(leaders={0: 1, 1: 1, 2: 2, 3: 2}, **_STALL_RULE)
        h.warm()
        for i in range(4):
            h.producer.produce(TOPIC, f"s{i}".encode(), partition=2)

        def tick_with_leader_2_delivering(seconds: float) -> None:
            for _ in range(round(seconds / 0.05)):
                h.producer.produce(TOPIC, b"alive", partition=3)
                h.fake.deliver(TOPIC, 3)
                h.producer.poll(0)
                h.tick(0.05)

        tick_with_leader_2_delivering(0.6)
        assert h.producer.mute_manager.muted_partitions() == {}
        tick_with_leader_2_delivering(5.0)
        assert h.producer.mute_manager.muted_partitions() == {TOPIC: [2]}
        h.close()

    def test_a_partition_that_never_delivered_keeps_its_cold_start(self) -> None:
        """Without any delivery the partition may still be waiting for its first connection: not muted at 0.6 s."""
        h = Harness(**_STALL_RULE)
        self._stall(h, TOPIC, 2)
        assert h.producer.mute_manager.muted_partitions() == {}
        h.close()


class TestMetadataSchedule:
    """The metadata thread sleeps until it has work: a wanted topic, a refresh due, or a close."""

    def test_a_round_with_nothing_wanted_sleeps_until_the_refresh_is_due(self) -> None:
        """Just loaded, nothing wanted: the next round is a whole refresh interval away, then less as time passes."""
        h = Harness()
        assert h.producer._load_metadata(h.clock()) == pytest.approx(_METADATA_REFRESH_S)
        h.clock.advance(4.0)
        assert h.producer._load_metadata(h.clock()) == pytest.approx(_METADATA_REFRESH_S - 4.0)
        h.close()

    def test_a_topic_still_unknown_is_looked_up_again_soon(self) -> None:
        """A send to a topic the cluster does not know yet: the round says retry in METADATA_RETRY_S."""
        h = Harness()
        h.producer.produce("not-yet", b"x")
        assert h.producer._load_metadata(h.clock()) == METADATA_RETRY_S
        h.close()

    def test_a_topic_that_stays_unknown_is_looked_up_less_and_less_often(self) -> None:
        """Each lookup that loads nothing doubles the wait, up to METADATA_RETRY_MAX_S (no broker answering: a
        lookup every 50 ms cost more CPU than the plain client's whole wait); a newly wanted topic starts over."""
        h = Harness()
        h.producer.produce("not-yet", b"x")
        waits = [h.producer._load_metadata(h.clock()) for _ in range(8)]
        assert waits[0] == METADATA_RETRY_S
        assert waits == sorted(waits) and waits[1] == 2 * METADATA_RETRY_S
        assert waits[-1] == METADATA_RETRY_MAX_S
        h.producer.produce("not-yet-either", b"x")
        assert h.producer._load_metadata(h.clock()) == METADATA_RETRY_S
        h.close()

    def test_a_wanted_topic_that_loads_wakes_the_parked_driver(self) -> None:
        """The driver parks while the only messages outstanding are for a topic still loading (nothing a round
        could judge); the metadata round that loads it wakes the driver."""
        h = Harness()
        h.producer.produce("fresh", b"x")
        assert h.producer._load_metadata(h.clock()) == METADATA_RETRY_S  # unknown to the cluster yet
        for _ in range(3):
            h.tick()
        driver = h.producer._driver_part
        assert driver.quiet and driver.idle()
        pacer = h.producer._core.pacer
        pacer.park()
        h.fake.topics["fresh"] = 3
        h.fake.deliver("fresh")  # librdkafka placed it (see Core.unassigned_topics): mutepro may load the topic
        h.producer.poll(0)
        h.producer._load_metadata(h.clock())
        assert h.producer.mute_manager.snapshot("fresh") is not None
        assert not pacer.parked and pacer.gate.acquire(blocking=False)
        h.close()

    def test_a_send_to_an_unknown_topic_wakes_the_thread(self) -> None:
        """want_metadata() sets the event the sleeping thread waits on, once per topic until it is loaded."""
        h = Harness()
        wanted = h.producer._core.metadata_wanted
        h.producer._load_metadata(h.clock())
        wanted.clear()
        h.fake.topics["fresh"] = 3
        h.producer.produce("fresh", b"x")
        assert wanted.is_set()
        h.close()

    def test_close_wakes_a_sleeping_metadata_thread(self) -> None:
        """A real producer's metadata thread asleep for a refresh interval ends as soon as close() is called."""
        fake = FakeInnerProducer({TOPIC: PARTITIONS})
        producer = MuteProducer(dict(CONF), _inner_factory=fake.factory)
        threads = list(producer._threads)
        assert threads and all(t.is_alive() for t in threads)
        producer.close()
        assert not any(t.is_alive() for t in threads)


class TestClientErrors:
    """librdkafka's error events: each one reaches the user's error_cb, repeats of a code are logged once."""

    def test_a_run_of_the_same_error_is_logged_once_and_every_event_reaches_the_user(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        seen: list[KafkaError] = []
        h = Harness({"error_cb": seen.append})
        with caplog.at_level(logging.WARNING, logger="mutepro"):
            for _ in range(20):
                h.producer._on_error(KafkaError(KafkaError._TRANSPORT))
            h.producer.poll(0)  # the user's callback runs from poll
            h.clock.advance(60.0)
            h.producer._on_error(KafkaError(KafkaError._TRANSPORT))
            h.producer.poll(0)
        lines = [getattr(r, "mutepro", {}) for r in caplog.records]
        lines = [line for line in lines if line.get("event") == "client_error"]
        assert [line["repeated"] for line in lines] == [0, 19]
        assert len(seen) == 21
        h.close()
