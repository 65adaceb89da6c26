"""MuteBreaker: the state machine, backoff, probes, forced mute, snapshots, settings."""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError
from typing import Any

import pytest

from mutepro.detect.model import Verdict
from mutepro.errors import ConfigError
from mutepro.mute.breaker import (
    BreakerSnapshot,
    BreakerState,
    Transition,
)
from tests.unit.mute._breakers import FAILING, SLOW, S, World, make, to_half_open


class TestClosed:
    def test_starts_closed_and_writable(self, world: World) -> None:
        """A new breaker lets messages through."""
        b = make(world)
        assert (b.state, b.writable, b.reason, b.opened_at, b.retry_at, b.opens) == (
            S.CLOSED,
            True,
            None,
            None,
            None,
            0,
        )

    def test_trip_opens_with_retry_time(self, world: World) -> None:
        """trip() opens the breaker until now + retry_interval_s, keeping the verdict."""
        seen: list[Transition] = []
        b = make(world, seen=seen)
        now = b._clock()
        assert b.trip(SLOW) is True
        assert (b.state, b.writable, b.reason, b.opened_at, b.retry_at, b.opens) == (
            S.OPEN,
            False,
            SLOW,
            now,
            now + 5.0,
            1,
        )
        assert seen == [Transition("orders-3", S.CLOSED, S.OPEN, now, SLOW)]

    def test_probe_not_granted_when_closed(self, world: World) -> None:
        """Probes only exist in HALF_OPEN."""
        assert make(world).try_probe() is False

    def test_late_probe_result_is_ignored(self, world: World) -> None:
        """A probe result arriving after the breaker closed changes nothing."""
        seen: list[Transition] = []
        b = make(world, seen=seen)
        b.probe_result(False)
        assert (b.state, seen) == (S.CLOSED, [])


class TestOpen:
    def test_trip_when_open_is_refused(self, world: World) -> None:
        """A second verdict does not re-open or replace the reason."""
        b = make(world)
        b.trip(SLOW)
        retry_at = b.retry_at
        world.advance(1)
        assert b.trip(FAILING) is False
        assert (b.reason, b.retry_at) == (SLOW, retry_at)

    def test_tick_before_retry_keeps_open(self, world: World) -> None:
        """Just before retry_at the breaker stays open."""
        b = make(world)
        b.trip(SLOW)
        world.advance(4.999)
        b.tick()
        assert b.state is S.OPEN

    def test_tick_at_retry_goes_half_open(self, world: World) -> None:
        """At exactly retry_at the breaker goes half-open (still not writable)."""
        seen: list[Transition] = []
        b = make(world, seen=seen)
        b.trip(SLOW)
        world.advance(5.0)
        b.tick()
        assert (b.state, b.writable, b.retry_at) == (S.HALF_OPEN, False, None)
        assert seen[-1].source is S.OPEN and seen[-1].target is S.HALF_OPEN and seen[-1].reason == SLOW


