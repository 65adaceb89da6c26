"""Fixtures shared by the unit tests."""

from __future__ import annotations

import signal
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


@pytest.fixture
def ctrl_c_handled() -> Iterator[None]:
    """Python's own Ctrl-C handling (``signal.default_int_handler``) for the test, whatever the process inherited.

    Why: a process started in the background by a non-interactive shell (``cmd &``, as CI runs are launched
    with ``nohup ... &``) inherits SIGINT *ignored*, Python keeps it so, and ``signal.raise_signal(SIGINT)``
    then does nothing. The full suite hid it: PySpark's SparkContext installs its own SIGINT handler, and the
    integration tests run first; the sanitizer step (unit tests alone) failed every SIGINT test.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
