"""Who serves librdkafka's delivery reports, and where the application's callbacks run (:class:`DirectServing`,
over the C extension :mod:`mutepro.producer._fastpath`): the application's ``poll()`` runs its callbacks straight
from librdkafka's poll, without the producer lock; the driver serves reports only while the application does not
poll, and a rescue first keeps other threads out of librdkafka's poll.

What the C fast path may touch is fixed by its constructor (see ``_fastpath.pyi``): the wrapped producer's
``produce``/``poll``, the manager's snapshot mapping (``muted``, ``probing``, ``writable_set``,
``partition_count`` of each :class:`~mutepro.partition.snapshot.TopicSnapshot`), the tracker's tallies and totals,
the hold-queue mapping (only whether it is empty), the :class:`~mutepro.producer.callbacks.CallbackQueue`'s public
``report_marker``/``items``/``waiters``/``wake``, and the ``slow_produce``/``on_report``/``picker`` callables.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from mutepro.partition.hashing import C_MODES
from mutepro.partition.protocols import DefaultMutingPartitioner
from mutepro.producer import accel
from mutepro.producer.callbacks import CallbackQueue
from mutepro.producer.tracker import OutstandingTracker

_QUIET_S = 1.0  # a rescue waits at most this long for other threads to leave librdkafka's poll


class DirectServing:
    """How reports are served (see the module docstring)."""

    def __init__(self, fast: Any, inner_poll: Callable[[float], int], callbacks: CallbackQueue) -> None:
        self._fast = fast
        self._inner_poll = inner_poll
        self._callbacks = callbacks
        self._app_polls_seen = -1
        self._no_rescue = threading.Event()  # cleared while a rescue keeps other threads out of librdkafka's poll
        self._no_rescue.set()

    def poll(self, timeout: float | None) -> int:
        """The Python side of ``poll(timeout)`` (what the C poll leaves: queued callbacks, a rescue, a closed or
        failed producer): the C wait (``FastPath.serve_for``, the one rule for every poll's slices and deadline)
        with :meth:`_serve` for each slice."""
        served: int = self._fast.serve_for(timeout, self._serve)
        return served

    def flush_round(self) -> None:
        self._serve(0.0)

    def flush_wait(self, pause_s: float) -> None:
        self._serve(pause_s)  # waits in librdkafka: back as soon as a report arrives

    def _serve(self, wait_s: float) -> int:
        """Queued callbacks first (they are older), then librdkafka's reports with the application's callbacks
        run right here, on the application's thread inside its poll()/flush(), as the plain client does, then
        whatever that poll queued (failed reports, statistics): poll() returns only after the callbacks ran.

        Returns the callbacks run and reports served; librdkafka events of mutepro's own (its statistics when
        the application set no ``stats_cb``) do not count, so ``poll(timeout)`` keeps waiting past them.

        Never called from inside a callback of this producer's poll on the same thread (see :meth:`nested`).
        """
        fast = self._fast
        served = self._callbacks.serve(0)
        direct = fast.direct_reports
        token = fast.enter_direct()
        if token is None:  # a rescue is collecting its purge reports: they must all reach it (see quiesce)
            self._no_rescue.wait(wait_s)
            return served + self._callbacks.serve(0)
        try:
            self._inner_poll(0.0 if served else wait_s)
        finally:
            fast.leave_direct(token)
        return served + (fast.direct_reports - direct) + self._callbacks.serve(0)

    def served_event(self) -> None:
        """An error or throttle event with no application callback was served: it counts as served in the
        application's own poll(), as the plain client counts it (``FastPath.served_event``)."""
        self._fast.served_event()

    def nested(self) -> bool:
        # (C path) a delivery callback run straight from librdkafka's poll, where confluent-kafka's poll must not
        # be entered again (it loses the outer call's state and aborts)
        return self._callbacks.serving_here() or self._fast.polling() > 0

    def serve_for_tick(self) -> None:
        fast = self._fast
        if fast.app_polls == self._app_polls_seen and not fast.app_pollers:
            # The application has not polled since the last tick and is not waiting in poll()/flush() right now:
            # serve its reports here (queued for its next poll). When it does poll, its own poll() runs the
            # callbacks directly and the driver stays out of the way: serving here would queue reports and make
            # every later one queue behind them.
            self._inner_poll(0)  # the C reporter needs no lock (and Python reports take it themselves)
        self._app_polls_seen = fast.app_polls

    def quiesce(self) -> None:
        # The application's poll() runs without the producer lock, so it could serve some of the purge reports,
        # late and on its own thread. Keep new polls out and wait (bounded: a poll waits in librdkafka at most
        # 0.2 s at a time, FastPath.serve_for) until no other thread is inside one.
        fast = self._fast
        self._no_rescue.clear()
        fast.rescue_pending = 1
        deadline = time.monotonic() + _QUIET_S
        while (fast.app_pollers or fast.inline_pollers) and time.monotonic() < deadline:
            time.sleep(0.001)

    def resume(self) -> None:
        self._fast.rescue_pending = 0
        self._no_rescue.set()

    def closing(self) -> None:
        self._fast.closed = 1

    def closed(self) -> None:
        # the C reporters refer back to the producer: dropped so that the wrapped handle can go
        self._fast.forget_reporters()


