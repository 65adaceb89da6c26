"""MuteProducer's thread loops (mutepro.producer.threads), run here on the test's thread: a loop's failure is kept
and raised from the application's next poll()/flush(), a stopped loop ends, librdkafka's client callbacks reach
the driver, and no thread is started when the test drives the rounds itself."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from mutepro.errors import MuteproError
from mutepro.producer.threads import start_threads
from tests.unit._producer_fakes import Harness


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    with contextlib.suppress(MuteproError):  # a kept failure is raised by close()'s flush; it closes all the same
        harness.close()
    assert harness.fake.closed


class TestFailure:
    def test_a_kept_failure_breaks_the_c_path_and_is_raised_from_poll_and_flush(self, h: Harness) -> None:
        cause = ValueError("boom")
        h.producer._driver_failed(cause)
        assert h.producer._fast.broken == 1
        for call in (lambda: h.producer.poll(0), lambda: h.producer.flush(0)):
            with pytest.raises(MuteproError, match="driver thread failed: ValueError") as caught:
                call()
            assert caught.value.__cause__ is cause

    def test_the_driver_loop_keeps_its_rounds_exception(self, h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
        def fail(now: float) -> None:
            raise RuntimeError("round failed")

        monkeypatch.setattr(h.producer._driver_part, "tick", fail)
        h.producer._drive()  # returns: the exception ends the loop
        assert isinstance(h.producer._driver_error, RuntimeError)

    def test_the_metadata_loop_keeps_its_rounds_exception(
        self, h: Harness, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def fail(now: float) -> float:
            raise RuntimeError("metadata failed")

        monkeypatch.setattr(h.producer._driver_part, "load_metadata", fail)
        h.producer._core.metadata_wanted.set()  # a round is due now
        h.producer._metadata_loop()
        assert isinstance(h.producer._driver_error, RuntimeError)

    def test_no_failure_nothing_raised(self, h: Harness) -> None:
        assert h.producer._driver_error is None
        h.producer._raise_driver_error()


class TestStoppedLoops:
    def test_both_loops_end_once_stopped(self, h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
        rounds: list[float] = []
        monkeypatch.setattr(h.producer._driver_part, "tick", rounds.append)
        h.producer._stop.set()
        h.producer._core.metadata_wanted.set()
        h.producer._drive()
        h.producer._metadata_loop()
        assert rounds == [] and h.producer._driver_error is None
        h.producer._stop.clear()  # for close()

    def test_no_threads_when_the_test_drives_the_rounds(self, h: Harness) -> None:
        assert start_threads(h.producer, False) == [] and h.producer._threads == []


class TestClientCallbacks:
    def test_librdkafkas_callbacks_reach_the_driver(self, h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
        seen: list[tuple[str, Any]] = []
        for name in ("on_stats", "on_error", "on_throttle"):
            monkeypatch.setattr(h.producer._driver_part, name, lambda arg, n=name: seen.append((n, arg)))
        h.producer._on_stats("{}")
        h.producer._on_error("err")
        h.producer._on_throttle("event")
        assert seen == [("on_stats", "{}"), ("on_error", "err"), ("on_throttle", "event")]
