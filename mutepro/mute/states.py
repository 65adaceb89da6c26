"""The breaker's states, each one small immutable class holding its own data and saying how it reacts, used by
:class:`~mutepro.mute.breaker.MuteBreaker`.

:class:`Open`: the verdict, when it opened, opens in a row, the wait and ``retry_at``; :class:`HalfOpen`: its
probes; :class:`Closed`: its probation. Where each event leads is the table in :mod:`mutepro.mute.transitions`;
see the breaker module for the state machine as a whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar, NamedTuple

from mutepro.detect.model import Verdict
from mutepro.mute.transitions import BreakerEvent, BreakerState


class Timing(NamedTuple):
    """The breaker's configured waits, which a state needs to compute the next one."""

    retry_interval_s: float
    max_retry_interval_s: float
    backoff_multiplier: float
    half_open_probes: int
    #: the least time between two probe grants (0: all half_open_probes at once)
    probe_spacing_s: float = 0.0

    def backed_off(self, interval: float) -> float:
        """The next wait after ``interval``: multiplied, capped (5 s x 2 -> 10 s, ..., at most the cap)."""
        return min(interval * self.backoff_multiplier, self.max_retry_interval_s)


class Probation(NamedTuple):
    """After probes closed the breaker: until when a trip counts as the same fault coming back, and from where.

    ``until``: the close plus as long as the partition had been muted (a fault that lasted 6 s is believed over
    only after 6 s without it; at least the wait it last used). ``clear_since``: when the probes that closed it
    began -- every one of them passed, so the fault was away from then on -- so that a trip during probation
    tells how long the fault stayed away (see :attr:`Open.span`). ``episode``: when the fault first muted the
    partition.
    """

    until: float
    opens: int
    interval: float
    clear_since: float = 0.0
    episode: float = 0.0


@dataclass(frozen=True)
class State:
    """What a breaker in one state knows and how it reacts. Immutable: a change of data is a new state object
    (the breaker swaps it under its lock), so a state never writes to the breaker."""

    state: ClassVar[BreakerState]
    writable: ClassVar[bool] = False

    # the wait the breaker uses (or last used) in OPEN, after backoff; every state carries it for the record
    interval: float

    @property
    def reason(self) -> Verdict | None:
        return None

    @property
    def opened_at(self) -> float | None:
        return None

    @property
    def retry_at(self) -> float | None:
        return None

    @property
    def opens(self) -> int:
        return 0

    @property
    def probes_in_flight(self) -> int:
        return 0

    def on_trip(self) -> BreakerEvent | None:
        return None

    def on_tick(self, now: float) -> BreakerEvent | None:
        return None

    def try_probe(self, timing: Timing, now: float) -> State | None:
        """The state after granting one probe, or None when no probe may go."""
        return None

    def probe_wait(self, timing: Timing, now: float) -> float | None:
        """Seconds until :meth:`try_probe` could grant a probe (``inf``: not before a probe result); None: this
        state takes no probes."""
        return None

    def on_probe_result(self, ok: bool, timing: Timing) -> tuple[BreakerEvent | None, State]:
        return None, self  # a late result after the breaker moved on: ignored

    def on_probe_unsent(self) -> State:
        """The state after a granted probe never reached librdkafka (a full queue)."""
        return self  # the breaker moved on: nothing to give back

    def on_force(self) -> BreakerEvent | None:
        return BreakerEvent.FORCE

    def on_release(self) -> BreakerEvent | None:
        return None


@dataclass(frozen=True)
class Closed(State):
    """Writable; a trip opens it. ``probation`` is set when probes closed it (see the module docstring)."""

    state = BreakerState.CLOSED
    writable = True

    probation: Probation | None = None

    def on_trip(self) -> BreakerEvent | None:
        return BreakerEvent.TRIP

    @classmethod
    def entered(cls, source: State, now: float, timing: Timing) -> Closed:
        if isinstance(source, HalfOpen):
            # closed by its probes: on probation for as long as the fault had kept it muted
            episode = source.episode if source.episode is not None else (source.since or now)
            until = now + max(source.interval, now - episode)
            clear_since = source.probing_since if source.probing_since is not None else now
            return cls(timing.retry_interval_s, Probation(until, source.opens, source.interval, clear_since, episode))
        return cls(timing.retry_interval_s)


