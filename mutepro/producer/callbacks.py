"""Application callbacks served from the application's own ``poll()`` / ``flush()``.

confluent-kafka runs delivery, statistics, error and throttle callbacks from ``poll``/``flush`` on the calling
thread. mutepro keeps that contract even though its driver thread polls librdkafka continuously (so muting does
not wait for the application to poll): the driver queues each callback here, and the application's ``poll``
runs them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from mutepro.producer.accel import fastpath

#: Waiters re-check the queue at least this often (put() skips the lock when nobody waits, so a wake-up can be
#: missed by a waiter that was just about to wait; it then sees the item within this slice).
_SLICE_S = 0.05


class CallbackQueue:
    """A FIFO of callbacks with a condition so ``poll(timeout)`` can wait for the next one.

    Entries are stored flat in one deque, three items each and without a tuple per entry: a delivery report is
    ``_REPORT, cb, msg`` (its error is None), anything else ``_CALL, fn, args``. At 100,000 reports a second, a
    container kept alive per queued report would make Python's cyclic GC rescan them over and over (measured:
    ~3 us a message). Writers (any thread, no lock needed) append an entry in one ``deque.extend``, atomic under
    the GIL; the deque's own length is the count, so there is no shared counter to lose an increment of (two
    threads doing ``written += 1`` at once can, and a lost increment would strand a callback). Readers serve
    under ``_serving``.
    """

    def __init__(self) -> None:
        self._items: deque[Any] = deque()
        #: the queue itself and the report entries' marker, for the C fast path (which appends reports itself
        #: and checks the queue is empty before running a callback directly)
        self.items = self._items
        self.report_marker = _REPORT
        #: a report whose message C untracked from the cyclic collector while it waits (see _fastpath.c's
        #: Reporter_vectorcall): tracked again right before its callback runs
        self.untracked_marker = _UNTRACKED
        self._cond = threading.Condition()
        self._serving = threading.Lock()
        # which threads are inside serve() right now: a callback that calls poll()/flush() must not serve the
        # entries after it from inside itself (one nested call per entry would recurse through the whole queue,
        # and with a plain lock it deadlocked); the enclosing serve() runs them next, in order
        self._local = threading.local()
        #: threads blocked in wait()/serve() (public: the C fast path reads it after appending a report); put()
        #: only takes the lock when there are some
        self.waiters = 0
        #: 1 while a thread runs queued callbacks in serve() (public: the C poll(0) leaves such times to Python)
        self.serving = 0

    def __len__(self) -> int:
        # rounded up: an entry half popped by a server on another thread still counts until it has run
        return (len(self._items) + 2) // 3

    def serving_here(self) -> bool:
        """True on a thread that is running a callback from :meth:`serve` right now."""
        return getattr(self._local, "serving", False)

    def has_waiters(self) -> bool:
        return self.waiters > 0

    def put_report(self, cb: Callable[..., Any] | None, msg: Any) -> None:
        """A successful delivery report for ``cb`` (None: nothing to call, only wake waiters)."""
        if cb is not None:
            self._items.extend((_REPORT, cb, msg))
        if self.waiters:
            self.wake()

    def put(self, fn: Callable[..., Any], *args: Any) -> None:
        self._items.extend((_CALL, fn, args))
        if self.waiters:
            self.wake()

    def wake(self) -> None:
        """Wake waiters without an item (something else they wait for changed, e.g. outstanding reached 0)."""
        if self.waiters:
            with self._cond:
                self._cond.notify_all()

    def wait(self, timeout_s: float | None) -> None:
        """Block until an item is queued, :meth:`wake` is called, or ``timeout_s`` passes."""
        with self._cond:
            if not self._items:
                self.waiters += 1
                try:
                    self._cond.wait(_SLICE_S if timeout_s is None else min(timeout_s, _SLICE_S))
                finally:
                    self.waiters -= 1

    def serve(self, timeout_s: float | None = 0.0) -> int:
        """Run queued callbacks on this thread, waiting up to ``timeout_s`` (``None`` = forever) for the first.

        Returns how many ran. An exception from a callback propagates to the caller of ``poll``, as in
        confluent-kafka; the callbacks after it stay queued for the next ``poll``. A callback may itself call
        ``poll``/``flush``: on the thread that is serving, the nested call serves nothing and returns 0 (the
        enclosing call serves the entries after it, in order).

        Only the callbacks queued when serving starts run: the driver thread keeps queueing delivery reports,
        and at 50,000 msg/s with callbacks slower than 20 µs an open-ended drain would never return from
        ``poll(0)`` (librdkafka's ``rd_kafka_poll`` likewise serves a snapshot of its queue).
        """
        if timeout_s is not None and timeout_s <= 0 and not self._items:
            # Nothing queued and no wait: what the lock and the loop below would answer too. A saturated writer
            # polls every few hundred messages and finds the queue empty (its callbacks ran straight from
            # librdkafka's poll): this answer cost ~1.5 us with them, ~0.1 us here.
            return 0
        if self.serving_here():
            return 0
        deadline = None if timeout_s is None else time.monotonic() + max(0.0, timeout_s)
        with self._cond:
            while not self._items:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return 0
                self.waiters += 1
                try:
                    self._cond.wait(_SLICE_S if remaining is None else min(remaining, _SLICE_S))
                finally:
                    self.waiters -= 1
        with self._serving:
            self._local.serving = True
            self.serving = 1
            try:
                return self._serve_budget()
            finally:
                self.serving = 0
                self._local.serving = False

    def _serve_budget(self) -> int:
        budget = len(self._items) // 3
        served = 0
        pop = self._items.popleft
        retrack = fastpath.retrack
        while served < budget:
            try:
                head = pop()
                fn = pop()
                arg = pop()
            except IndexError:  # pragma: no cover - only this server pops, under _serving
                break
            served += 1
            if head is _CALL:
                fn(*arg)
            else:
                if head is _UNTRACKED:
                    retrack(arg)
                fn(None, arg)
        return served


class _CallMarker:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<call>"


_CALL = _CallMarker()
_REPORT = _CallMarker()
_UNTRACKED = _CallMarker()
