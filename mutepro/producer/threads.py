"""MuteProducer's two background threads and what reaches them: the driver thread's loop (:meth:`_drive`, one
round every ``tick_interval_s`` or parked while idle, see :mod:`mutepro.producer.pacing`), the metadata thread's
loop (:meth:`_metadata_loop`), how a thread's failure reaches the application, and librdkafka's client callbacks,
forwarded to the :class:`~mutepro.producer.driver.Driver`.

Mixed into :class:`~mutepro.producer.producer.MuteProducer`. Each thread runs on a weak proxy of the producer
(:func:`start_threads`): an application that drops a producer without close() gets it collected, its threads
ended and the wrapped handle destroyed, as with the plain client.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable
from typing import Any

from mutepro.errors import MuteproError
from mutepro.logs import get_logger
from mutepro.producer.callbacks import CallbackQueue
from mutepro.producer.core import Clock, Core
from mutepro.producer.driver import METADATA_RETRY_S, Driver
from mutepro.producer.pacing import Pacer, release

log = get_logger("mutepro.producer")


class ProducerThreads:
    """The producer's thread loops and the callbacks that reach its driver (see the module docstring)."""

    name: str
    _clock: Clock
    _tick_s: float
    _idle_round_s: float | None
    _stop: threading.Event
    _pacer: Pacer
    _driver_part: Driver
    _core: Core
    _callbacks: CallbackQueue
    _fast: Any
    _driver_error: BaseException | None

    # -- the threads (each on a weak proxy of the producer; see start_threads) ----------------------------

    def _drive(self) -> None:
        """The driver thread's loop: one :meth:`_tick` every ``tick_interval_s`` until close, or parked while idle
        (see :mod:`mutepro.producer.pacing`). An exception ends the loop and is kept for the application: its next
        poll()/flush() raises it (see :meth:`_driver_failed`)."""
        # Only the pacer's gate is held here across sleeps: this thread sees the producer through a weak proxy,
        # and a local naming any part that leads back to it (the pacer: the C fast path) would keep it alive.
        gate = self._pacer.gate
        next_tick = 0.0
        try:
            while not self._stop.is_set():
                # Reports are normally served by the producing thread (FastPath inline_poll_every); the driver serves
                # them once per tick, right before judging the partitions, so an idle or blocked application
                # never delays a mute by more than one tick. With nothing to judge it parks (see pacing).
                now = self._clock()
                parked = False
                if now >= next_tick:
                    next_tick = now + self._tick_s
                    self._tick(now)
                    if self._driver_part.quiet:
                        self._pacer.park()
                        parked = self._driver_part.idle()
                        if not parked:
                            self._pacer.unpark()
                if parked:
                    # -1: until a send, a mute by hand or close()
                    gate.acquire(timeout=-1 if self._idle_round_s is None else self._idle_round_s)
                    self._pacer.unpark()
                    next_tick = 0.0  # woken by a send (its round dates it), or the idle round is due
                else:
                    gate.acquire(timeout=max(0.001, next_tick - self._clock()))
        except BaseException as err:  # surfaced to the application on its next poll/flush
            self._driver_failed(err)
            log.error("driver_thread_failed", producer=self.name, error=repr(err))
            self._callbacks.wake()

    def _driver_failed(self, err: BaseException) -> None:
        """Keep a driver or metadata thread's exception ``err`` for the application, and make the C fast path's
        poll(0) hand over to Python, which raises it (see :meth:`_raise_driver_error`)."""
        self._driver_error = err
        if self._fast is not None:
            self._fast.broken = 1  # the C poll(0) leaves the call to Python, which raises it

    def _raise_driver_error(self) -> None:
        """Raise a MuteproError for the exception a producer thread failed with, if one did: the application
        learns of it on its next poll()/flush() instead of muting silently stopping."""
        if self._driver_error is not None:
            raise MuteproError(f"the MuteProducer driver thread failed: {self._driver_error!r}") from self._driver_error

    def _metadata_loop(self) -> None:
        """Load and refresh topic metadata on its own thread: list_topics() blocks up to its timeout (a stalled
        broker makes it wait), and the driver thread must not stop judging partitions meanwhile. Between rounds
        it sleeps until the next one has work or :meth:`Core.want_metadata` (or close) wakes it."""
        wanted = self._core.metadata_wanted
        try:
            idle = METADATA_RETRY_S
            while not self._stop.is_set():
                wanted.wait(idle)
                wanted.clear()  # before the round: a topic wanted during it wakes the next wait at once
                if self._stop.is_set():
                    return
                idle = self._load_metadata(self._clock())
        except BaseException as err:  # surfaced to the application on its next poll/flush
            self._driver_failed(err)

    def _tick(self, now: float) -> None:
        """One driver round (see :class:`~mutepro.producer.driver.Driver`)."""
        self._driver_part.tick(now)

    def _load_metadata(self, now: float) -> float:
        """One metadata round at ``now`` (see :class:`~mutepro.producer.driver.Driver`).

        Returns:
            Seconds until the next round is due.
        """
        return self._driver_part.load_metadata(now)

    # -- librdkafka's callbacks (handed to the wrapped producer before the driver exists) -------------------

    def _on_stats(self, raw: str) -> None:
        """librdkafka's ``stats_cb``: the JSON statistics ``raw`` go to the driver, which reads each partition's
        leader from them and queues them for the application's own ``stats_cb``, if it set one."""
        self._driver_part.on_stats(raw)

    def _on_error(self, err: Any) -> None:
        """librdkafka's ``error_cb``: the client-level ``KafkaError`` ``err`` goes to the driver, which logs it and
        queues it for the application's own ``error_cb``, if it set one."""
        self._driver_part.on_error(err)

    def _on_throttle(self, event: Any) -> None:
        """librdkafka's ``throttle_cb``: a broker's ``ThrottleEvent`` goes to the driver, which queues it for the
        application's own ``throttle_cb``, if it set one."""
        self._driver_part.on_throttle(event)


def start_threads(producer: ProducerThreads, start: bool) -> list[threading.Thread]:
    """The producer's driver and metadata threads, started (none when ``start`` is False: unit tests drive the
    rounds themselves, with their own clock). The producer is complete by then: the loops read its parts."""
    if not start:
        return []
    me = weakref.proxy(producer)
    threads = []
    for loop, role in ((ProducerThreads._drive, "driver"), (ProducerThreads._metadata_loop, "metadata")):
        thread = threading.Thread(target=_while_alive, args=(loop, me), name=f"{producer.name}-{role}", daemon=True)
        thread.start()
        threads.append(thread)
    # the metadata thread sleeps until a refresh is due, the driver while idle: wake them when the producer goes,
    # so they end now
    weakref.finalize(producer, producer._core.metadata_wanted.set)
    weakref.finalize(producer, release, producer._pacer.gate)
    return threads


def _while_alive(loop: Callable[[Any], None], producer: Any) -> None:
    """Run a producer thread's loop on a weak proxy; it ends once the producer was garbage collected."""
    with contextlib.suppress(ReferenceError):
        loop(producer)
