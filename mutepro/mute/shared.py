"""One breaker's state outside its process: the full record in the shared
:class:`~mutepro.mute.store.BreakerStore` and the coarse state mirrored into pybreaker's storage.

Every transition publishes a record (state, reason, ``opened_at_epoch``, ``retry_at_epoch``, backoff) with a
Lamport-style ``version``; a sync reads the record back and hands over a newer one written by another process,
its times converted from wall-clock epoch seconds to this process's monotonic clock. Ties (two processes
publishing the same version) resolve to whatever the store holds: last writer wins and everybody converges on it.
If the store fails, the breaker carries on with its local state and this logs.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

import pybreaker

from mutepro.detect.model import Verdict
from mutepro.logs import get_logger
from mutepro.mute.states import State
from mutepro.mute.store import BreakerStore, StoreError
from mutepro.mute.transitions import BreakerState

log = get_logger("mutepro.mute")


class Adopted(NamedTuple):
    """A newer record another process published, in this process's terms (times on its monotonic clock)."""

    state: BreakerState
    reason: Verdict | None
    opened_at: float | None
    retry_at: float | None
    opens: int
    interval: float


class SharedRecord:
    """The shared record of the breaker ``name`` (its key in ``store``) and its pybreaker mirror.

    ``sync_interval_s`` limits how often :meth:`read_newer` is due (0 = every time); ``default_interval`` stands in
    for a record without its wait; ``wall_clock`` is epoch seconds; ``writer_id`` names this process's records.
    """

    def __init__(
        self,
        name: str,
        store: BreakerStore,
        *,
        wall_clock: Callable[[], float],
        sync_interval_s: float,
        default_interval: float,
        writer_id: str | None = None,
        listeners: Iterable[pybreaker.CircuitBreakerListener] = (),
    ) -> None:
        self.name = name
        self.sync_interval_s = sync_interval_s
        self._store = store
        self._wall = wall_clock
        self._default_interval = default_interval
        self._writer = writer_id or uuid.uuid4().hex
        try:
            storage = self._store.storage_for(self.name)
        except StoreError as err:
            store_warning("breaker store unavailable, keeping state locally", self.name, err)
            storage = pybreaker.CircuitMemoryStorage(pybreaker.STATE_CLOSED)
        #: the wrapped pybreaker breaker (its storage mirrors the breaker's coarse state)
        self.pybreaker = pybreaker.CircuitBreaker(name=self.name, state_storage=storage, listeners=list(listeners))
        self._seen: tuple[int, str] = (0, "")  # (version, writer) of the record the breaker's state corresponds to
        self._last_sync: float | None = None

    def mirror(self, target: BreakerState) -> None:
        """Write the coarse state into pybreaker's storage (FORCED_OPEN is "open" to pybreaker)."""
        try:
            if target is BreakerState.CLOSED:
                self.pybreaker.close()
            elif target is BreakerState.HALF_OPEN:
                self.pybreaker.half_open()
            else:
                self.pybreaker.open()
        except Exception as err:  # the mirror is auxiliary: never let it break muting
            log.warning("could not mirror breaker state into pybreaker", breaker=self.name, error=str(err))

    def publish(self, st: State, now: float) -> None:
        """Publish the state the breaker just entered, with a version above anything seen locally or in the
        store."""
        try:
            current = self._store.read(self.name)
            stored_version = int(current.get("version", 0)) if current else 0  # type: ignore[call-overload]
        except (StoreError, TypeError, ValueError) as err:
            store_warning("could not read breaker record", self.name, err)
            stored_version = 0
        self._seen = (max(self._seen[0], stored_version) + 1, self._writer)
        wall = self._wall()

        def epoch(t: float | None) -> float | None:
            return None if t is None else wall + (t - now)

        record = {
            "name": self.name,
            "state": st.state.value,
            "reason": st.reason.to_dict() if st.reason is not None else None,
            "opened_at_epoch": epoch(st.opened_at),
            "retry_at_epoch": epoch(st.retry_at),
            "opens": st.opens,
            "retry_interval_s": st.interval,
            "version": self._seen[0],
            "writer": self._writer,
            "updated_at_epoch": wall,
        }
        try:
            self._store.publish(self.name, record)
        except StoreError as err:
            store_warning("could not publish breaker record", self.name, err)

    def due(self, now: float) -> bool:
        """Whether a sync is due (``sync_interval_s`` since the last one)."""
        return self._last_sync is None or now - self._last_sync >= self.sync_interval_s

    def read_newer(self, now: float) -> Adopted | None:
        """The shared record if it is newer than what the breaker's state corresponds to (from then on it does);
        None when it is not, or missing, malformed or unreadable."""
        self._last_sync = now
        try:
            record = self._store.read(self.name)
        except StoreError as err:
            store_warning("could not read breaker record", self.name, err)
            return None
        if not record:
            return None
        try:
            version, writer = int(record["version"]), str(record["writer"])  # type: ignore[call-overload]
            if version < self._seen[0] or (version, writer) == self._seen:
                return None
            adopted = self._parse(record, now)
        except (KeyError, TypeError, ValueError) as err:
            log.warning("ignoring malformed breaker record", breaker=self.name, error=repr(err))
            return None
        self._seen = (version, writer)
        return adopted

    def _parse(self, record: Mapping[str, object], now: float) -> Adopted:
        target = BreakerState(str(record["state"]))
        offset = now - self._wall()  # epoch -> this process's monotonic clock

        def local(key: str) -> float | None:
            value = record.get(key)
            return None if value is None else float(value) + offset  # type: ignore[arg-type]

        raw_reason = record.get("reason")
        reason = Verdict.from_dict(raw_reason) if isinstance(raw_reason, Mapping) else None
        opens = int(record.get("opens", 0))  # type: ignore[call-overload]
        interval = float(record.get("retry_interval_s", self._default_interval))  # type: ignore[arg-type]
        return Adopted(target, reason, local("opened_at_epoch"), local("retry_at_epoch"), opens, interval)


def store_warning(event: str, breaker: str, err: Exception) -> None:
    # An outage the store already reported (once, URL redacted) is not repeated per breaker and per tick.
    if isinstance(err, StoreError) and err.reported:
        log.debug(event, breaker=breaker, error=str(err))
    else:
        log.warning(event, breaker=breaker, error=str(err))