class TestHalfOpen:
    def test_grants_up_to_probe_count(self, world: World) -> None:
        """Two probes may be in flight, the third is refused."""
        b = make(world)
        to_half_open(b, world)
        assert [b.try_probe(), b.try_probe(), b.try_probe()] == [True, True, False]
        assert b.probes_in_flight == 2

    def test_a_probe_that_was_not_sent_gives_its_slot_back(self, world: World) -> None:
        """A granted probe whose send met a full queue frees its slot; elsewhere than half-open it is a no-op."""
        b = make(world)
        to_half_open(b, world)
        assert [b.try_probe(), b.try_probe()] == [True, True]
        b.probe_unsent()
        assert b.probes_in_flight == 1 and b.try_probe() is True
        closed = make(world)
        closed.probe_unsent()
        assert closed.state is S.CLOSED and closed.probes_in_flight == 0

    def test_probe_successes_close_and_reset_backoff(self, world: World) -> None:
        """half_open_probes successes close the breaker and reset backoff and reason."""
        b = make(world)
        to_half_open(b, world)
        b.probe_result(False)  # opens with 10 s
        to_half_open(b, world)
        b.try_probe()
        b.try_probe()
        b.probe_result(True)
        assert b.state is S.HALF_OPEN
        b.probe_result(True)
        assert (b.state, b.writable, b.reason, b.opens, b.current_retry_interval_s) == (
            S.CLOSED,
            True,
            None,
            0,
            5.0,
        )

    def test_probe_wait_says_when_the_next_probe_could_go(self, world: World) -> None:
        """None outside half-open; 0 before the first probe; the rest of probe_spacing_s after one; inf while
        every slot is taken (a success still counts against them); None again once a failure re-opens it."""
        b = make(world, probe_spacing_s=0.25)
        assert b.probe_wait() is None
        to_half_open(b, world)
        assert b.probe_wait() == 0.0 and b.try_probe() is True
        world.advance(0.1)
        assert b.probe_wait() == pytest.approx(0.15)
        world.advance(0.15)
        assert b.probe_wait() == 0.0 and b.try_probe() is True
        assert b.probe_wait() == math.inf
        b.probe_result(True)
        assert b.probe_wait() == math.inf
        b.probe_result(False)
        assert b.state is S.OPEN and b.probe_wait() is None

    def test_success_frees_no_extra_probe_slot(self, world: World) -> None:
        """After one success only one more probe is granted (2 in total are needed)."""
        b = make(world)
        to_half_open(b, world)
        b.try_probe()
        b.probe_result(True)
        assert [b.try_probe(), b.try_probe()] == [True, False]

    def test_probe_failure_reopens_with_backoff(self, world: World) -> None:
        """One failed probe re-opens with the interval doubled, keeping the original verdict."""
        b = make(world)
        to_half_open(b, world)
        b.try_probe()
        now = b._clock()
        b.probe_result(False)
        assert (b.state, b.retry_at, b.opens, b.reason) == (S.OPEN, now + 10.0, 2, SLOW)

    def test_backoff_is_capped(self, world: World) -> None:
        """5, 10, 20, 40, then capped at 60 s."""
        b = make(world)
        b.trip(SLOW)
        waits = [b.current_retry_interval_s]
        for _ in range(5):
            to_half_open(b, world)
            b.probe_result(False)
            waits.append(b.current_retry_interval_s)
        assert waits == [5.0, 10.0, 20.0, 40.0, 60.0, 60.0]

    def test_rearm_restarts_the_backoff_from_now(self, world: World) -> None:
        """Open after two failed rounds (a 20 s wait), rearmed 3 s in: the base 5 s from now, same verdict, still
        open; the next failure doubles from the base again (10 s). In any other state rearm changes nothing."""
        b = make(world)
        for _ in range(2):
            to_half_open(b, world)
            b.probe_result(False)
        assert b.current_retry_interval_s == 20.0
        world.advance(3.0)
        now = b._clock()
        assert b.rejoined is False and b.rearm() is True
        assert (b.state, b.retry_at, b.current_retry_interval_s, b.reason) == (S.OPEN, now + 5.0, 5.0, SLOW)
        assert b.rejoined is True
        to_half_open(b, world)
        assert b.rearm() is False and b.state is S.HALF_OPEN and b.rejoined is True
        b.probe_result(False)
        assert b.current_retry_interval_s == 10.0 and b.rejoined is False  # a failed round ends it
        closed = make(world)
        assert closed.rearm() is False and closed.state is S.CLOSED

    def test_trip_in_half_open_reopens_with_new_reason(self, world: World) -> None:
        """A detector verdict during half-open counts as a failure: backoff and the new reason."""
        b = make(world)
        to_half_open(b, world)
        assert b.trip(FAILING) is True
        assert (b.state, b.reason, b.current_retry_interval_s) == (S.OPEN, FAILING, 10.0)

    @pytest.mark.parametrize(("after", "expected"), [(14.9, (3, 20.0)), (15.0, (1, 5.0))], ids=["on", "after"])
    def test_closing_after_backoff_restarts_at_base_interval(
        self, world: World, after: float, expected: tuple[int, float]
    ) -> None:
        """After a close and its probation (as long as the fault kept it muted: 5 s + 10 s), the next trip waits the
        base interval; within it, the backoff goes on (opens continue from the last, 10 s -> 20 s)."""
        b = make(world, half_open_probes=1)
        to_half_open(b, world)
        b.probe_result(False)
        to_half_open(b, world)
        b.try_probe()
        b.probe_result(True)
        world.advance(after)
        assert b.trip(SLOW) is True
        assert (b.opens, b.current_retry_interval_s) == expected

    def test_a_trip_on_probation_continues_the_backoff(self, world: World) -> None:
        """Closed by its probes after a 10 s wait, tripped again 3 s later: it waits 20 s, as if a probe had
        failed (a limping partition stops flapping); the event is still a trip from CLOSED."""
        b = make(world, half_open_probes=1)
        to_half_open(b, world)
        b.probe_result(False)  # now waiting 10 s
        to_half_open(b, world)
        b.try_probe()
        b.probe_result(True)
        assert b.state is S.CLOSED
        world.advance(3.0)
        assert b.trip(SLOW) is True
        assert (b.state, b.opens, b.current_retry_interval_s) == (S.OPEN, 3, 20.0)

    def test_probation_only_follows_a_close_by_probes(self, world: World) -> None:
        """A breaker released by hand (forced open, then release) starts fresh: base interval."""
        b = make(world)
        b.force_open()
        b.release()
        b.trip(SLOW)
        assert (b.opens, b.current_retry_interval_s) == (1, 5.0)


