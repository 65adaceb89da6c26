"""Who serves delivery reports (mutepro.producer.serving): the driver only while the application does not poll,
a rescue keeping other threads out of librdkafka's poll until it resumes, the callbacks queued before a poll
run first, and the fast path built complete."""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, Message

from mutepro.producer.callbacks import CallbackQueue
from mutepro.producer.serving import DirectServing
from tests.unit._producer_fakes import TOPIC, Harness


class _Fast:
    """The part of the C fast path DirectServing reads and sets, as plain attributes."""

    def __init__(self) -> None:
        self.app_polls = 0
        self.app_pollers = 0
        self.inline_pollers = 0
        self.direct_reports = 0
        self.rescue_pending = 0
        self.closed = 0
        self.forgotten = False
        self.entered = 0

    def enter_direct(self) -> Any:
        if self.rescue_pending:
            return None
        self.entered += 1
        return object()

    def leave_direct(self, token: Any) -> None:
        self.entered -= 1

    def polling(self) -> int:
        return 0

    def forget_reporters(self) -> None:
        self.forgotten = True


class _Serving:
    def __init__(self) -> None:
        self.fast = _Fast()
        self.polls: list[float] = []
        self.callbacks = CallbackQueue()
        self.serving = DirectServing(self.fast, self._poll, self.callbacks)

    def _poll(self, timeout: float) -> int:
        self.polls.append(timeout)
        return 0


class TestDriverServing:
    def test_the_driver_serves_only_while_the_application_does_not_poll(self) -> None:
        s = _Serving()
        s.serving.serve_for_tick()
        assert s.polls == []  # first tick: nothing known of the application's polls yet
        s.serving.serve_for_tick()
        assert s.polls == [0]  # no poll since the last tick: the driver serves
        s.fast.app_polls += 1
        s.serving.serve_for_tick()
        assert s.polls == [0]  # the application polled: its poll runs its callbacks
        s.fast.app_pollers = 1
        s.serving.serve_for_tick()
        assert s.polls == [0]  # it is waiting in poll()/flush() right now


class TestRescueQuiesce:
    def test_while_quiesced_librdkafkas_poll_is_not_entered(self) -> None:
        """A rescue collecting its purge reports: a flush round serves only the queued callbacks."""
        s = _Serving()
        s.serving.quiesce()
        assert s.fast.rescue_pending == 1
        s.serving.flush_wait(0)
        assert s.polls == []
        s.serving.resume()
        assert s.fast.rescue_pending == 0
        s.serving.flush_wait(0.2)
        assert s.polls == [0.2] and s.fast.entered == 0  # entered and left

    def test_queued_callbacks_run_first_and_then_the_poll_does_not_wait(self) -> None:
        s = _Serving()
        ran: list[int | None] = []

        def cb(err: KafkaError | None, msg: Message) -> None:
            ran.append(err.code() if err is not None else None)

        s.callbacks.put(cb, KafkaError(KafkaError._MSG_TIMED_OUT), Message(topic=TOPIC))
        s.serving.flush_wait(0.5)
        assert ran == [KafkaError._MSG_TIMED_OUT]
        assert s.polls == [0.0]  # a callback already ran: librdkafka's poll is not waited in


class TestClosing:
    def test_closing_stops_the_c_path_and_closed_drops_its_reporters(self) -> None:
        s = _Serving()
        s.serving.closing()
        assert s.fast.closed == 1 and not s.fast.forgotten
        s.serving.closed()
        assert s.fast.forgotten


class TestBuildFastPath:
    def test_the_python_hand_backs_are_set_before_anyone_holds_it(self) -> None:
        """The producer's fast path comes back with its slow poll/flush, pending count and inner flush set."""
        h = Harness()
        fast = h.producer._fast
        assert callable(fast.slow_poll) and callable(fast.slow_flush) and callable(fast.pending)
        assert callable(fast.inner_flush) and callable(fast.poll_error)
        h.produce(b"x")
        assert fast.pending() == len(h.producer) == 1
        h.close()
