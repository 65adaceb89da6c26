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

Shared state (:mod:`mutepro.mute.shared`): every transition also publishes a full record (state, reason,
``opened_at_epoch``, ``retry_at_epoch``, backoff) to the store with a Lamport-style ``version``. ``tick()`` reads
the record and adopts a newer one written by another process — same state, same reason, same retry time converted
from wall-clock epoch seconds to this process's monotonic clock — so one Spark executor's detection mutes the
partition for every executor. Ties (two processes publishing the same version) resolve to whatever the store
holds: last writer wins and everybody converges on it. If the store fails, the breaker carries on with its local
state and logs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

import pybreaker

from mutepro.detect.model import MuteReason, Verdict
from mutepro.errors import ConfigError
from mutepro.logs import get_logger
from mutepro.mute.shared import SharedRecord
from mutepro.mute.states import Closed, ForcedOpen, HalfOpen, Open, State, Timing, adopted_state, entered_state
from mutepro.mute.store import BreakerStore, MemoryStore
from mutepro.mute.transitions import (
    TRANSITIONS,
    BreakerEvent,
    BreakerSnapshot,
    BreakerState,
    PartitionKey,
    Transition,
)

log = get_logger("mutepro.mute")

Clock = Callable[[], float]

#: the state vocabulary (mutepro.mute.transitions, mutepro.mute.states) is importable from here with the breaker
__all__ = [
    "TRANSITIONS",
    "BreakerEvent",
    "BreakerSnapshot",
    "BreakerState",
    "Closed",
    "ForcedOpen",
    "HalfOpen",
    "MuteBreaker",
    "Open",
    "PartitionKey",
    "Transition",
]


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
        probe_spacing_s: float = 0.0,
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
        if not probe_spacing_s >= 0:
            raise ConfigError(f"breaker probe_spacing_s must be >= 0 seconds, got {probe_spacing_s!r}")
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
        self._on_transition = on_transition
        self._lock = threading.RLock()
        self._shared = SharedRecord(
            self.name, store if store is not None else MemoryStore(), wall_clock=wall_clock,
            sync_interval_s=self.sync_interval_s, default_interval=self.retry_interval_s, writer_id=writer_id,
            listeners=listeners,
        )
        self._timing = Timing(
            self.retry_interval_s, self.max_retry_interval_s, self.backoff_multiplier, self.half_open_probes,
            float(probe_spacing_s),
        )
        self._state: State = Closed(self.retry_interval_s)

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
    def probing_since(self) -> float | None:
        """HALF_OPEN: when probing began (None in other states, or when adopted from another process)."""
        st = self._state
        return st.probing_since if isinstance(st, HalfOpen) else None

    @property
    def rejoined(self) -> bool:
        """OPEN or HALF_OPEN since :meth:`rearm`, no probe round failed since: its leader was elected again."""
        st = self._state
        return isinstance(st, Open | HalfOpen) and st.rejoined

    @property
    def pybreaker(self) -> pybreaker.CircuitBreaker:
        """The wrapped pybreaker breaker (its storage mirrors this breaker's coarse state)."""
        return self._shared.pybreaker

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
            transitions = [self._sync(now)] if self._shared.due(now) else []
            event = self._state.on_tick(now)
            if event is not None:
                transitions.append(self._fire(event, now, None))
        for t in transitions:
            self._notify(t)

    def try_probe(self) -> bool:
        """HALF_OPEN: grant one probe message if fewer than ``half_open_probes`` are granted; else False."""
        with self._lock:
            granted = self._state.try_probe(self._timing, self._clock())
            if granted is None:
                return False
            self._state = granted
            return True

    def probe_wait(self) -> float | None:
        """Seconds until :meth:`try_probe` could grant a probe (``inf``: not before a probe result comes back);
        None when the breaker is not half-open."""
        with self._lock:
            return self._state.probe_wait(self._timing, self._clock())

    def probe_unsent(self) -> None:
        """A probe granted by :meth:`try_probe` could not be sent (librdkafka's queue was full): its slot is free."""
        with self._lock:
            self._state = self._state.on_probe_unsent()

    def probe_result(self, ok: bool) -> None:
        """The outcome of a granted probe: enough successes close the breaker, one failure re-opens it."""
        with self._lock:
            event, self._state = self._state.on_probe_result(ok, self._timing)
            transition = self._fire(event, self._clock(), None) if event else None
        self._notify(transition)

    def rearm(self) -> bool:
        """OPEN: wait ``retry_interval_s`` from now, the backoff started over (the partition's leader was elected
        again after it had none: the fault the backoff grew for is over by the cluster's word). False, and nothing
        changes, in any other state."""
        with self._lock:
            if not isinstance(self._state, Open):
                return False
            now = self._clock()
            self._state = self._state.rearmed(self._timing, now)
            self._shared.publish(self._state, now)
        return True

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
        self._state = entered_state(target, self._state, now, reason, self._timing)
        self._shared.mirror(target)
        self._shared.publish(self._state, now)
        return Transition(self.name, source, target, now, self._state.reason, key=self.key)

    def _sync(self, now: float) -> Transition | None:
        """Adopt the shared record if another process published a newer one."""
        adopted = self._shared.read_newer(now)
        if adopted is None:
            return None
        source = self.state
        self._state = adopted_state(
            adopted.state, self._state, adopted.reason, adopted.opened_at, adopted.retry_at, adopted.opens,
            adopted.interval,
        )
        if adopted.state is source:
            return None  # same state, newer details (e.g. a longer backoff): nothing to announce
        self._shared.mirror(adopted.state)  # usually already there (shared storage); cheap, and right if it is not
        return Transition(self.name, source, adopted.state, now, self._state.reason, remote=True, key=self.key)

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