class TestForcedOpen:
    @pytest.mark.parametrize("start", [S.CLOSED, S.OPEN, S.HALF_OPEN])
    def test_force_from_any_state(self, world: World, start: BreakerState) -> None:
        """force_open() mutes from closed, open and half-open."""
        b = make(world)
        if start is S.OPEN:
            b.trip(SLOW)
        elif start is S.HALF_OPEN:
            to_half_open(b, world)
        b.force_open()
        assert (b.state, b.writable, b.reason, b.retry_at) == (S.FORCED_OPEN, False, Verdict("manual"), None)

    def test_note_kept_in_reason(self, world: World) -> None:
        """A free-text reason is kept as the verdict's note."""
        b = make(world)
        b.force_open("broker 3 maintenance")
        assert b.reason == Verdict("manual", {"note": "broker 3 maintenance"})

    def test_ignores_trips_ticks_and_probes(self, world: World) -> None:
        """Forced open stays forced whatever happens, however long."""
        seen: list[Transition] = []
        b = make(world, seen=seen)
        b.force_open()
        assert b.trip(SLOW) is False
        world.advance(3600)
        b.tick()
        assert b.try_probe() is False
        b.probe_result(True)
        assert (b.state, len(seen)) == (S.FORCED_OPEN, 1)

    def test_release_closes(self, world: World) -> None:
        """release() closes a forced breaker."""
        b = make(world)
        b.force_open()
        b.release()
        assert (b.state, b.writable, b.reason) == (S.CLOSED, True, None)

    def test_release_only_affects_forced(self, world: World) -> None:
        """release() on an automatically opened breaker does nothing."""
        b = make(world)
        b.trip(SLOW)
        b.release()
        assert b.state is S.OPEN

    def test_force_twice_is_one_transition(self, world: World) -> None:
        """A second force_open() does not emit another transition."""
        seen: list[Transition] = []
        b = make(world, seen=seen)
        b.force_open()
        b.force_open("again")
        assert len(seen) == 1 and b.reason == Verdict("manual")


class TestSnapshot:
    def test_snapshot_copies_state(self, world: World) -> None:
        """snapshot() is a frozen copy of the current state."""
        b = make(world)
        b.trip(SLOW)
        snap = b.snapshot()
        assert snap == BreakerSnapshot("orders-3", S.OPEN, SLOW, b.opened_at, b.retry_at, 1)
        assert snap.writable is False
        with pytest.raises(FrozenInstanceError):
            snap.opens = 3  # type: ignore[misc]


class TestConfig:
    @pytest.mark.parametrize(
        ("kw", "field"),
        [
            ({"retry_interval_s": 0}, "retry_interval_s"),
            ({"max_retry_interval_s": 1.0}, "max_retry_interval_s"),
            ({"backoff_multiplier": 0.5}, "backoff_multiplier"),
            ({"half_open_probes": 0}, "half_open_probes"),
            ({"sync_interval_s": -1}, "sync_interval_s"),
        ],
    )
    def test_rejects_bad_settings(self, world: World, kw: dict[str, Any], field: str) -> None:
        """Invalid settings are ConfigErrors naming the field."""
        with pytest.raises(ConfigError, match=field):
            make(world, **kw)
