"""A breaker's state outside its process: the pybreaker mirror, the record shared with other processes, a
failing store (mutepro.mute.shared)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pybreaker
import pytest

from mutepro.detect.model import Verdict
from mutepro.mute.breaker import (
    Transition,
)
from mutepro.mute.store import BreakerStore, MemoryStore, RedisStore, StoreError
from tests.unit.mute._breakers import FAILING, SLOW, S, World, make, to_half_open


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
