"""mutepro's logging: structured events, silent unless the application configures logging.

mutepro is a library: it never prints on its own. Its modules log structlog-style events (an event name and
fields: ``log.warning("partition_mute", topic=..., partition=...)``) through :func:`get_logger`, which hands them
to the standard library's ``logging`` as records of the ``mutepro.*`` loggers (``mutepro.producer``,
``mutepro.mute``, ``mutepro.cluster``) — independent of any ``structlog.configure()`` the application made
(structlog's default configuration prints to stdout, which a library must not do). The ``mutepro`` logger has a
``NullHandler``, so nothing appears until the application configures logging (``logging.basicConfig()``, its own
handlers, or structlog's ``ProcessorFormatter``). Each record's message reads ``event key=value ...`` and its
``mutepro`` attribute holds the event as a dict (``{"event": "partition_mute", "topic": ...}``) for structured
handlers.

``configure_logging`` is what the CLI uses: mutepro's events to stderr as console text or JSON lines, so stdout
stays clean for ``--json`` output.

A policy's ``logging:`` section is the application's call too, made in the policy file: a producer built from a
policy that *writes* a ``logging:`` section applies it (``apply_policy_logging``), unless the application
configured logging itself (a handler on the root logger or on ``mutepro``), which always wins. A policy without
the section changes nothing (the defaults the schema fills in are not a request to log).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import MutableMapping
from datetime import UTC, datetime
from typing import Any, TextIO

import structlog

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
ROOT = "mutepro"

logging.getLogger(ROOT).addHandler(logging.NullHandler())


def _to_record(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """structlog's last processor: the positional and keyword arguments of the stdlib logging call."""
    fields = dict(event_dict)
    event = str(fields.pop("event", ""))
    text = " ".join([event, *(f"{k}={v!r}" for k, v in fields.items())])
    return (text,), {"extra": {ROOT: {"event": event, **fields}}}


def get_logger(name: str) -> Any:
    """A structlog logger for ``name`` (a ``mutepro.*`` name) whose events become stdlib ``logging`` records."""
    return structlog.wrap_logger(
        logging.getLogger(name),
        processors=[structlog.stdlib.filter_by_level, _to_record],
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


class EventFormatter(logging.Formatter):
    """Renders mutepro's records as ``console`` text or ``json`` lines (other records: their message)."""

    def __init__(self, fmt: str = "console") -> None:
        super().__init__()
        self.fmt = fmt

    def format(self, record: logging.LogRecord) -> str:
        event: dict[str, Any] = dict(getattr(record, ROOT, None) or {"event": record.getMessage()})
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat()
        level = record.levelname.lower()
        if self.fmt == "json":
            return json.dumps({"timestamp": stamp, "level": level, "logger": record.name, **event}, default=str)
        name = event.pop("event", "")
        fields = " ".join(f"{k}={v!r}" for k, v in event.items())
        return f"{stamp} [{level:<8}] {name:<30} {fields}".rstrip()


def configure_logging(level: str = "info", fmt: str = "console", stream: TextIO | None = None) -> None:
    """Send mutepro's events at ``level`` and above to ``stream`` (stderr) as ``console`` text or ``json`` lines."""
    if level not in _LEVELS:
        raise ValueError(f"logging.level: expected one of {sorted(_LEVELS)}, got {level!r}")
    if fmt not in ("console", "json"):
        raise ValueError(f"logging.format: expected 'console' or 'json', got {fmt!r}")
    root = logging.getLogger(ROOT)
    for handler in [h for h in root.handlers if getattr(h, "_mutepro_cli", False)]:
        root.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(EventFormatter(fmt))
    handler._mutepro_cli = True  # type: ignore[attr-defined]  # replaced, not stacked, on a second call
    root.addHandler(handler)
    root.setLevel(_LEVELS[level])


def _application_configured() -> bool:
    """Whether the application set up logging: any handler on the root logger, or one of its own on ``mutepro``."""
    mine = [h for h in logging.getLogger(ROOT).handlers if not isinstance(h, logging.NullHandler)]
    return bool(logging.getLogger().handlers) or any(not getattr(h, "_mutepro_cli", False) for h in mine)


def apply_policy_logging(policy: Any) -> bool:
    """Apply ``policy``'s ``logging:`` section if it wrote one and the application has not configured logging.

    Returns whether logging was configured. ``policy`` may be anything a producer accepts: only a
    :class:`~mutepro.policy.Policy` with an explicit ``logging:`` section has an effect.
    """
    from mutepro.policy.effective import Policy

    if not isinstance(policy, Policy) or not policy.logging_written:
        return False
    settings = policy.logging
    if _application_configured():
        get_logger(ROOT).debug(
            "policy_logging_not_applied", reason="the application configured logging", level=settings.level,
            format=settings.format,
        )
        return False
    configure_logging(settings.level, settings.format)
    return True


def reset_logging() -> None:
    """Undo :func:`configure_logging` (mutepro silent again), e.g. before closing the stream it wrote to."""
    root = logging.getLogger(ROOT)
    for handler in [h for h in root.handlers if getattr(h, "_mutepro_cli", False)]:
        root.removeHandler(handler)
    root.setLevel(logging.NOTSET)
