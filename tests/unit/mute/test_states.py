"""The breaker's states, each holding its own data (mutepro.mute.states)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from mutepro.mute.breaker import (
    Closed,
    HalfOpen,
    MuteBreaker,
    Open,
)
from tests.unit.mute._breakers import SLOW, World, make, to_half_open


class TestStatesOwnTheirData:
    TIMING_ARGS = {"retry_interval_s": 5.0, "max_retry_interval_s": 60.0, "backoff_multiplier": 2.0,
                   "half_open_probes": 2}

    def test_open_holds_its_wait(self, world: World) -> None:
        """After a trip the breaker's state object is an Open carrying the verdict, the opens and the retry time."""
        b = make(world)
        b.trip(SLOW)
        state = b._state
        assert isinstance(state, Open)
        assert (state.reason, state.opens, state.interval, state.retry_at) == (SLOW, 1, 5.0, b.opened_at + 5.0)

    def test_states_are_immutable(self, world: World) -> None:
        """Granting a probe makes a new HalfOpen; the previous state object is left as it was."""
        b = make(world)
        to_half_open(b, world)
        before = b._state
        assert isinstance(before, HalfOpen)
        assert b.try_probe()
        assert before.probes_in_flight == 0 and b._state.probes_in_flight == 1
        with pytest.raises(FrozenInstanceError):
            before.in_flight = 5  # type: ignore[misc]

    def test_failed_probe_backs_off_from_the_half_open_data(self, world: World) -> None:
        """Open.entered from a HalfOpen doubles its wait and counts one more open, keeping the verdict."""
        timing = MuteBreaker("x", clock=world.wall_clock, **self.TIMING_ARGS)._timing
        half = HalfOpen(10.0, SLOW, 100.0, 2, in_flight=1)
        opened = Open.entered(half, 130.0, None, timing)
        assert (opened.interval, opened.opens, opened.reason, opened.retry_at) == (20.0, 3, SLOW, 150.0)

    def test_probation_lives_in_closed(self, world: World) -> None:
        """Probes closing the breaker leave a Closed with probation; a plain Closed has none."""
        b = make(world)
        assert b._state == Closed(5.0)
        to_half_open(b, world)
        b.try_probe()
        b.probe_result(True)
        b.try_probe()
        b.probe_result(True)
        assert isinstance(b._state, Closed) and b._state.probation is not None
        assert b._state.probation.interval == 5.0

    def test_a_trip_on_probation_spans_the_gap_from_when_the_passing_probes_began(self, world: World) -> None:
        """The probes that closed it all passed, so the fault was away from their start: a trip on probation
        spans the next probes over that gap plus two spacings. Recorded limp (stopped 2 s of every 4 s):
        probing from 12.7, closed 13.75, tripped 15.06 -> gap 2.36 s, span 2.86 s, longer than the 2 s up-time;
        measured from the close (1.31 s, span 1.81 s) five probes fitted in one up-time and it flapped again."""
        timing = MuteBreaker("x", clock=world.wall_clock, retry_interval_s=1.0, max_retry_interval_s=4.0,
                             backoff_multiplier=2.0, half_open_probes=5, probe_spacing_s=0.25)._timing
        passing = HalfOpen(1.0, SLOW, 11.7, 1, successes=5, episode=11.7, probing_since=12.7)
        closed = Closed.entered(passing, 13.75, timing)
        assert closed.probation is not None and closed.probation.clear_since == 12.7
        reopened = Open.entered(closed, 15.06, SLOW, timing)
        assert reopened.span == pytest.approx(2.36 + 2 * 0.25)
        assert HalfOpen.entered(reopened, 17.06).spacing(timing) == pytest.approx(2.86 / 5)