def build_fast_path(
    *, inner: Any, snapshots: dict[str, Any], tracker: OutstandingTracker, holds: dict[Any, Any],
    slow_produce: Callable[..., None], on_report: Callable[[Any, int, Any, Any], None], callbacks: CallbackQueue,
    default_cb: Any, only_errors: bool, default: DefaultMutingPartitioner | None, sticky: bool, partitioner_name: str,
    inline_poll_every: int, reroutes: dict[tuple[str, int], dict[int, int]] | None = None,
    slow_poll: Callable[..., Any], poll_error: Any, slow_flush: Callable[..., Any], pending: Callable[[], int],
    resends: Any, inner_flush: Callable[..., Any],
) -> Any:
    """The C fast path: produce() and delivery reports for healthy topics without a Python frame.

    It places keyed messages for the built-in partitioner and makes its sticky choice for unkeyed ones (when its
    clock is the real monotonic clock), and hands every other call to ``slow_produce``; poll() and flush() what
    they leave to ``slow_poll`` / ``slow_flush``. Returned complete: nothing is set on it afterwards.
    """
    chooser = default.chooser if default is not None else None
    picker = None
    if sticky and chooser is not None and chooser.clock is time.monotonic:
        picker = chooser.pick
    key_mode = C_MODES.get(partitioner_name, "KP_NONE") if default is not None else "KP_NONE"
    fast = accel.fastpath.FastPath(
        inner_produce=inner.produce,
        inner_poll=inner.poll,
        snapshots=snapshots,
        tallies=tracker.topics,
        holds=holds,
        slow_produce=slow_produce,
        on_report=on_report,
        queue=callbacks,
        picker=picker,
        default_cb=default_cb,
        counts=tracker.totals,
        key_mode=getattr(accel.fastpath, key_mode),
        only_errors=int(only_errors),
        sticky_bytes=int(chooser.sticky_bytes or 0) if chooser is not None else 0,
        linger_s=float(chooser.linger_s or 0.0) if chooser is not None else 0.0,
        inline_poll_every=inline_poll_every,
        queue_max_messages=tracker.buffer_max_messages,
        **({"reroutes": reroutes} if reroutes is not None else {}),
    )
    # the C constructor takes the path's own inputs; what it hands back to Python is set here, before anyone
    # holds the object (poll(0) and flush() in C too; every other call, and a subclass's own, in Python)
    fast.slow_poll = slow_poll
    fast.poll_error = poll_error
    fast.slow_flush = slow_flush
    fast.pending = pending
    fast.resends = resends
    fast.inner_flush = inner_flush
    return fast
