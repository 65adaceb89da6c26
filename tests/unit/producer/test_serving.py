"""Who serves delivery reports (mutepro.producer.serving.DirectServing), over a stand-in for the C fast path's
state: the driver serves only while the application does not poll, a rescue keeps other threads out of
librdkafka's poll and lets them back, and closing tells the C path."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from mutepro.producer.callbacks import CallbackQueue
from mutepro.producer.serving import DirectServing


class Fast(SimpleNamespace):
    def __init__(self) -> None:
        super().__init__(app_polls=0, app_pollers=0, inline_pollers=0, rescue_pending=0, closed=0, events=0,
                         forgotten=False)  # fmt: skip

    def served_event(self) -> None:
        self.events += 1

    def forget_reporters(self) -> None:
        self.forgotten = True

    def polling(self) -> int:
        return 0


def serving() -> tuple[DirectServing, Any, list[float]]:
    fast, polls = Fast(), []

    def inner_poll(timeout: float) -> int:
        polls.append(timeout)
        return 0

    return DirectServing(fast, inner_poll, CallbackQueue()), fast, polls


class TestDriverServing:
    def test_the_driver_serves_while_the_application_does_not_poll(self) -> None:
        s, fast, polls = serving()
        s.serve_for_tick()  # first tick: the application's count is new to the driver
        fast.app_polls = 5
        s.serve_for_tick()  # the application polled since: its own poll serves
        s.serve_for_tick()  # it did not poll again: the driver serves
        assert polls == [0]

    def test_not_while_the_application_waits_in_poll(self) -> None:
        s, fast, polls = serving()
        s.serve_for_tick()
        fast.app_pollers = 1
        s.serve_for_tick()
        assert polls == []


class TestRescueAndClose:
    def test_a_rescue_keeps_polls_out_until_resumed(self) -> None:
        s, fast, _ = serving()
        s.quiesce()  # nobody inside a poll: returns at once
        assert fast.rescue_pending == 1
        s.resume()
        assert fast.rescue_pending == 0

    def test_closing_and_closed_reach_the_c_path(self) -> None:
        s, fast, _ = serving()
        s.closing()
        s.closed()
        assert fast.closed == 1 and fast.forgotten

    def test_an_event_without_a_callback_counts_in_the_c_poll(self) -> None:
        s, fast, _ = serving()
        s.served_event()
        assert fast.events == 1

    def test_not_nested_outside_a_callback(self) -> None:
        s, _, _ = serving()
        assert not s.nested()
