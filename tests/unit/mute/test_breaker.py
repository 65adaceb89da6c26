"""MuteBreaker: table-driven state machine, backoff, probes, forced mute, pybreaker mirror, shared state."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import FrozenInstanceError
from typing import Any

import pybreaker
import pytest

from mutepro.detect.model import Verdict
from mutepro.errors import ConfigError
from mutepro.mute.breaker import (
    TRANSITIONS,
    BreakerEvent,
    BreakerSnapshot,
    BreakerState,
    Closed,
    HalfOpen,
    MuteBreaker,
    Open,
    PartitionKey,
    Transition,
)
from mutepro.mute.store import BreakerStore, MemoryStore, RedisStore, StoreError

S = BreakerState
SLOW = Verdict("slow_call", {"slow_call_rate": 0.9})
FAILING = Verdict("failure_rate", {"failure_rate": 0.8})


class World:
    """One wall clock shared by every 'process'; each process's monotonic clock has its own origin."""

    def __init__(self, wall: float = 1_700_000_000.0) -> None:
        self.wall = wall

    def advance(self, seconds: float) -> None:
        self.wall += seconds

    def monotonic(self, origin: float) -> Callable[[], float]:
        """A monotonic clock reading wall - origin (processes started at different times)."""
        return lambda: self.wall - origin

    def wall_clock(self) -> float:
        return self.wall


def make(
    world: World,
    *,
    origin: float = 1_699_999_000.0,
    store: BreakerStore | None = None,
    seen: list[Transition] | None = None,
    **kw: Any,
) -> MuteBreaker:
    """A breaker 5 s / x2 / cap 60 s / 2 probes on the world's clocks."""
    params: dict[str, Any] = {
        "retry_interval_s": 5.0,
        "max_retry_interval_s": 60.0,
        "backoff_multiplier": 2.0,
        "half_open_probes": 2,
    }
    params.update(kw)
    return MuteBreaker(
        "orders-3",
        clock=world.monotonic(origin),
        wall_clock=world.wall_clock,
        store=store,
        on_transition=seen.append if seen is not None else None,
        **params,
    )


@pytest.fixture
def world() -> World:
    return World()


def to_half_open(b: MuteBreaker, world: World) -> None:
    """Trip the breaker and let its retry interval pass."""
    if b.state is S.CLOSED:
        b.trip(SLOW)
    assert b.retry_at is not None
    world.advance(b.retry_at - b._clock())
    b.tick()
    assert b.state is S.HALF_OPEN


class TestTransitionTable:
    def test_local_transitions(self) -> None:
        """The documented transitions are in the table."""
        e = BreakerEvent
        assert TRANSITIONS[(S.CLOSED, e.TRIP)] is S.OPEN
        assert TRANSITIONS[(S.HALF_OPEN, e.TRIP)] is S.OPEN
        assert TRANSITIONS[(S.OPEN, e.RETRY_DUE)] is S.HALF_OPEN
        assert TRANSITIONS[(S.HALF_OPEN, e.PROBES_PASSED)] is S.CLOSED
        assert TRANSITIONS[(S.HALF_OPEN, e.PROBE_FAILED)] is S.OPEN
        assert TRANSITIONS[(S.FORCED_OPEN, e.RELEASE)] is S.CLOSED
        assert all(TRANSITIONS[(s, e.FORCE)] is S.FORCED_OPEN for s in (S.CLOSED, S.OPEN, S.HALF_OPEN))

    def test_forced_open_only_leaves_by_release_or_adoption(self) -> None:
        """FORCED_OPEN has no entry for trips, retries or probes."""
        local = {e for (s, e) in TRANSITIONS if s is S.FORCED_OPEN and not e.value.startswith("adopt")}
        assert local == {BreakerEvent.RELEASE}

    def test_adoption_reaches_every_other_state(self) -> None:
        """A remote record can move any state to any other (4 x 3 entries)."""
        adopt = [(s, t) for (s, e), t in TRANSITIONS.items() if e.value.startswith("adopt")]
        assert len(adopt) == 12 and all(s is not t for s, t in adopt)

    def test_table_is_read_only(self) -> None:
        """Nobody can patch the table at run time."""
        with pytest.raises(TypeError):
            TRANSITIONS[(S.CLOSED, BreakerEvent.RELEASE)] = S.OPEN  # type: ignore[index]


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


class RecordingListener(pybreaker.CircuitBreakerListener):
    """Collects pybreaker state changes."""

    def __init__(self) -> None:
        self.changes: list[tuple[str | None, str]] = []

    def state_change(self, cb: Any, old_state: Any, new_state: Any) -> None:
        self.changes.append((old_state.name if old_state else None, new_state.name))