@dataclass(frozen=True)
class _Muted(State):
    """The data every not-writable state has: why, since when, and how many opens in a row."""

    why: Verdict | None
    since: float | None
    count: int

    @property
    def reason(self) -> Verdict | None:
        return self.why

    @property
    def opened_at(self) -> float | None:
        return self.since

    @property
    def opens(self) -> int:
        return self.count


@dataclass(frozen=True)
class Open(_Muted):
    """Muted until ``retry_at``; trips are ignored (already open)."""

    state = BreakerState.OPEN

    until: float | None
    #: how long the next probes must span (0: the configured spacing decides), see :meth:`entered`
    span: float = 0.0
    #: when the fault first muted the partition (kept across re-mutes and probation)
    episode: float | None = None
    #: rearmed after its leader was elected again (see :meth:`rearmed`): its next probes are held to the slow
    #: threshold, not the probe limit
    rejoined: bool = False

    @property
    def retry_at(self) -> float | None:
        return self.until

    def on_tick(self, now: float) -> BreakerEvent | None:
        return BreakerEvent.RETRY_DUE if self.until is not None and now >= self.until else None

    def rearmed(self, timing: Timing, now: float) -> Open:
        """The same mute waiting ``retry_interval_s`` from ``now``, its backoff started over (see
        :meth:`~mutepro.mute.breaker.MuteBreaker.rearm`)."""
        return replace(self, interval=timing.retry_interval_s, until=now + timing.retry_interval_s, rejoined=True)

    @classmethod
    def entered(cls, source: State, now: float, reason: Verdict | None, timing: Timing) -> Open:
        span, episode = 0.0, now
        if isinstance(source, HalfOpen):
            # Failed again after a retry: wait longer. 1 s x 2 -> 2 s, ..., capped at max_retry_interval_s.
            opens, interval = source.opens + 1, timing.backed_off(source.interval)
            span, episode = source.span, source.episode if source.episode is not None else now
        elif isinstance(source, Closed) and source.probation is not None and now < source.probation.until:
            # The fault came back while on probation: as if its probes had failed, and now we know how long it
            # stays away: at least from when the probes that closed it began (all passed) to this trip. The next
            # probes must span that gap plus two probe spacings, so that one of them lands in its next stop.
            # Worked numbers, a broker stopped 2 s of every 4 s (recorded, limp_long_open): muted in a stop,
            # probing from 12.7 in the up-time, closed at 13.75, tripped again at 15.06, 0.46 s into the next
            # stop: gap 2.36 s, the next five probes span 2.86 s (0.57 s apart) -- more than the 2 s up-time, so
            # one lands in a stop. Measured from the close instead (gap 1.31 s, span 1.81 s) all five fitted in
            # the next up-time, and the partition came back and was muted again once more.
            opens, interval = source.probation.opens + 1, timing.backed_off(source.probation.interval)
            gap = now - source.probation.clear_since
            span, episode = gap + 2 * timing.probe_spacing_s, source.probation.episode
        else:
            opens, interval = 1, timing.retry_interval_s
        why = reason if reason is not None else source.reason  # a probe failure keeps the verdict that opened it
        return cls(interval, why, now, opens, now + interval, span, episode)


