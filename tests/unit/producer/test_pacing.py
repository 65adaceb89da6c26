"""The driver's pacing (mutepro.producer.pacing, Driver.idle): it parks once a round found nothing to judge, and
the first send, a mute by hand or close() wakes it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from mutepro import MuteProducer
from mutepro.mute.store import MemoryStore
from mutepro.producer import driver as driver_module
from mutepro.producer.pacing import IDLE_ROUND_S, Pacer, release
from mutepro.testing.fakes import FakeInnerProducer
from tests.unit._producer_fakes import CONF, TOPIC, Harness


def _opened(pacer: Pacer) -> bool:
    """Whether the pacer's gate was opened (a wake); closes it again, as the driver's sleep does."""
    return pacer.gate.acquire(blocking=False)


class TestPacer:
    def test_a_wake_opens_the_gate_once(self) -> None:
        """wake() opens the gate for exactly one sleep, however often it is called; release() of an open gate
        is harmless."""
        pacer = Pacer()
        assert not _opened(pacer)
        pacer.park()
        pacer.wake()
        pacer.wake()
        release(pacer.gate)
        assert not pacer.parked
        assert _opened(pacer) and not _opened(pacer)


class TestDriverIdle:
    def _quiet(self) -> Harness:
        """A warm producer after a round that found nothing new (on the C path the driver serves the warm-up
        reports one round later: it leaves serving to an application that polled since its previous round)."""
        h = Harness()
        h.warm()
        for _ in range(3):
            h.tick()
            if h.producer._driver_part.quiet:
                return h
        raise AssertionError("three rounds after the warm-up, the driver still found something new")

    def test_a_round_that_found_nothing_new_with_nothing_outstanding_is_idle(self) -> None:
        h = self._quiet()
        driver = h.producer._driver_part
        assert driver.quiet and driver.idle()
        h.close()

    def test_the_round_after_a_delivery_is_not_idle(self) -> None:
        """A round that drained new reports is not quiet: the driver parks only after a round judged them."""
        h = self._quiet()
        h.produce(b"v")
        h.fake.deliver(TOPIC)
        h.producer.poll(0)
        h.tick()
        driver = h.producer._driver_part
        assert not driver.quiet and not driver.idle()
        h.tick()
        assert driver.idle()
        h.close()

    def test_a_message_outstanding_keeps_the_driver_ticking(self) -> None:
        """Its age is judged round by round (the tracker dates it by the rounds)."""
        h = self._quiet()
        h.produce(b"v")
        h.tick()
        h.tick()
        driver = h.producer._driver_part
        assert driver.quiet and not driver.idle()
        h.close()

    def test_a_muted_partition_keeps_the_driver_ticking(self) -> None:
        """Its breaker's retry timer and probes run on the rounds."""
        h = self._quiet()
        h.producer.mute_manager.mute(TOPIC, 1)
        h.tick()
        h.tick()
        driver = h.producer._driver_part
        assert driver.quiet and not driver.idle()
        h.close()

    def test_a_send_before_the_idle_check_is_seen_by_it(self) -> None:
        h = self._quiet()
        h.produce(b"v")
        h.producer._pacer.park()
        assert not h.producer._driver_part.idle()
        h.close()

    def test_the_first_send_after_parking_wakes_the_driver(self) -> None:
        """On either path (the C fast path's produce() calls on_send; the Python one reads Pacer.parked)."""
        h = self._quiet()
        pacer = h.producer._pacer
        pacer.park()
        assert h.producer._driver_part.idle() and not _opened(pacer)
        h.produce(b"v")
        assert _opened(pacer) and not pacer.parked
        if h.producer._fast is not None:
            assert h.producer._fast.on_send is None  # one-shot
        h.close()

    def test_an_explicit_partition_send_wakes_the_parked_driver(self) -> None:
        """The Python path's sends (Core.send) wake it too."""
        h = self._quiet()
        pacer = h.producer._pacer
        pacer.park()
        h.produce(b"v", partition=2)
        assert _opened(pacer)
        h.close()

    def test_a_mute_by_hand_wakes_the_parked_driver(self) -> None:
        """Its rescue is scheduled by the next round."""
        h = self._quiet()
        pacer = h.producer._pacer
        pacer.park()
        h.producer.mute_manager.mute(TOPIC, 1)
        assert _opened(pacer)
        h.close()


class TestIdleRounds:
    def _producer(self, **kwargs: Any) -> MuteProducer:
        fake = FakeInnerProducer({TOPIC: 4})
        return MuteProducer(CONF, _inner_factory=fake.factory, _threads=False, **kwargs)

    def test_a_private_store_lets_the_driver_sleep_until_woken(self) -> None:
        p = self._producer()
        assert p._idle_round_s is None
        p.close(0)

    def test_a_store_given_to_the_producer_is_looked_at_each_idle_round(self) -> None:
        """Another producer may write it: its mutes are adopted before the next message goes out."""
        p = self._producer(store=MemoryStore())
        assert p._idle_round_s == IDLE_ROUND_S
        p.close(0)


def test_a_parked_driver_thread_runs_a_round_for_the_first_send(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """With its threads running: the driver parks (nothing to judge), sleeps (a private store: no idle rounds), and
    the first send brings a round."""
    rounds = {"n": 0}
    tick = driver_module.Driver.tick

    def counted(self: driver_module.Driver, now: float) -> None:
        tick(self, now)
        rounds["n"] += 1

    monkeypatch.setattr(driver_module.Driver, "tick", counted)
    fake = FakeInnerProducer({TOPIC: 4})
    p = MuteProducer(CONF, _inner_factory=fake.factory)
    try:
        assert p.wait_for_topic(TOPIC, 20)
        assert _until(lambda: p._pacer.parked, p)
        before = rounds["n"]
        p.produce(TOPIC, b"v")
        assert _until(lambda: rounds["n"] > before, p)
    finally:
        p.purge()
        p.close(0)


def _until(predicate: Callable[[], bool], producer: MuteProducer, timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        producer.poll(0.01)
    return True