class TestPybreakerMirror:
    def test_storage_follows_every_transition(self, world: World) -> None:
        """pybreaker's storage holds closed / open / half-open as the breaker moves."""
        store = MemoryStore()
        b = make(world, store=store, half_open_probes=1)
        storage = store.storage_for("orders-3")
        states = [storage.state]
        b.trip(SLOW)
        states.append(storage.state)
        to_half_open(b, world)
        states.append(storage.state)
        b.try_probe()
        b.probe_result(True)
        states.append(storage.state)
        b.force_open()
        states.append(storage.state)
        assert states == ["closed", "open", "half-open", "closed", "open"]

    def test_pybreaker_listeners_hear_transitions(self, world: World) -> None:
        """Listeners passed in reach pybreaker and see open then closed."""
        listener = RecordingListener()
        b = make(world, listeners=[listener])
        b.force_open()
        b.release()
        assert listener.changes == [("closed", "open"), ("open", "closed")]

    def test_wrapped_breaker_is_named(self, world: World) -> None:
        """The wrapped pybreaker breaker carries the breaker's name."""
        assert make(world).pybreaker.name == "orders-3"


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


# -- shared state across processes --------------------------------------------------------------------------

ProcessStores = Callable[[], BreakerStore]  # what the `stores` fixture (tests/unit/conftest.py) yields


class TestSharedState:
    def test_remote_open_is_adopted_with_same_retry_time(self, world: World, stores: ProcessStores) -> None:
        """B adopts A's open on tick: same reason, same retry instant on B's own monotonic clock."""
        seen_b: list[Transition] = []
        a = make(world, origin=1_699_990_000.0, store=stores())
        b = make(world, origin=1_699_999_900.0, store=stores(), seen=seen_b)
        a.trip(SLOW)
        b.tick()
        assert (b.state, b.writable, b.reason, b.opens) == (S.OPEN, False, SLOW, 1)
        assert b.retry_at == pytest.approx(b._clock() + 5.0)
        assert b.opened_at == pytest.approx(b._clock())
        assert seen_b == [Transition("orders-3", S.CLOSED, S.OPEN, b._clock(), SLOW, remote=True)]

    def test_adopted_breaker_retries_when_origin_does(self, world: World, stores: ProcessStores) -> None:
        """Both processes go half-open at the same wall-clock instant, and B adopts A's half-open."""
        a = make(world, origin=0.0, store=stores())
        b = make(world, origin=12_345.0, store=stores())
        a.trip(SLOW)
        b.tick()
        world.advance(4.9)
        a.tick()
        b.tick()
        assert (a.state, b.state) == (S.OPEN, S.OPEN)
        world.advance(0.1)
        a.tick()
        b.tick()
        assert (a.state, b.state) == (S.HALF_OPEN, S.HALF_OPEN)

    def test_remote_close_is_adopted(self, world: World, stores: ProcessStores) -> None:
        """When A's probes pass, B closes too and becomes writable."""
        a = make(world, store=stores(), half_open_probes=1)
        b = make(world, store=stores(), half_open_probes=1)
        a.trip(SLOW)
        b.tick()
        to_half_open(a, world)
        a.try_probe()
        a.probe_result(True)
        b.tick()
        assert (b.state, b.writable, b.reason) == (S.CLOSED, True, None)

    def test_remote_backoff_is_adopted(self, world: World, stores: ProcessStores) -> None:
        """A's failed probe re-opens with 10 s; B adopts the longer wait and the open count."""
        a = make(world, store=stores())
        b = make(world, store=stores())
        to_half_open(a, world)
        a.probe_result(False)
        b.tick()
        assert (b.state, b.opens, b.current_retry_interval_s) == (S.OPEN, 2, 10.0)
        assert b.retry_at == pytest.approx(b._clock() + 10.0)

    def test_remote_forced_open_and_release(self, world: World, stores: ProcessStores) -> None:
        """A manual mute in one process mutes the others; its release unmutes them."""
        a = make(world, store=stores())
        b = make(world, store=stores())
        a.force_open("maintenance")
        b.tick()
        assert (b.state, b.reason) == (S.FORCED_OPEN, Verdict("manual", {"note": "maintenance"}))
        a.release()
        b.tick()
        assert b.state is S.CLOSED

    def test_own_record_is_not_readopted(self, world: World, stores: ProcessStores) -> None:
        """Ticking after a local transition announces nothing new."""
        seen: list[Transition] = []
        a = make(world, store=stores(), seen=seen)
        a.trip(SLOW)
        a.tick()
        a.tick()
        assert len(seen) == 1 and a.state is S.OPEN

    def test_older_record_is_ignored(self, world: World, stores: ProcessStores) -> None:
        """A record with a lower version than the one a breaker is at is not adopted."""
        a = make(world, store=stores())
        b = make(world, store=stores())
        a.trip(SLOW)  # version 1
        b.tick()
        b.force_open()  # version 2
        stale = {"state": "closed", "reason": None, "opens": 0, "version": 1, "writer": "someone-else"}
        stores().publish("orders-3", stale)
        b.tick()
        assert b.state is S.FORCED_OPEN

    def test_concurrent_writers_converge(self, world: World, stores: ProcessStores) -> None:
        """Two processes publishing the same version at once both end on the record the store kept."""
        a = make(world, store=stores())
        b = make(world, store=StaleFirstRead(stores()))
        a.trip(SLOW)  # version 1 by A
        b.trip(FAILING)  # B read the store before A wrote: also version 1, and B's write wins
        a.tick()
        b.tick()
        assert (a.reason, b.reason, a.state, b.state) == (FAILING, FAILING, S.OPEN, S.OPEN)

    def test_new_process_adopts_on_first_tick(self, world: World, stores: ProcessStores) -> None:
        """A breaker created after the partition was muted elsewhere picks it up on its first tick."""
        a = make(world, store=stores())
        a.trip(SLOW)
        world.advance(2)
        late = make(world, origin=1_700_000_001.0, store=stores())
        assert late.state is S.CLOSED
        late.tick()
        assert late.state is S.OPEN and late.retry_at == pytest.approx(late._clock() + 3.0)

    def test_adopted_open_already_due_goes_half_open(self, world: World, stores: ProcessStores) -> None:
        """A record whose retry time already passed is adopted and retried in the same tick."""
        a = make(world, store=stores())
        b = make(world, store=stores())
        a.trip(SLOW)
        world.advance(6)
        b.tick()
        assert b.state is S.HALF_OPEN

    def test_sync_interval_throttles_reads(self, world: World, stores: ProcessStores) -> None:
        """With sync_interval_s=1 a remote change is seen only once a second has passed."""
        a = make(world, store=stores())
        b = make(world, store=stores(), sync_interval_s=1.0)
        b.tick()  # first sync
        a.trip(SLOW)
        world.advance(0.5)
        b.tick()
        assert b.state is S.CLOSED
        world.advance(0.5)
        b.tick()
        assert b.state is S.OPEN


