"""The per-partition (or per-broker) mute breaker: closed / open / half-open / forced-open.

The state machine follows resilience4j's CircuitBreakerStateMachine and pybreaker, reduced to what muting
needs:

* CLOSED — the partition is writable; a detector verdict (``trip``) opens it;
* OPEN — muted until ``retry_at``; ``tick`` then moves it to HALF_OPEN;
* HALF_OPEN — still not writable, but ``try_probe`` grants up to ``half_open_probes`` probe messages in
  flight; that many successes close it, any failure opens it again with the retry interval multiplied by
  ``backoff_multiplier`` (capped at ``max_retry_interval_s``). Example: 5 s, x2, cap 60 s gives waits of
  5, 10, 20, 40, 60, 60 ... for consecutive failed probes; closing resets it to 5 s -- unless the breaker
  trips again while on *probation*, i.e. within the interval it last waited after probes closed it: then the
  backoff goes on (a limping broker whose probes happen to land in a good moment would otherwise flap
  muted/unmuted every few seconds, exposing a slice of traffic to it each time);
* FORCED_OPEN — a manual mute: ignores trips, ticks and probes until ``release``.

The transitions are data (:data:`TRANSITIONS`, a ``(state, event) -> state`` table); each state is one small
immutable class holding its own data (:class:`Open`: the verdict, when it opened, opens in a row, the wait and
``retry_at``; :class:`HalfOpen`: its probes; :class:`Closed`: its probation) and saying how it reacts; the breaker
only swaps state objects. Timing uses the injected monotonic ``clock``, never pybreaker's.

pybreaker provides the storage and listeners: every breaker wraps a :class:`pybreaker.CircuitBreaker` whose
storage comes from the :class:`~mutepro.mute.store.BreakerStore`, and every transition is mirrored into it
(``open()`` / ``half_open()`` / ``close()``; FORCED_OPEN shows as open), so the storage — memory, or
:class:`pybreaker.CircuitRedisStorage` — always holds the current coarse state, and pybreaker listeners passed
in ``listeners`` hear about it.

Shared state: every transition also publishes a full record (state, reason, ``opened_at_epoch``,
``retry_at_epoch``, backoff) to the store with a Lamport-style ``version``. ``tick()`` reads the record and
adopts a newer one written by another process — same state, same reason, same retry time converted from
wall-clock epoch seconds to this process's monotonic clock — so one Spark executor's detection mutes the
partition for every executor. Ties (two processes publishing the same version) resolve to whatever the store
holds: last writer wins and everybody converges on it. If the store fails, the breaker carries on with its
local state and logs.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from types import MappingProxyType
from typing import ClassVar, NamedTuple

import pybreaker

from mutepro.detect.model import MuteReason, Verdict
from mutepro.errors import ConfigError
from mutepro.logs import get_logger
from mutepro.mute.store import BreakerStore, MemoryStore, StoreError

log = get_logger("mutepro.mute")

Clock = Callable[[], float]


class BreakerState(StrEnum):
    """Where a breaker stands; only CLOSED lets messages through."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"
    FORCED_OPEN = "forced_open"


class BreakerEvent(StrEnum):
    """What can happen to a breaker; :data:`TRANSITIONS` says where each leads from each state."""

    TRIP = "trip"  # a detector verdict
    RETRY_DUE = "retry_due"  # the open wait elapsed
    PROBES_PASSED = "probes_passed"  # half_open_probes probes succeeded
    PROBE_FAILED = "probe_failed"
    FORCE = "force"  # manual mute
    RELEASE = "release"  # manual unmute
    ADOPT_CLOSED = "adopt_closed"  # another process's newer record, by its state
    ADOPT_OPEN = "adopt_open"
    ADOPT_HALF_OPEN = "adopt_half_open"
    ADOPT_FORCED_OPEN = "adopt_forced_open"