@dataclass(frozen=True)
class HalfOpen(_Muted):
    """Not writable, but lets up to ``half_open_probes`` probes through."""

    state = BreakerState.HALF_OPEN

    in_flight: int = 0
    successes: int = 0
    last_probe_at: float | None = None
    span: float = 0.0  # see Open.span
    episode: float | None = None
    #: when the wait ended and probing began (None: adopted from another process's record, time unknown)
    probing_since: float | None = None
    rejoined: bool = False  # see Open.rejoined

    def spacing(self, timing: Timing) -> float:
        """The least time between two probes: the configured spacing, or wider so that the probes span
        :attr:`span` (a fault that came back after a gap)."""
        return max(timing.probe_spacing_s, self.span / timing.half_open_probes)

    @property
    def probes_in_flight(self) -> int:
        return self.in_flight

    def on_trip(self) -> BreakerEvent | None:
        return BreakerEvent.TRIP

    def try_probe(self, timing: Timing, now: float) -> State | None:
        # Grant at most half_open_probes in total: successes already in plus probes still in flight.
        if self.successes + self.in_flight >= timing.half_open_probes:
            return None
        # Spaced out, so the probes sample the partition over time, not one instant: a broker stopped 0.8 s of
        # every second answers five probes sent together within its 0.2 s up-time (all pass, it flaps back in);
        # five sent 250 ms apart span a whole second, and one of them lands in a stop.
        if self.last_probe_at is not None and now - self.last_probe_at < self.spacing(timing):
            return None
        return replace(self, in_flight=self.in_flight + 1, last_probe_at=now)

    def probe_wait(self, timing: Timing, now: float) -> float | None:
        # the same two conditions as try_probe, as a time: every slot taken waits for a result, not for time
        if self.successes + self.in_flight >= timing.half_open_probes:
            return math.inf
        if self.last_probe_at is None:
            return 0.0
        return max(0.0, self.last_probe_at + self.spacing(timing) - now)

    def on_probe_result(self, ok: bool, timing: Timing) -> tuple[BreakerEvent | None, State]:
        in_flight = max(0, self.in_flight - 1)
        if not ok:
            return BreakerEvent.PROBE_FAILED, replace(self, in_flight=in_flight)
        after = replace(self, in_flight=in_flight, successes=self.successes + 1)
        return (BreakerEvent.PROBES_PASSED if after.successes >= timing.half_open_probes else None), after

    def on_probe_unsent(self) -> State:
        # The slot goes back. Kept, it would count as a probe in flight forever: with every slot taken by sends
        # that met a full queue, no probe goes and nothing is outstanding to judge, so the partition stayed
        # half-open for the rest of the run (RF=3 acks=all, broker stalled: 4 of 12 still muted 20 s after).
        return replace(self, in_flight=max(0, self.in_flight - 1))

    @classmethod
    def entered(cls, source: State, now: float) -> HalfOpen:
        if isinstance(source, Open):
            return cls(source.interval, source.reason, source.opened_at, source.opens, span=source.span,
                       episode=source.episode, probing_since=now, rejoined=source.rejoined)
        return cls(source.interval, source.reason, source.opened_at, source.opens, probing_since=now)


@dataclass(frozen=True)
class ForcedOpen(_Muted):
    """Manually muted: ignores trips, ticks and probes; only ``release`` closes it."""

    state = BreakerState.FORCED_OPEN

    def on_force(self) -> BreakerEvent | None:
        return None

    def on_release(self) -> BreakerEvent | None:
        return BreakerEvent.RELEASE

    @classmethod
    def entered(cls, source: State, now: float, reason: Verdict | None) -> ForcedOpen:
        return cls(source.interval, reason, now, source.opens)


def entered_state(target: BreakerState, source: State, now: float, reason: Verdict | None, timing: Timing) -> State:
    """The state a transition to ``target`` lands in, built from the state it leaves."""
    if target is BreakerState.CLOSED:
        return Closed.entered(source, now, timing)
    if target is BreakerState.OPEN:
        return Open.entered(source, now, reason, timing)
    if target is BreakerState.HALF_OPEN:
        return HalfOpen.entered(source, now)
    return ForcedOpen.entered(source, now, reason)


def adopted_state(
    target: BreakerState,
    current: State,
    reason: Verdict | None,
    opened_at: float | None,
    retry_at: float | None,
    opens: int,
    interval: float,
) -> State:
    """The state another process's record describes (same state: its probes in flight are kept)."""
    if target is BreakerState.CLOSED:
        probation = current.probation if isinstance(current, Closed) else None
        return Closed(interval, probation)
    if target is BreakerState.OPEN:
        return Open(interval, reason, opened_at, opens, retry_at)
    if target is BreakerState.HALF_OPEN:
        if isinstance(current, HalfOpen):
            return replace(current, interval=interval, why=reason, since=opened_at, count=opens)
        return HalfOpen(interval, reason, opened_at, opens)
    return ForcedOpen(interval, reason, opened_at, opens)
