"""Where breaker state lives: in memory (one process) or in Redis (shared by every process of a job).

Each breaker name has two things in a store:

* a pybreaker :class:`~pybreaker.CircuitBreakerStorage` (``storage_for``) holding the coarse state
  (closed / open / half-open) the way pybreaker does it — :class:`pybreaker.CircuitMemoryStorage` in memory,
  :class:`pybreaker.CircuitRedisStorage` in Redis — so pybreaker tooling and listeners see mutepro's breakers;
* a *record* (``publish`` / ``read``): the full picture one process last wrote — ``state`` (including
  ``forced_open``), ``reason``, ``opened_at_epoch``, ``retry_at_epoch``, ``opens``, ``retry_interval_s``,
  ``version`` and ``writer``. Times in records are wall-clock epoch seconds, because monotonic clocks of
  different processes (or machines) cannot be compared; each process converts to its own monotonic clock.

Shared-state semantics: a breaker that another process opened is adopted on the next ``MuteBreaker.tick()``
with the same retry time, so one Spark executor's detection mutes the partition for every executor. Both
backends serialise records as JSON, so they behave identically (the contract tests run against both).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import pybreaker

from mutepro.errors import ConfigError, MuteproError


class StoreError(MuteproError):
    """The shared breaker store could not be read or written (e.g. Redis unreachable)."""


@runtime_checkable
class BreakerStore(Protocol):
    """Where breaker state lives; memory (per process) or Redis (shared across processes)."""

    def storage_for(self, name: str) -> pybreaker.CircuitBreakerStorage:
        """The pybreaker storage for breaker ``name`` (the same one for every caller)."""
        ...

    def publish(self, name: str, record: Mapping[str, object]) -> None:
        """Replace the shared record of breaker ``name`` (JSON-serialisable values only)."""
        ...

    def read(self, name: str) -> Mapping[str, object] | None:
        """The last record published for ``name``, or None if there is none."""
        ...


def _encode(name: str, record: Mapping[str, object]) -> str:
    try:
        return json.dumps(dict(record), sort_keys=True)
    except (TypeError, ValueError) as err:
        raise StoreError(f"breaker record for {name!r} is not JSON-serialisable: {err}") from err


class MemoryStore:
    """Breaker state in this process only. Breakers sharing one MemoryStore and a name share their state."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._storages: dict[str, pybreaker.CircuitMemoryStorage] = {}
        self._records: dict[str, str] = {}

    def storage_for(self, name: str) -> pybreaker.CircuitBreakerStorage:
        """One :class:`pybreaker.CircuitMemoryStorage` per name, created closed on first use."""
        with self._lock:
            storage = self._storages.get(name)
            if storage is None:
                storage = self._storages[name] = pybreaker.CircuitMemoryStorage(pybreaker.STATE_CLOSED)
            return storage

    def publish(self, name: str, record: Mapping[str, object]) -> None:
        """Store a JSON copy of ``record`` (so later changes to the caller's dict do not leak in)."""
        encoded = _encode(name, record)
        with self._lock:
            self._records[name] = encoded

    def read(self, name: str) -> Mapping[str, object] | None:
        """A fresh copy of the last record, or None."""
        with self._lock:
            encoded = self._records.get(name)
        return None if encoded is None else json.loads(encoded)

    def close(self) -> None:
        """Nothing to release."""


class RedisStore:
    """Breaker state in Redis, shared by every process using the same ``url`` and ``key_prefix``.

    Keys: ``<prefix>:<name>:pybreaker:state`` (and pybreaker's counters) via
    :class:`pybreaker.CircuitRedisStorage`, ``<prefix>:record:<name>`` for the JSON record. Socket timeouts
    are short (1 s) so a stalled Redis slows a tick down by at most that, and errors surface as
    :class:`StoreError` for the breaker to ride out locally.
    """

    def __init__(self, url: str, key_prefix: str = "mutepro", *, socket_timeout_s: float = 1.0) -> None:
        try:
            import redis
        except ImportError as err:  # pragma: no cover - redis is a declared extra
            raise ConfigError("store.backend 'redis' needs redis-py: pip install 'mutepro[redis]'") from err
        if not key_prefix:
            raise ConfigError("store.key_prefix must not be empty; e.g. 'mutepro' or the job name")
        self.url = url
        self.key_prefix = key_prefix
        self._redis_errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        try:
            self._redis = redis.Redis.from_url(
                url, socket_timeout=socket_timeout_s, socket_connect_timeout=socket_timeout_s
            )
        except ValueError as err:
            raise ConfigError(f"store.url {url!r} is not a Redis URL; use redis://host:6379/0") from err
        self._lock = threading.Lock()
        self._storages: dict[str, pybreaker.CircuitRedisStorage] = {}

    def _record_key(self, name: str) -> str:
        return f"{self.key_prefix}:record:{name}"

    def storage_for(self, name: str) -> pybreaker.CircuitBreakerStorage:
        """A :class:`pybreaker.CircuitRedisStorage` namespaced ``<prefix>:<name>`` (closed if new)."""
        with self._lock:
            storage = self._storages.get(name)
            if storage is None:
                try:
                    storage = pybreaker.CircuitRedisStorage(
                        pybreaker.STATE_CLOSED, self._redis, namespace=f"{self.key_prefix}:{name}"
                    )
                except self._redis_errors as err:
                    raise StoreError(f"cannot reach Redis at {self.url} for breaker {name!r}: {err}") from err
                self._storages[name] = storage
            return storage

    def publish(self, name: str, record: Mapping[str, object]) -> None:
        """SET the JSON record."""
        encoded = _encode(name, record)
        try:
            self._redis.set(self._record_key(name), encoded)
        except self._redis_errors as err:
            raise StoreError(f"cannot publish breaker {name!r} to Redis at {self.url}: {err}") from err

    def read(self, name: str) -> Mapping[str, object] | None:
        """GET and decode the JSON record, or None."""
        try:
            raw: Any = self._redis.get(self._record_key(name))
        except self._redis_errors as err:
            raise StoreError(f"cannot read breaker {name!r} from Redis at {self.url}: {err}") from err
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except ValueError as err:
            key = self._record_key(name)
            raise StoreError(f"breaker record {key!r} in Redis is not JSON: {err}") from err

    def close(self) -> None:
        """Close the connection pool."""
        self._redis.close()


STORE_BACKENDS = ("memory", "redis")


def make_store(backend: str, url: str | None, key_prefix: str) -> BreakerStore:
    """Build a store from configuration: ``"memory"`` or ``"redis"`` (which needs ``url``)."""
    if backend == "memory":
        return MemoryStore()
    if backend == "redis":
        if not url:
            raise ConfigError("store.url is required for store.backend 'redis'; e.g. redis://127.0.0.1:6379/0")
        return RedisStore(url, key_prefix)
    raise ConfigError(f"store.backend must be one of {STORE_BACKENDS}, got {backend!r}")