_ADOPT = {
    BreakerState.CLOSED: BreakerEvent.ADOPT_CLOSED,
    BreakerState.OPEN: BreakerEvent.ADOPT_OPEN,
    BreakerState.HALF_OPEN: BreakerEvent.ADOPT_HALF_OPEN,
    BreakerState.FORCED_OPEN: BreakerEvent.ADOPT_FORCED_OPEN,
}


def _table() -> Mapping[tuple[BreakerState, BreakerEvent], BreakerState]:
    s, e = BreakerState, BreakerEvent
    table = {
        (s.CLOSED, e.TRIP): s.OPEN,
        (s.HALF_OPEN, e.TRIP): s.OPEN,
        (s.OPEN, e.RETRY_DUE): s.HALF_OPEN,
        (s.HALF_OPEN, e.PROBES_PASSED): s.CLOSED,
        (s.HALF_OPEN, e.PROBE_FAILED): s.OPEN,
        (s.CLOSED, e.FORCE): s.FORCED_OPEN,
        (s.OPEN, e.FORCE): s.FORCED_OPEN,
        (s.HALF_OPEN, e.FORCE): s.FORCED_OPEN,
        (s.FORCED_OPEN, e.RELEASE): s.CLOSED,
    }
    # Another process's record can move a breaker from any state to any other.
    for source in BreakerState:
        for target, event in _ADOPT.items():
            if source is not target:
                table[(source, event)] = target
    return MappingProxyType(table)


TRANSITIONS: Mapping[tuple[BreakerState, BreakerEvent], BreakerState] = _table()


class PartitionKey(NamedTuple):
    """The partition a breaker guards, as a value: ``key.topic``, ``key.partition``, or unpacked as a pair.

    ``str(key)`` (``"orders/3"``) is the breaker's name and its key in the shared store; it is written, never
    parsed back.
    """

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}/{self.partition}"


@dataclass(frozen=True)
class Transition:
    """One state change, as passed to ``on_transition``. ``at`` is on the breaker's monotonic clock; ``key`` is the
    breaker's partition when it was built for one (``None`` for a breaker built with a plain name)."""

    name: str
    source: BreakerState
    target: BreakerState
    at: float
    reason: Verdict | None
    remote: bool = False  # adopted from another process's record
    key: PartitionKey | None = None


@dataclass(frozen=True)
class BreakerSnapshot:
    """An immutable view of one breaker. ``opens`` counts consecutive opens since it was last closed."""

    name: str
    state: BreakerState
    reason: Verdict | None
    opened_at: float | None
    retry_at: float | None
    opens: int

    @property
    def writable(self) -> bool:
        """Only a closed breaker lets messages through."""
        return self.state is BreakerState.CLOSED


# -- the states, each with its own data -----------------------------------------------------------------------


class _Timing(NamedTuple):
    """The breaker's configured waits, which a state needs to compute the next one."""

    retry_interval_s: float
    max_retry_interval_s: float
    backoff_multiplier: float
    half_open_probes: int

    def backed_off(self, interval: float) -> float:
        """The next wait after ``interval``: multiplied, capped (5 s x 2 -> 10 s, ..., at most the cap)."""
        return min(interval * self.backoff_multiplier, self.max_retry_interval_s)


class _Probation(NamedTuple):
    """After probes closed the breaker: until when a trip continues the backoff, and from where."""

    until: float
    opens: int
    interval: float


@dataclass(frozen=True)
class _State:
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

    def try_probe(self, timing: _Timing) -> _State | None:
        """The state after granting one probe, or None when no probe may go."""
        return None

    def on_probe_result(self, ok: bool, timing: _Timing) -> tuple[BreakerEvent | None, _State]:
        return None, self  # a late result after the breaker moved on: ignored

    def on_force(self) -> BreakerEvent | None:
        return BreakerEvent.FORCE

    def on_release(self) -> BreakerEvent | None:
        return None


