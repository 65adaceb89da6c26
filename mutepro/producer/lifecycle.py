"""The end of a MuteProducer's life: ``flush()`` (wait until every message has its final report and callback),
``close()`` (flush, then shut down), and ``len()``, what both count. Mixed into
:class:`~mutepro.producer.producer.MuteProducer`; the threads it stops are in :mod:`mutepro.producer.threads`.
"""

from __future__ import annotations

import threading
import time
import warnings
from typing import TYPE_CHECKING, Any

from mutepro.producer import compat
from mutepro.producer.callbacks import CallbackQueue
from mutepro.producer.core import Core
from mutepro.producer.driver import Driver
from mutepro.producer.holds import HoldQueues
from mutepro.producer.metrics import MuteproCollector, unregister_prometheus
from mutepro.producer.pacing import Pacer
from mutepro.producer.rescue import Rescuer
from mutepro.producer.serving import DirectServing
from mutepro.producer.slowpath import ClosedPath, SlowPath
from mutepro.producer.tracker import OutstandingTracker

#: librdkafka waits whole milliseconds (confluent-kafka truncates: a wait of 0.9 ms is a poll(0))
_MIN_WAIT_S = 0.001


class Lifecycle:
    """flush(), close() and len() of a MuteProducer (see the module docstring)."""

    _closed: bool
    _flush_pause_s: float
    _inner: Any
    _tracker: OutstandingTracker
    _holding: HoldQueues
    _rescuer: Rescuer
    _callbacks: CallbackQueue
    _serving: DirectServing
    _slow: SlowPath | ClosedPath
    _pacer: Pacer
    _core: Core
    _stop: threading.Event
    _threads: list[threading.Thread]
    _driver_part: Driver
    _collector: MuteproCollector | None

    if TYPE_CHECKING:  # the other halves of MuteProducer (declared only: a member here would shadow theirs)

        def _raise_driver_error(self) -> None: ...

        def purge(self, in_queue: bool = True, in_flight: bool = True, blocking: bool = True) -> None: ...

    @compat.surfaces_interrupts
    def flush(self, timeout: float = -1) -> int:
        """Wait until every message (held ones too) has its final report and its callback ran; returns how many
        are still outstanding when ``timeout`` (-1: forever) runs out."""
        if self._closed:
            raise compat.closed_error()
        compat.check_timeout(timeout)
        deadline = None if timeout < 0 else time.monotonic() + timeout
        if self._serving.nested():
            # Called from a callback that this thread's poll()/flush() is running: the reports still to come are
            # delivered by that enclosing call after the callback returns, so waiting here could never end.
            # Report what is left, like flush(0). (The plain client aborts the process here.)
            return len(self)
        self._raise_driver_error()
        self._serving.flush_round()
        remaining = len(self)
        if remaining == 0:
            return 0
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return remaining
            # never less than librdkafka's millisecond (less would be a poll(0) spin until the deadline)
            pause = self._flush_pause_s if left is None else max(_MIN_WAIT_S, min(self._flush_pause_s, left))
            self._serving.flush_wait(pause)
            self._raise_driver_error()
            remaining = len(self)
            if remaining == 0:
                return 0

    def __len__(self) -> int:
        """Messages not yet fully handled: outstanding in librdkafka, held, awaiting re-send, or whose callback
        has not run yet (like ``len(confluent_kafka.Producer)``); 0 once closed."""
        if self._closed:
            return 0
        return self._tracker.total + len(self._holding) + self._rescuer.in_hand + len(self._callbacks)

    def close(self, timeout: float | None = None, *_ignored: object, **_ignored_kw: object) -> bool:
        """Deliver what is still outstanding, stop mutepro's threads and destroy the wrapped producer; returns
        True, like ``confluent_kafka.Producer.close()``. Afterwards produce/poll/flush/purge and the transaction
        calls raise ``RuntimeError("Producer has been closed")`` and ``len()`` is 0, as with the real client.

        Like the real client it waits for every message (up to its ``message.timeout.ms``); ``timeout`` (s)
        bounds that wait instead: what is left then is purged (its callbacks run here, with ``_PURGE_QUEUE``)
        and a ``RuntimeWarning`` says how many. A callback's exception propagates, the producer closed anyway.
        The real client's ``close()`` accepts and ignores any arguments (confluent-kafka 2.16: ``close(5)``,
        ``close("x")``, ``close(1, 2)``, ``close(foo=1)`` all return True); so does this one, beyond a
        ``timeout`` that is a number or None (any other ``timeout`` waits as the real client does).
        """
        if self._closed:
            return True
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            timeout = None  # close(True), close("x"): ignored, as by the real client
        failed = True
        try:
            self.flush(-1 if timeout is None else timeout)
            failed = False
        finally:
            self._shut_down(warn=not failed)
        return True

    def _shut_down(self, warn: bool) -> None:
        """The second half of :meth:`close`: purge what is left, stop the threads, destroy the wrapped producer and
        run the last callbacks. ``warn``: say with a ``RuntimeWarning`` how many messages were purged (False when
        the flush raised: that exception already tells the application)."""
        left = len(self)
        if left:
            # so that destroying the wrapped producer cannot wait any longer (its close() flushes forever)
            self.purge(in_queue=True, in_flight=True, blocking=True)
        self._closed = self._slow.closed = True
        self._serving.closing()
        self._stop.set()
        self._pacer.wake()  # the driver may be parked
        self._core.metadata_wanted.set()  # the metadata thread may be asleep until its next refresh
        for thread in self._threads:
            thread.join(5)
        self._driver_part.close()
        self._inner.close()  # serves the last reports (purged ones) into the callback queue
        if self._collector is not None:
            unregister_prometheus(self._collector)
        self._serving.closed()
        if left and warn:
            warnings.warn(
                f"Producer flush failed during close: {left} messages still undelivered after the close timeout "
                "were purged", RuntimeWarning, stacklevel=3,
            )
        self._callbacks.serve(0)  # the application's callbacks for the last reports, as the real close() runs
