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

Redis outages are reported once: the first failed operation logs one warning (URL with its password
redacted), later ones only count, and the first success afterwards logs how many failed meanwhile. That
includes pybreaker's own storage, whose default logger would print a bare ``RedisError`` traceback to stderr
for every operation while Redis is down. No message or log line carries the URL's password.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable
from urllib.parse import parse_qsl, unquote, urlsplit

import pybreaker

from mutepro.errors import ConfigError, MuteproError
from mutepro.logs import get_logger
from mutepro.policy.redact import redact_text, redact_url

log = get_logger("mutepro.mute")


class StoreError(MuteproError):
    """The shared breaker store could not be read or written (e.g. Redis unreachable).

    ``reported`` is true when the store has already logged the outage (callers then log at debug only).
    """

    def __init__(self, message: str, *, reported: bool = False) -> None:
        super().__init__(message)
        self.reported = reported


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


def _url_secrets(url: str) -> tuple[str, ...]:
    """The credentials inside a Redis URL (userinfo password, ``?password=``), to scrub from driver errors."""
    try:
        parts = urlsplit(url)
        found = [parts.password or ""]
        found += [value for name, value in parse_qsl(parts.query) if name.lower() == "password"]
    except ValueError:
        return ()
    return tuple({candidate for text in found if text for candidate in (text, unquote(text))})


class _Outage:
    """One warning per Redis outage instead of one per failed operation; a note when Redis is back."""

    def __init__(self, shown_url: str, secrets: tuple[str, ...]) -> None:
        self._shown_url = shown_url
        self._secrets = secrets
        self._lock = threading.Lock()
        self._failures = 0  # failed operations in the current outage (0: Redis is fine)
        self.outages = 0  # outages seen so far (for tests and metrics)

    def redacted(self, err: BaseException | str) -> str:
        return redact_text(str(err), self._secrets)

    def failed(self, operation: str, err: BaseException) -> None:
        with self._lock:
            self._failures += 1
            first = self._failures == 1
            if first:
                self.outages += 1
        if first:
            log.warning(
                "Redis unreachable: breakers keep their local state until it is back (reported once per outage)",
                url=self._shown_url,
                operation=operation,
                error=self.redacted(err),
            )

    def succeeded(self) -> None:
        if not self._failures:  # unlocked read: the common case must stay cheap
            return
        with self._lock:
            failed, self._failures = self._failures, 0
        if failed:
            log.info("Redis reachable again", url=self._shown_url, failed_operations=failed)


class _OutageLogger:
    """Stands in for pybreaker's module logger on mutepro's storages: its ``exception()`` calls (one per failed
    Redis operation, each with a traceback) feed the outage report instead of stderr."""

    def __init__(self, outage: _Outage) -> None:
        self._outage = outage

    def exception(self, msg: str, *args: object, **kwargs: object) -> None:
        import sys

        err = sys.exc_info()[1]
        self._outage.failed(f"pybreaker: {msg}", err if err is not None else RuntimeError(msg))

    def error(self, msg: str, *args: object, **kwargs: object) -> None:
        self._outage.failed(f"pybreaker: {msg}", RuntimeError(msg))

    warning = error

    def debug(self, msg: str, *args: object, **kwargs: object) -> None:
        """Ignored."""

    info = debug


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
        #: The URL as it may be shown (password replaced by ***): every message and log line uses this one.
        self.shown_url = redact_url(url)
        self.key_prefix = key_prefix
        self._outage = _Outage(self.shown_url, _url_secrets(url))
        self._redis_errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        try:
            self._redis = redis.Redis.from_url(
                url, socket_timeout=socket_timeout_s, socket_connect_timeout=socket_timeout_s
            )
        except ValueError as err:
            # from None: the driver's own message (and so a traceback's chained one) may quote the URL.
            raise ConfigError(
                f"store.url {self.shown_url!r} is not a Redis URL ({self._outage.redacted(err)}); "
                "use redis://[:password@]host:6379/0"
            ) from None
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
                    storage = _QuietRedisStorage(
                        self._outage, pybreaker.STATE_CLOSED, self._redis, namespace=f"{self.key_prefix}:{name}"
                    )
                except self._redis_errors as err:
                    self._outage.failed("create pybreaker storage", err)
                    raise StoreError(
                        f"cannot reach Redis at {self.shown_url} for breaker {name!r}: {self._outage.redacted(err)}",
                        reported=True,
                    ) from None
                self._storages[name] = storage
            return storage

    def publish(self, name: str, record: Mapping[str, object]) -> None:
        """SET the JSON record."""
        encoded = _encode(name, record)
        try:
            self._redis.set(self._record_key(name), encoded)
        except self._redis_errors as err:
            self._outage.failed("publish", err)
            raise StoreError(
                f"cannot publish breaker {name!r} to Redis at {self.shown_url}: {self._outage.redacted(err)}",
                reported=True,
            ) from None
        self._outage.succeeded()

    def read(self, name: str) -> Mapping[str, object] | None:
        """GET and decode the JSON record, or None."""
        try:
            raw: Any = self._redis.get(self._record_key(name))
        except self._redis_errors as err:
            self._outage.failed("read", err)
            raise StoreError(
                f"cannot read breaker {name!r} from Redis at {self.shown_url}: {self._outage.redacted(err)}",
                reported=True,
            ) from None
        self._outage.succeeded()
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


class _QuietRedisStorage(pybreaker.CircuitRedisStorage):
    """pybreaker's Redis storage, its per-operation error logging routed into the store's outage report."""

    def __init__(self, outage: _Outage, *args: Any, **kwargs: Any) -> None:
        self.logger = _OutageLogger(outage)  # type: ignore[assignment]  # shadows the class-level logger
        super().__init__(*args, **kwargs)


STORE_BACKENDS = ("memory", "redis")


def make_store(backend: str, url: str | None, key_prefix: str) -> MemoryStore | RedisStore:
    """Build a store from configuration: ``"memory"`` or ``"redis"`` (which needs ``url``); the caller owns it
    and closes it."""
    if backend == "memory":
        return MemoryStore()
    if backend == "redis":
        if not url:
            raise ConfigError("store.url is required for store.backend 'redis'; e.g. redis://127.0.0.1:6379/0")
        return RedisStore(url, key_prefix)
    raise ConfigError(f"store.backend must be one of {STORE_BACKENDS}, got {backend!r}")