@dataclass(frozen=True)
class Closed(_State):
    """Writable; a trip opens it. ``probation`` is set when probes closed it (see the module docstring)."""

    state = BreakerState.CLOSED
    writable = True

    probation: _Probation | None = None

    def on_trip(self) -> BreakerEvent | None:
        return BreakerEvent.TRIP

    @classmethod
    def entered(cls, source: _State, now: float, timing: _Timing) -> Closed:
        if isinstance(source, HalfOpen):
            # closed by its probes: on probation for as long as it last waited
            return cls(timing.retry_interval_s, _Probation(now + source.interval, source.opens, source.interval))
        return cls(timing.retry_interval_s)


@dataclass(frozen=True)
class _Muted(_State):
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

    @property
    def retry_at(self) -> float | None:
        return self.until

    def on_tick(self, now: float) -> BreakerEvent | None:
        return BreakerEvent.RETRY_DUE if self.until is not None and now >= self.until else None

    @classmethod
    def entered(cls, source: _State, now: float, reason: Verdict | None, timing: _Timing) -> Open:
        if isinstance(source, HalfOpen):
            # Failed again after a retry: wait longer. 5 s x 2 -> 10 s, ..., capped at max_retry_interval_s.
            opens, interval = source.opens + 1, timing.backed_off(source.interval)
        elif isinstance(source, Closed) and source.probation is not None and now < source.probation.until:
            # Tripped again while on probation: as if its probes had failed. Worked numbers, retry 2 s x 2: a
            # limp closes it at t=22.8 after a 2 s wait, it trips at 23.6 (< 24.8): this time it waits 4 s.
            opens, interval = source.probation.opens + 1, timing.backed_off(source.probation.interval)
        else:
            opens, interval = 1, timing.retry_interval_s
        why = reason if reason is not None else source.reason  # a probe failure keeps the verdict that opened it
        return cls(interval, why, now, opens, now + interval)


@dataclass(frozen=True)
class HalfOpen(_Muted):
    """Not writable, but lets up to ``half_open_probes`` probes through."""

    state = BreakerState.HALF_OPEN

    in_flight: int = 0
    successes: int = 0

    @property
    def probes_in_flight(self) -> int:
        return self.in_flight

    def on_trip(self) -> BreakerEvent | None:
        return BreakerEvent.TRIP

    def try_probe(self, timing: _Timing) -> _State | None:
        # Grant at most half_open_probes in total: successes already in plus probes still in flight.
        if self.successes + self.in_flight >= timing.half_open_probes:
            return None
        return replace(self, in_flight=self.in_flight + 1)

    def on_probe_result(self, ok: bool, timing: _Timing) -> tuple[BreakerEvent | None, _State]:
        in_flight = max(0, self.in_flight - 1)
        if not ok:
            return BreakerEvent.PROBE_FAILED, replace(self, in_flight=in_flight)
        after = replace(self, in_flight=in_flight, successes=self.successes + 1)
        return (BreakerEvent.PROBES_PASSED if after.successes >= timing.half_open_probes else None), after

    @classmethod
    def entered(cls, source: _State) -> HalfOpen:
        return cls(source.interval, source.reason, source.opened_at, source.opens)


@dataclass(frozen=True)
class ForcedOpen(_Muted):
    """Manually muted: ignores trips, ticks and probes; only ``release`` closes it."""

    state = BreakerState.FORCED_OPEN

    def on_force(self) -> BreakerEvent | None:
        return None

    def on_release(self) -> BreakerEvent | None:
        return BreakerEvent.RELEASE

    @classmethod
    def entered(cls, source: _State, now: float, reason: Verdict | None) -> ForcedOpen:
        return cls(source.interval, reason, now, source.opens)


def _entered(target: BreakerState, source: _State, now: float, reason: Verdict | None, timing: _Timing) -> _State:
    """The state a transition to ``target`` lands in, built from the state it leaves."""
    if target is BreakerState.CLOSED:
        return Closed.entered(source, now, timing)
    if target is BreakerState.OPEN:
        return Open.entered(source, now, reason, timing)
    if target is BreakerState.HALF_OPEN:
        return HalfOpen.entered(source)
    return ForcedOpen.entered(source, now, reason)


def _adopted(
    target: BreakerState,
    current: _State,
    reason: Verdict | None,
    opened_at: float | None,
    retry_at: float | None,
    opens: int,
    interval: float,
) -> _State:
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


