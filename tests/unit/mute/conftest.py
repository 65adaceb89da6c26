"""The fixtures the mute manager's tests share (see _rig.py and _breakers.py)."""

from __future__ import annotations

import pytest

from tests.unit.mute._breakers import World
from tests.unit.mute._rig import LEADERS, FakeClock, Rig, T


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def rig(clock: FakeClock) -> Rig:
    r = Rig(clock)
    r.mgr.rounds.ensure_topic(T, 6, LEADERS)
    return r


@pytest.fixture
def world() -> World:
    return World()
