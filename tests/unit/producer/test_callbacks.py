"""CallbackQueue: FIFO serving on the caller's thread, timeouts, exceptions and wake-ups."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from mutepro.producer.callbacks import CallbackQueue


def recorder() -> tuple[list[tuple[Any, ...]], Callable[..., None]]:
    """A list and a callback appending its arguments to it."""
    calls: list[tuple[Any, ...]] = []
    return calls, lambda *args: calls.append(args)


def in_thread(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


class TestServe:
    def test_fifo_with_arguments(self) -> None:
        """Callbacks run in the order queued, with their arguments, and serve() returns how many ran."""
        q = CallbackQueue()
        calls, cb = recorder()
        q.put(cb, "a", 1)
        q.put(cb)
        q.put(cb, "c", None)
        assert len(q) == 3
        assert q.serve(0) == 3
        assert calls == [("a", 1), (), ("c", None)]
        assert len(q) == 0

    def test_timeout_zero_on_empty_returns_zero(self) -> None:
        """serve(0) on an empty queue returns 0 at once."""
        assert CallbackQueue().serve(0) == 0

    def test_negative_timeout_is_zero(self) -> None:
        """A negative timeout behaves like 0 (no wait)."""
        assert CallbackQueue().serve(-5.0) == 0

    def test_runs_on_callers_thread(self) -> None:
        """Callbacks run on the thread that calls serve(), not the one that queued them."""
        q = CallbackQueue()
        ran_on: list[str] = []
        t = in_thread(lambda: q.put(lambda: ran_on.append(threading.current_thread().name)))
        t.join(5)
        q.serve(0)
        assert ran_on == [threading.current_thread().name]

    def test_raising_callback_propagates_rest_stay_queued(self) -> None:
        """An exception reaches the caller; callbacks after the failing one stay queued for the next serve."""
        q = CallbackQueue()
        calls, cb = recorder()

        def boom() -> None:
            raise ValueError("user callback failed")

        q.put(cb, 1)
        q.put(boom)
        q.put(cb, 3)
        q.put(cb, 4)
        with pytest.raises(ValueError, match="user callback failed"):
            q.serve(0)
        assert calls == [(1,)]
        assert len(q) == 2
        assert q.serve(0) == 2
        assert calls == [(1,), (3,), (4,)]

    def test_serves_only_what_was_queued_at_start(self) -> None:
        """A callback queueing another does not extend the current serve (poll(0) always returns)."""
        q = CallbackQueue()
        calls, cb = recorder()

        def requeue(n: int) -> None:
            calls.append((n,))
            q.put(requeue, n + 1)

        q.put(requeue, 1)
        q.put(cb, "x")
        assert q.serve(0) == 2
        assert calls == [(1,), ("x",)]
        assert len(q) == 1
        assert q.serve(0) == 1
        assert calls[-1] == (2,)

    def test_waits_for_an_item_put_by_another_thread(self) -> None:
        """serve(None) blocks until another thread queues a callback, then runs it."""
        q = CallbackQueue()
        calls, cb = recorder()
        served: list[int] = []
        started = threading.Event()

        def consumer() -> None:
            started.set()
            served.append(q.serve(None))

        t = in_thread(consumer)
        assert started.wait(5)
        q.put(cb, "late")
        t.join(5)
        assert not t.is_alive()
        assert served == [1]
        assert calls == [("late",)]


class TestWait:
    def test_returns_at_once_when_items_queued(self) -> None:
        """wait() with items already queued returns without waiting (even with no timeout)."""
        q = CallbackQueue()
        q.put(lambda: None)
        q.wait(None)
        assert len(q) == 1

    def test_wait_timeout_zero_on_empty(self) -> None:
        """wait(0) on an empty queue returns and leaves it empty."""
        q = CallbackQueue()
        q.wait(0)
        assert len(q) == 0

    def test_wake_releases_a_waiter(self) -> None:
        """wake() releases a thread blocked in wait(None) although nothing was queued."""
        q = CallbackQueue()
        entered = threading.Event()
        released = threading.Event()

        def waiter() -> None:
            # Hold the condition while announcing, so wake() cannot run before wait() is waiting.
            with q._cond:
                entered.set()
                q.wait(None)
            released.set()

        t = in_thread(waiter)
        assert entered.wait(5)
        q.wake()  # blocks on the condition until the waiter is inside Condition.wait()
        assert released.wait(5)
        t.join(5)
        assert len(q) == 0

    def test_put_releases_a_waiter(self) -> None:
        """put() releases a thread blocked in wait(None)."""
        q = CallbackQueue()
        entered = threading.Event()
        released = threading.Event()

        def waiter() -> None:
            with q._cond:
                entered.set()
                q.wait(None)
            released.set()

        t = in_thread(waiter)
        assert entered.wait(5)
        q.put(lambda: None)
        assert released.wait(5)
        t.join(5)
        assert len(q) == 1


class TestConcurrentWriters:
    def test_no_entry_is_stranded_when_threads_write_at_once(self) -> None:
        """Four threads queueing 20,000 reports each: the count and the served total are exact (no shared
        counter whose increments two threads could lose)."""
        q = CallbackQueue()
        got: list[Any] = []

        def writer() -> None:
            for i in range(20_000):
                q.put_report(lambda err, msg: got.append(msg), i)

        threads = [threading.Thread(target=writer) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(q) == 80_000
        assert q.serve(0) == 80_000 and len(got) == 80_000 and len(q) == 0

    def test_a_report_without_callback_queues_nothing(self) -> None:
        """put_report(None, msg) only wakes waiters; nothing is left to serve."""
        q = CallbackQueue()
        q.put_report(None, "msg")
        assert len(q) == 0 and q.serve(0) == 0


class TestReentrantServe:
    def test_a_callback_that_serves_again_neither_deadlocks_nor_recurses(self) -> None:
        """A queued callback calling serve() (the app's poll/flush from a callback) returns 0 at once; the outer
        serve runs the rest, in order."""
        q = CallbackQueue()
        ran: list[object] = []
        nested: list[int] = []

        def reenter(tag: object) -> None:
            ran.append(tag)
            nested.append(q.serve(0))

        for i in range(2000):
            q.put(reenter, i)
        worker = threading.Thread(target=q.serve, args=(0,))
        worker.start()
        worker.join(30)
        assert not worker.is_alive()
        assert ran == list(range(2000)) and set(nested) == {0} and len(q) == 0

    def test_another_thread_still_serves_while_one_is_serving(self) -> None:
        """serving_here() is per thread: a second thread's serve() is not treated as nested."""
        q = CallbackQueue()
        seen: list[bool] = []
        q.put(lambda: seen.append(q.serving_here()))
        q.serve(0)
        assert seen == [True] and not q.serving_here()
