"""Breaker stores: one contract, run against every backend (memory and a real Redis server)."""

from __future__ import annotations

import io
import json
import time
import uuid
from collections.abc import Callable, Iterator

import pybreaker
import pytest

from mutepro.detect.model import Verdict
from mutepro.errors import ConfigError
from mutepro.logs import configure_logging, reset_logging
from mutepro.mute.breaker import MuteBreaker
from mutepro.mute.store import BreakerStore, MemoryStore, RedisStore, StoreError, make_store
from mutepro.testing.redis_server import RedisServer

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


PASSWORD = "pw-Zq81-never-print-me"


def _capture_logs() -> io.StringIO:
    """Every mutepro event at debug and above into a buffer (what an application with logging on would see)."""
    buffer = io.StringIO()
    configure_logging("debug", "json", stream=buffer)
    return buffer


def _verdict() -> Verdict:
    return Verdict("failure_rate", {"calls": 20})


@pytest.mark.redis
class TestRedisSecretsAndOutages:
    """Issue 10 item 2: a Redis URL's password never reaches a log line or a message, and an outage is one
    warning, not one per operation (nor a traceback per operation from pybreaker's logger)."""

    @pytest.fixture()
    def server(self) -> Iterator[RedisServer]:
        with RedisServer(PASSWORD) as server:
            yield server

    def test_restart_logs_one_redacted_warning(self, server: RedisServer, capfd: pytest.CaptureFixture[str]) -> None:
        """Redis stopped under working breakers, then restarted: no password anywhere, one warning, stderr quiet."""
        logs = _capture_logs()
        try:
            store = RedisStore(server.url, key_prefix=f"s-{uuid.uuid4().hex[:8]}", socket_timeout_s=0.3)
            breakers = [
                MuteBreaker(
                    f"t-{i}", retry_interval_s=0.01, max_retry_interval_s=0.02, backoff_multiplier=1.0,
                    half_open_probes=1, clock=time.monotonic, store=store,
                )
                for i in range(3)
            ]
            server.stop()
            for breaker in breakers:  # every operation fails: trip, ticks (reads), probes
                breaker.trip(_verdict())
                for _ in range(3):
                    breaker.tick()
                    breaker.pybreaker.current_state  # noqa: B018 - a pybreaker storage read, failing
            server.start()
            for breaker in breakers:
                breaker.tick()
                breaker.force_open("after restart")
        finally:
            reset_logging()
        text = logs.getvalue()
        captured = capfd.readouterr()
        assert PASSWORD not in text and PASSWORD not in captured.err and PASSWORD not in captured.out
        warnings = [json.loads(line) for line in text.splitlines() if '"level": "warning"' in line]
        assert [w["event"].split(":")[0] for w in warnings] == ["Redis unreachable"], warnings
        assert warnings[0]["url"] == f"redis://:***@127.0.0.1:{server.port}/0"
        assert "Redis reachable again" in text
        assert "Traceback" not in captured.err and "RedisError" not in captured.err
        assert store.read("t-0") is not None  # back to sharing after the restart

    def test_store_error_messages_are_redacted(self, server: RedisServer) -> None:
        """StoreError text (raised to callers) names the URL without its password."""
        store = RedisStore(server.url, socket_timeout_s=0.3)
        server.stop()
        with pytest.raises(StoreError) as caught:
            store.read("t-0")
        assert PASSWORD not in str(caught.value) and "redis://:***@127.0.0.1" in str(caught.value)
        assert caught.value.__suppress_context__  # a traceback does not show the driver's error either

    @pytest.mark.parametrize(
        "url",
        [
            f"redis://:{PASSWORD}@127.0.0.1:notaport/0",
            f"redis://:{PASSWORD}@127.0.0.1:6379/notadb",
            f"http://:{PASSWORD}@127.0.0.1:6379/0",
            f"redis://127.0.0.1:6379/0?password={PASSWORD}&socket_timeout=abc",
        ],
    )
    def test_malformed_url_error_is_redacted(self, url: str) -> None:
        """A malformed Redis URL's ConfigError does not print the password (nor chain an error that does)."""
        with pytest.raises((ConfigError, StoreError)) as caught:
            store = RedisStore(url, socket_timeout_s=0.3)
            store.read("t-0")
        assert PASSWORD not in str(caught.value)
        assert caught.value.__cause__ is None
