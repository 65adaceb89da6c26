"""The breaker's vocabulary: the transition table and the partition key (mutepro.mute.transitions)."""

from __future__ import annotations

import pytest

from mutepro.mute.breaker import (
    TRANSITIONS,
    BreakerEvent,
    MuteBreaker,
    PartitionKey,
    Transition,
)
from mutepro.mute.store import MemoryStore
from tests.unit.mute._breakers import SLOW, S, World, make


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
