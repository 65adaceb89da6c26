"""One log line per run of the same client error, not one per event.

librdkafka reports every failed connection attempt as an error event. With no broker reachable that is one
event per attempt: reconnects back off from ``reconnect.backoff.ms`` (100 ms) doubling to
``reconnect.backoff.max.ms`` (10 s), so a fresh producer sees ~5-10 events a second for its first seconds and
one every 10 s per broker after a minute. Each structured log line cost ~37 us of CPU in the application's
``poll`` (structlog's processors, a stdlib record, the handler), ~0.4 ms a second -- a third of what the plain
client spends in a whole ``poll(1.0)`` -- for lines that repeat one another. So the first event of each error code
is logged, identical ones within :data:`REPEAT_WINDOW_S` after it are counted, and the next line logged carries
how many were left out (``repeated=N``). The user's ``error_cb`` still gets every event.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: how long the same error code stays quiet after it was logged (a log setting: it changes no decision)
REPEAT_WINDOW_S = 10.0


@dataclass
class RepeatedErrors:
    """Which error events to log: :meth:`admit` answers per event (called from the thread serving them)."""

    window_s: float = REPEAT_WINDOW_S
    # per error code: when it was last logged, and how many of it were left out since
    _logged_at: dict[int, float] = field(default_factory=dict)
    _left_out: dict[int, int] = field(default_factory=dict)

    def admit(self, code: int, now: float) -> int | None:
        """None: leave this event out of the log; else log it, with this many identical events left out before
        it (0 for the first of its code)."""
        at = self._logged_at.get(code)
        if at is not None and now - at < self.window_s:
            self._left_out[code] = self._left_out.get(code, 0) + 1
            return None
        self._logged_at[code] = now
        return self._left_out.pop(code, 0)