# -- the breaker ---------------------------------------------------------------------------------


class MuteBreaker:
    """One breaker for one partition (or broker). Thread-safe; every method is O(1) plus one store round trip
    for ``tick`` (when a sync is due) and for each transition.

    ``clock`` is monotonic seconds (local timing); ``wall_clock`` is epoch seconds (shared records only).
    ``sync_interval_s`` limits how often ``tick`` reads the shared record (0 = every tick): with Redis and a
    few hundred partitions ticked every 100 ms, 1 s keeps it to a few hundred GETs a second. Call ``tick()``
    once after construction to pick up state other processes already published. ``name`` is a
    :class:`PartitionKey` for a partition's breaker (its transitions then carry it), or any string.
    """

    def __init__(
        self,
        name: str | PartitionKey,
        *,
        retry_interval_s: float,
        max_retry_interval_s: float,
        backoff_multiplier: float,
        half_open_probes: int,
        clock: Clock,
        store: BreakerStore | None = None,
        on_transition: Callable[[Transition], None] | None = None,
        wall_clock: Clock = time.time,
        sync_interval_s: float = 0.0,
        writer_id: str | None = None,
        listeners: Iterable[pybreaker.CircuitBreakerListener] = (),
    ) -> None:
        if not retry_interval_s > 0:
            raise ConfigError(f"breaker retry_interval_s must be > 0 seconds, got {retry_interval_s!r}")
        if not max_retry_interval_s >= retry_interval_s:
            raise ConfigError(
                f"breaker max_retry_interval_s ({max_retry_interval_s!r}) must be >= retry_interval_s "
                f"({retry_interval_s!r}); raise it or lower the retry interval"
            )
        if not backoff_multiplier >= 1.0:
            raise ConfigError(f"breaker backoff_multiplier must be >= 1 (1 = no backoff), got {backoff_multiplier!r}")
        if int(half_open_probes) != half_open_probes or half_open_probes < 1:
            raise ConfigError(f"breaker half_open_probes must be a whole number >= 1, got {half_open_probes!r}")
        if not sync_interval_s >= 0:
            raise ConfigError(f"breaker sync_interval_s must be >= 0 seconds, got {sync_interval_s!r}")
        #: the partition this breaker guards (None for a breaker built with a plain name)
        self.key = name if isinstance(name, PartitionKey) else None
        #: the breaker's name, also its key in the shared store (``"topic/partition"`` for a partition)
        self.name = str(name)
        self.retry_interval_s = float(retry_interval_s)
        self.max_retry_interval_s = float(max_retry_interval_s)
        self.backoff_multiplier = float(backoff_multiplier)
        self.half_open_probes = int(half_open_probes)
        self.sync_interval_s = float(sync_interval_s)
        self._clock = clock
        self._wall = wall_clock
        self._store: BreakerStore = store if store is not None else MemoryStore()
        self._on_transition = on_transition
        self._writer = writer_id or uuid.uuid4().hex
        self._lock = threading.RLock()

        try:
            storage = self._store.storage_for(self.name)
        except StoreError as err:
            _store_warning("breaker store unavailable, keeping state locally", self.name, err)
            storage = pybreaker.CircuitMemoryStorage(pybreaker.STATE_CLOSED)
        self._cb = pybreaker.CircuitBreaker(name=self.name, state_storage=storage, listeners=list(listeners))

        self._timing = _Timing(
            self.retry_interval_s, self.max_retry_interval_s, self.backoff_multiplier, self.half_open_probes
        )
        self._state: _State = Closed(self.retry_interval_s)
        self._seen: tuple[int, str] = (0, "")  # (version, writer) of the record this state corresponds to
        self._last_sync: float | None = None

    # -- read side --------------------------------------------------------------------------------

    @property
    def state(self) -> BreakerState:
        return self._state.state

    @property
    def writable(self) -> bool:
        """True only when CLOSED."""
        return self._state.writable

    @property
    def reason(self) -> Verdict | None:
        return self._state.reason

    @property
    def opened_at(self) -> float | None:
        return self._state.opened_at

    @property
    def retry_at(self) -> float | None:
        """When OPEN becomes HALF_OPEN (monotonic clock), None in other states."""
        return self._state.retry_at

    @property
    def opens(self) -> int:
        """Consecutive opens since the breaker was last closed (1 after the first trip)."""
        return self._state.opens

    @property
    def current_retry_interval_s(self) -> float:
        """The wait the breaker uses (or last used) in OPEN, after backoff."""
        return self._state.interval

    @property
    def probes_in_flight(self) -> int:
        return self._state.probes_in_flight

    @property
    def pybreaker(self) -> pybreaker.CircuitBreaker:
        """The wrapped pybreaker breaker (its storage mirrors this breaker's coarse state)."""
        return self._cb

    def snapshot(self) -> BreakerSnapshot:
        """An immutable copy of the current state."""
        with self._lock:
            st = self._state
            return BreakerSnapshot(self.name, st.state, st.reason, st.opened_at, st.retry_at, st.opens)

    # -- write side -------------------------------------------------------------------------------

    def trip(self, verdict: Verdict) -> bool:
        """CLOSED/HALF_OPEN -> OPEN for ``verdict``. False (and nothing changes) if already open or forced."""
        with self._lock:
            event = self._state.on_trip()
            transition = self._fire(event, self._clock(), verdict) if event else None
        self._notify(transition)
        return transition is not None

    def tick(self) -> None:
        """Adopt a newer shared record (if a sync is due), then OPEN -> HALF_OPEN once ``retry_at`` passed."""
        with self._lock:
            now = self._clock()
            transitions = [self._sync(now)] if self._sync_due(now) else []
            event = self._state.on_tick(now)
            if event is not None:
                transitions.append(self._fire(event, now, None))
        for t in transitions:
            self._notify(t)

    def try_probe(self) -> bool:
        """HALF_OPEN: grant one probe message if fewer than ``half_open_probes`` are granted; else False."""
        with self._lock:
            granted = self._state.try_probe(self._timing)
            if granted is None:
                return False
            self._state = granted
            return True

    def probe_result(self, ok: bool) -> None:
        """The outcome of a granted probe: enough successes close the breaker, one failure re-opens it."""
        with self._lock:
            event, self._state = self._state.on_probe_result(ok, self._timing)
            transition = self._fire(event, self._clock(), None) if event else None
        self._notify(transition)

    def force_open(self, reason: str = MuteReason.MANUAL) -> None:
        """Manual mute (shared like any state): stays until :meth:`release`, whatever detectors say."""
        manual = MuteReason.MANUAL
        verdict = Verdict(manual) if reason == manual else Verdict(manual, {"note": str(reason)})
        with self._lock:
            event = self._state.on_force()
            transition = self._fire(event, self._clock(), verdict) if event else None
        self._notify(transition)

    def release(self) -> None:
        """FORCED_OPEN -> CLOSED; does nothing in other states."""
        with self._lock:
            event = self._state.on_release()
            transition = self._fire(event, self._clock(), None) if event else None
        self._notify(transition)

    # -- internals --------------------------------------------------------------------------------

    def _fire(self, event: BreakerEvent, now: float, reason: Verdict | None) -> Transition | None:
        source = self.state
        target = TRANSITIONS.get((source, event))
        if target is None:
            return None
        self._state = _entered(target, self._state, now, reason, self._timing)
        self._mirror(target)
        self._publish(now)
        return Transition(self.name, source, target, now, self._state.reason, key=self.key)

    def _mirror(self, target: BreakerState) -> None:
        """Write the coarse state into pybreaker's storage (FORCED_OPEN is "open" to pybreaker)."""
        try:
            if target is BreakerState.CLOSED:
                self._cb.close()
            elif target is BreakerState.HALF_OPEN:
                self._cb.half_open()
            else:
                self._cb.open()
        except Exception as err:  # the mirror is auxiliary: never let it break muting
            log.warning("could not mirror breaker state into pybreaker", breaker=self.name, error=str(err))

    def _record(self, now: float) -> dict[str, object]:
        wall = self._wall()

        def epoch(t: float | None) -> float | None:
            return None if t is None else wall + (t - now)

        st = self._state
        return {
            "name": self.name,
            "state": st.state.value,
            "reason": st.reason.to_dict() if st.reason is not None else None,
            "opened_at_epoch": epoch(st.opened_at),
            "retry_at_epoch": epoch(st.retry_at),
            "opens": st.opens,
            "retry_interval_s": st.interval,
            "version": self._seen[0],
            "writer": self._writer,
            "updated_at_epoch": wall,
        }

    def _publish(self, now: float) -> None:
        """Publish this transition with a version above anything seen locally or in the store."""
        try:
            current = self._store.read(self.name)
            stored_version = int(current.get("version", 0)) if current else 0  # type: ignore[call-overload]
        except (StoreError, TypeError, ValueError) as err:
            _store_warning("could not read breaker record", self.name, err)
            stored_version = 0
        self._seen = (max(self._seen[0], stored_version) + 1, self._writer)
        try:
            self._store.publish(self.name, self._record(now))
        except StoreError as err:
            _store_warning("could not publish breaker record", self.name, err)

    def _sync_due(self, now: float) -> bool:
        return self._last_sync is None or now - self._last_sync >= self.sync_interval_s

    def _sync(self, now: float) -> Transition | None:
        """Adopt the shared record if it is newer than what this breaker's state corresponds to."""
        self._last_sync = now
        try:
            record = self._store.read(self.name)
        except StoreError as err:
            _store_warning("could not read breaker record", self.name, err)
            return None
        if not record:
            return None
        try:
            version, writer = int(record["version"]), str(record["writer"])  # type: ignore[call-overload]
            if version < self._seen[0] or (version, writer) == self._seen:
                return None
            return self._adopt(record, version, writer, now)
        except (KeyError, TypeError, ValueError) as err:
            log.warning("ignoring malformed breaker record", breaker=self.name, error=repr(err))
            return None

    def _adopt(self, record: Mapping[str, object], version: int, writer: str, now: float) -> Transition | None:
        target = BreakerState(str(record["state"]))
        offset = now - self._wall()  # epoch -> this process's monotonic clock

        def local(key: str) -> float | None:
            value = record.get(key)
            return None if value is None else float(value) + offset  # type: ignore[arg-type]

        raw_reason = record.get("reason")
        reason = Verdict.from_dict(raw_reason) if isinstance(raw_reason, Mapping) else None
        opens = int(record.get("opens", 0))  # type: ignore[call-overload]
        interval = float(record.get("retry_interval_s", self.retry_interval_s))  # type: ignore[arg-type]
        source = self.state
        self._state = _adopted(
            target, self._state, reason, local("opened_at_epoch"), local("retry_at_epoch"), opens, interval
        )
        self._seen = (version, writer)
        if target is source:
            return None  # same state, newer details (e.g. a longer backoff): nothing to announce
        self._mirror(target)  # usually already there (shared storage); cheap, and right if it is not
        return Transition(self.name, source, target, now, self._state.reason, remote=True, key=self.key)

    def _notify(self, transition: Transition | None) -> None:
        if transition is None:
            return
        log.debug(
            "breaker transition",
            breaker=transition.name,
            source=transition.source.value,
            target=transition.target.value,
            reason=transition.reason.describe() if transition.reason else None,
            remote=transition.remote,
        )
        if self._on_transition is not None:
            self._on_transition(transition)

    def __repr__(self) -> str:
        return f"MuteBreaker({self.name!r}, {self.state.value}, reason={self._state.reason!r})"


def _store_warning(event: str, breaker: str, err: Exception) -> None:
    # An outage the store already reported (once, URL redacted) is not repeated per breaker and per tick.
    if isinstance(err, StoreError) and err.reported:
        log.debug(event, breaker=breaker, error=str(err))
    else:
        log.warning(event, breaker=breaker, error=str(err))
