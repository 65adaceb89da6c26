"""Holds (mutepro.producer.holds) driven through MuteProducer on a fake inner producer: release order, the order
barrier, purged messages in front, probes from the head, re-sends after BufferError."""

from __future__ import annotations

from tests.unit._producer_fakes import TOPIC, Harness, keys_by_home

IDEMPOTENT = {"enable.idempotence": True}  # no rescue purge: the pending messages stay where they are


def _key_for(h: Harness, home: int) -> bytes:
    return next(k for k, p in keys_by_home(h) if p == home)


def _three_held_behind_muted(home: int) -> Harness:
    """keyed_policy hold, ``home`` muted by failures, and messages b"0", b"1", b"2" of one key held for it."""
    h = Harness(keyed_policy="hold")
    key = _key_for(h, home)
    h.warm()
    h.trip(home)
    h.fake.deliver()
    h.producer.poll(0)
    for i in range(3):
        h.produce(f"{i}".encode(), key)
    return h


class TestHoldRelease:
    def test_held_messages_are_released_in_produce_order(self) -> None:
        """Held while muted; after the unmute the next tick sends them home, oldest first."""
        h = Harness(keyed_policy="hold")
        key = _key_for(h, 1)
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        for i in range(5):
            h.produce(f"{i}".encode(), key)
        assert h.values(1) == [] and h.producer.held(TOPIC) == 5
        h.tick()
        assert h.values(1) == []  # still muted: nothing released
        h.producer.mute_manager.unmute(TOPIC, 1)
        h.tick()
        assert h.values(1) == [b"0", b"1", b"2", b"3", b"4"]
        assert h.producer.held() == 0 and h.producer.counters.released == 5
        h.close()

    def test_new_messages_queue_behind_held_ones_after_the_unmute(self) -> None:
        """Unmuted but not yet released: a new message of the key is held behind the others, not sent first."""
        h = Harness(keyed_policy="hold")
        key = _key_for(h, 1)
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        h.produce(b"old", key)
        h.producer.mute_manager.unmute(TOPIC, 1)
        h.produce(b"new", key)
        assert h.values(1) == []
        h.tick()
        assert h.values(1) == [b"old", b"new"]
        h.close()

    def test_no_release_while_older_messages_await_reports(self) -> None:
        """The order barrier: messages sent home before the mute have no report yet, so nothing held is
        released (librdkafka would retry them after the held ones); their reports open the way."""
        h = Harness(conf=IDEMPOTENT, keyed_policy="hold")
        key = _key_for(h, 1)
        h.produce(b"a", key)
        h.produce(b"b", key)
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        h.produce(b"c", key)
        h.produce(b"d", key)
        h.producer.mute_manager.unmute(TOPIC, 1)
        h.tick()
        assert h.values(1) == [b"a", b"b"] and h.producer.held(TOPIC) == 2
        h.fake.deliver(TOPIC, 1, count=1)
        h.producer.poll(0)
        h.tick()
        assert h.values(1) == [b"b"]  # one still outstanding: still held
        h.fake.deliver(TOPIC, 1)
        h.producer.poll(0)
        h.tick()
        assert h.values(1) == [b"c", b"d"]
        h.close()

    def test_purged_messages_go_in_front_of_the_hold(self) -> None:
        """A rescue takes the home's queued messages back: they are older than anything held, so they are held
        in front and released first."""
        h = Harness(keyed_policy="hold")
        key = _key_for(h, 1)
        h.produce(b"a", key)
        h.produce(b"b", key)
        h.producer.mute_manager.mute(TOPIC, 1)
        h.produce(b"c", key)  # held: a and b are still in librdkafka
        h.tick()  # the rescue purges a and b
        assert h.fake.purges and h.values(1) == [] and h.producer.held(TOPIC) == 3
        h.producer.mute_manager.unmute(TOPIC, 1)
        h.tick()
        assert h.values(1) == [b"a", b"b", b"c"]
        h.close()

    def test_a_half_open_home_gets_the_head_of_its_hold_as_the_probe(self) -> None:
        """Half-open: exactly one held message -- the oldest -- goes home as the probe; the rest wait for it."""
        h = _three_held_behind_muted(1)
        h.tick(1.5)  # half-open: the head goes as the probe
        assert h.values(1) == [b"0"] and h.producer.counters.probes == 1
        h.tick()
        assert h.values(1) == [b"0"]  # the probe awaits its report: nothing else
        h.fake.deliver(TOPIC, 1)
        h.producer.poll(0)
        h.tick()  # the probe closed the breaker
        h.tick()
        assert [s.value for s in h.fake.sent if s.partition == 1][-3:] == [b"0", b"1", b"2"]
        h.close()

    def test_a_probe_release_that_meets_a_full_queue_is_tried_again(self) -> None:
        """The held head released as the probe meets a full queue: it stays held, the probe slot comes back, and
        the next tick with room sends it."""
        h = _three_held_behind_muted(1)
        h.fake.capacity = len(h.fake.pending)
        h.tick(1.5)  # half-open: the probe is granted, its send does not fit
        assert h.values(1) == [] and h.producer.counters.probes == 0
        h.fake.capacity = 100_000
        h.tick(0.3)  # past probe_spacing_ms
        assert h.values(1) == [b"0"] and h.producer.counters.probes == 1
        h.close()


def test_a_resend_that_meets_a_full_queue_is_retried_on_the_next_tick() -> None:
    """Rescue re-sends that hit BufferError wait in the re-send queue (counted by len()) and go out, in order,
    once librdkafka has room."""
    h = Harness()
    for i in range(6):
        h.producer.produce(TOPIC, f"{i}".encode(), partition=2, on_delivery=h.callback)
    h.producer.produce(TOPIC, b"stuck", partition=3)  # the muted partition holds something: a rescue is due
    h.producer.mute_manager.mute(TOPIC, 3)
    h.fake.capacity = 4
    h.tick()  # the rescue purges all seven and re-sends them where they were: three do not fit
    assert h.values(2) == [b"0", b"1", b"2", b"3"] and len(h.producer) == 7
    h.fake.deliver(TOPIC, 2, count=2)
    h.producer.poll(0)
    h.tick()
    assert h.values(2) == [b"2", b"3", b"4", b"5"]
    h.close()
