"""The sink's exceptions: bad options are :class:`~mutepro.errors.ConfigError`; undelivered rows fail the task."""

from __future__ import annotations

from mutepro.errors import MuteproError


class SinkDeliveryError(MuteproError):
    """Rows of a Spark task were not delivered; the task fails so that Spark retries it (at least once)."""


class IdentityError(MuteproError, ValueError):
    """An ``x-mutepro-id`` header value that is not a row identity this version of mutepro can read."""
