"""What the breaker tests build: breakers on a shared wall clock, each 'process' with its own monotonic clock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mutepro.detect.model import Verdict
from mutepro.mute.breaker import BreakerState, MuteBreaker, Transition
from mutepro.mute.store import BreakerStore

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


def to_half_open(b: MuteBreaker, world: World) -> None:
    """Trip the breaker and let its retry interval pass."""
    if b.state is S.CLOSED:
        b.trip(SLOW)
    assert b.retry_at is not None
    world.advance(b.retry_at - b._clock())
    b.tick()
    assert b.state is S.HALF_OPEN