class StaleFirstRead:
    """Wraps a store; the first read returns None, as if it happened before another process wrote."""

    def __init__(self, inner: BreakerStore) -> None:
        self.inner = inner
        self.stale = True

    def storage_for(self, name: str) -> pybreaker.CircuitBreakerStorage:
        return self.inner.storage_for(name)

    def publish(self, name: str, record: Mapping[str, object]) -> None:
        self.inner.publish(name, record)

    def read(self, name: str) -> Mapping[str, object] | None:
        if self.stale:
            self.stale = False
            return None
        return self.inner.read(name)


class FailingStore:
    """A store whose every call fails, like an unreachable Redis."""

    def storage_for(self, name: str) -> pybreaker.CircuitBreakerStorage:
        raise StoreError("down")

    def publish(self, name: str, record: Mapping[str, object]) -> None:
        raise StoreError("down")

    def read(self, name: str) -> Mapping[str, object] | None:
        raise StoreError("down")


class TestStoreFailure:
    def test_breaker_works_locally_when_store_fails(self, world: World) -> None:
        """Store errors are logged, never raised: the breaker keeps its own state machine running."""
        b = make(world, store=FailingStore())
        assert b.trip(SLOW) is True
        world.advance(5)
        b.tick()
        assert b.state is S.HALF_OPEN and b.pybreaker.current_state == "half-open"

    def test_unreachable_redis(self, world: World) -> None:
        """A Redis URL nobody listens on degrades to local state."""
        b = make(world, store=RedisStore("redis://127.0.0.1:1/0", socket_timeout_s=0.5))
        b.trip(SLOW)
        b.tick()
        assert b.state is S.OPEN


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


class TestPartitionKey:
    def test_key_names_the_breaker_and_its_record(self, world: World) -> None:
        """A breaker built for PartitionKey("orders", 3) is named "orders/3" in the store; transitions carry the key."""
        store = MemoryStore()
        seen: list[Transition] = []
        key = PartitionKey("orders", 3)
        b = MuteBreaker(key, retry_interval_s=5.0, max_retry_interval_s=60.0, backoff_multiplier=2.0,
                        half_open_probes=1, clock=world.wall_clock, store=store, on_transition=seen.append)
        b.trip(SLOW)
        assert b.name == "orders/3" and b.key == key
        assert store.read("orders/3") is not None
        assert seen[0].key == key and seen[0].key == ("orders", 3)
        topic, partition = seen[0].key
        assert (topic, partition) == ("orders", 3)

    def test_plain_name_has_no_key(self, world: World) -> None:
        """A breaker built with a string keeps it as its name and has no key."""
        seen: list[Transition] = []
        b = make(world, seen=seen)
        b.trip(SLOW)
        assert b.key is None and seen[0].key is None and seen[0].name == "orders-3"
