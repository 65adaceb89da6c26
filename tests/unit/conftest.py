"""Fixtures shared by the unit tests."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from mutepro.mute.store import BreakerStore, MemoryStore, RedisStore

StoreFactory = Callable[[], BreakerStore]


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def stores(request: pytest.FixtureRequest) -> Iterator[StoreFactory]:
    """Each call gives the store a new 'process' would use: one shared MemoryStore, or its own RedisStore on
    one Redis server and key prefix (the same contract tests run against both backends)."""
    created: list[RedisStore] = []
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
    else:
        url = request.getfixturevalue("redis_url")
        prefix = f"mutepro-test-{uuid.uuid4().hex[:12]}"

        def factory() -> BreakerStore:
            created.append(RedisStore(url, key_prefix=prefix))
            return created[-1]

        yield factory
    for s in created:
        s.close()
