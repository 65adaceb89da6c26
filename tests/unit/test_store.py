"""Breaker stores: one contract, run against every backend (memory and a real Redis server)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pybreaker
import pytest

from mutepro.errors import ConfigError
from mutepro.mute.store import BreakerStore, MemoryStore, RedisStore, StoreError, make_store

StoreFactory = Callable[[], BreakerStore]


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def backend(request: pytest.FixtureRequest) -> Iterator[StoreFactory]:
    """A factory of stores that share state the way two processes of one job would.

    Memory: the same instance (memory is per process). Redis: new clients on the same server and key prefix.
    """
    created: list[BreakerStore] = []
    if request.param == "memory":
        shared = MemoryStore()

        def factory() -> BreakerStore:
            return shared

    else:
        url = request.getfixturevalue("redis_url")
        prefix = f"mutepro-test-{uuid.uuid4().hex[:12]}"

        def factory() -> BreakerStore:
            store = RedisStore(url, key_prefix=prefix)
            created.append(store)
            return store

    yield factory
    for store in created:
        store.close()  # type: ignore[attr-defined]


RECORD = {
    "state": "open",
    "reason": {"reason": "slow_call", "detail": {"slow_call_rate": 0.93, "calls": 41}},
    "opened_at_epoch": 1_700_000_000.25,
    "retry_at_epoch": 1_700_000_005.25,
    "opens": 1,
    "version": 3,
    "writer": "a",
    "note": None,
}


class TestStoreContract:
    def test_is_a_breaker_store(self, backend: StoreFactory) -> None:
        """Every backend satisfies the BreakerStore protocol."""
        assert isinstance(backend(), BreakerStore)

    def test_read_unknown_is_none(self, backend: StoreFactory) -> None:
        """A name never published reads as None."""
        assert backend().read("t-0") is None

    def test_publish_read_round_trip(self, backend: StoreFactory) -> None:
        """A record comes back equal, nested values and None included."""
        store = backend()
        store.publish("t-0", RECORD)
        assert store.read("t-0") == RECORD

    def test_visible_to_other_process(self, backend: StoreFactory) -> None:
        """What one process publishes another reads."""
        backend().publish("t-0", RECORD)
        assert backend().read("t-0") == RECORD

    def test_publish_replaces(self, backend: StoreFactory) -> None:
        """A second publish replaces the whole record."""
        store = backend()
        store.publish("t-0", RECORD)
        store.publish("t-0", {"state": "closed", "version": 4})
        assert store.read("t-0") == {"state": "closed", "version": 4}

    def test_names_are_independent(self, backend: StoreFactory) -> None:
        """Records of different breakers do not mix."""
        store = backend()
        store.publish("t-0", RECORD)
        assert store.read("t-1") is None

    def test_read_returns_a_copy(self, backend: StoreFactory) -> None:
        """Mutating what read() returned does not change the stored record."""
        store = backend()
        store.publish("t-0", RECORD)
        got = store.read("t-0")
        assert got is not None
        got["state"] = "closed"  # type: ignore[index]
        assert store.read("t-0") == RECORD

    def test_rejects_unserialisable_record(self, backend: StoreFactory) -> None:
        """A record that is not JSON raises StoreError naming the breaker."""
        with pytest.raises(StoreError, match="t-0"):
            backend().publish("t-0", {"when": object()})

    def test_pybreaker_storage_starts_closed(self, backend: StoreFactory) -> None:
        """storage_for gives a pybreaker storage, closed when new."""
        storage = backend().storage_for("t-0")
        assert isinstance(storage, pybreaker.CircuitBreakerStorage) and storage.state == pybreaker.STATE_CLOSED

    def test_pybreaker_storage_is_shared(self, backend: StoreFactory) -> None:
        """A state written through one process's storage is seen through the other's."""
        backend().storage_for("t-0").state = pybreaker.STATE_OPEN
        assert backend().storage_for("t-0").state == pybreaker.STATE_OPEN

    def test_existing_state_is_not_reset(self, backend: StoreFactory) -> None:
        """Asking for the storage again (a new process starting) keeps an open state."""
        store = backend()
        store.storage_for("t-0").state = pybreaker.STATE_OPEN
        assert backend().storage_for("t-0").state == pybreaker.STATE_OPEN

    def test_pybreaker_storages_independent_by_name(self, backend: StoreFactory) -> None:
        """Opening one breaker's storage leaves another's closed."""
        store = backend()
        store.storage_for("t-0").state = pybreaker.STATE_OPEN
        assert store.storage_for("t-1").state == pybreaker.STATE_CLOSED

    def test_works_with_pybreaker_breaker(self, backend: StoreFactory) -> None:
        """A pybreaker.CircuitBreaker on the storage sees open() from another process."""
        a = pybreaker.CircuitBreaker(name="t-0", state_storage=backend().storage_for("t-0"))
        b = pybreaker.CircuitBreaker(name="t-0", state_storage=backend().storage_for("t-0"))
        a.open()
        assert b.current_state == pybreaker.STATE_OPEN


class TestMemoryStore:
    def test_instances_do_not_share(self) -> None:
        """Memory is per instance: another MemoryStore sees nothing."""
        MemoryStore().publish("t-0", RECORD)
        assert MemoryStore().read("t-0") is None


class TestRedisStore:
    @pytest.mark.redis
    def test_key_prefix_isolates_jobs(self, redis_url: str) -> None:
        """Stores with different key prefixes on one server do not see each other's records."""
        a = RedisStore(redis_url, key_prefix=f"job-a-{uuid.uuid4().hex[:8]}")
        b = RedisStore(redis_url, key_prefix=f"job-b-{uuid.uuid4().hex[:8]}")
        a.publish("t-0", RECORD)
        assert b.read("t-0") is None
        a.close()
        b.close()

    def test_unreachable_server_raises_store_error(self) -> None:
        """Nothing listening on the port: read and publish raise StoreError naming the URL."""
        store = RedisStore("redis://127.0.0.1:1/0", socket_timeout_s=0.5)
        with pytest.raises(StoreError, match=r"127\.0\.0\.1:1"):
            store.read("t-0")
        with pytest.raises(StoreError, match=r"127\.0\.0\.1:1"):
            store.publish("t-0", RECORD)

    def test_bad_url_is_config_error(self) -> None:
        """A URL that is not redis:// is a ConfigError naming store.url."""
        with pytest.raises(ConfigError, match=r"store\.url"):
            RedisStore("http://example.invalid")

    def test_empty_prefix_is_config_error(self) -> None:
        """An empty key prefix would collide with other users of the server."""
        with pytest.raises(ConfigError, match="key_prefix"):
            RedisStore("redis://127.0.0.1:1/0", key_prefix="")


class TestMakeStore:
    def test_memory(self) -> None:
        """backend 'memory' builds a MemoryStore (url ignored)."""
        assert isinstance(make_store("memory", None, "mutepro"), MemoryStore)

    @pytest.mark.redis
    def test_redis(self, redis_url: str) -> None:
        """backend 'redis' builds a RedisStore on the URL and prefix."""
        store = make_store("redis", redis_url, "mutepro-make")
        assert isinstance(store, RedisStore) and store.key_prefix == "mutepro-make"
        store.close()

    def test_redis_needs_url(self) -> None:
        """backend 'redis' without a URL names store.url."""
        with pytest.raises(ConfigError, match=r"store\.url is required"):
            make_store("redis", None, "mutepro")

    def test_unknown_backend(self) -> None:
        """Other backends name the valid ones."""
        with pytest.raises(ConfigError, match="memory"):
            make_store("etcd", None, "mutepro")
