"""structlog setup for mutepro's command line and for applications that want mutepro's defaults.

The library itself never configures logging on import (that is the application's call); it only emits events on
named structlog loggers (``mutepro.producer``, ``mutepro.cluster``...). ``configure_logging`` is what the CLI uses:
events go to stderr, so stdout stays clean for ``--json`` output.

A policy's ``logging:`` section is the application's call too, made in the policy file: a producer built from a
policy that *writes* a ``logging:`` section applies it (``apply_policy_logging``), unless the application
configured structlog itself, which always wins. A policy without the section changes nothing (the defaults the
schema fills in are not a request to log).
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def configure_logging(level: str = "info", fmt: str = "console", stream: TextIO | None = None) -> None:
    """Send structlog events at ``level`` and above to ``stream`` (stderr) as ``console`` text or ``json`` lines."""
    if level not in _LEVELS:
        raise ValueError(f"logging.level: expected one of {sorted(_LEVELS)}, got {level!r}")
    if fmt not in ("console", "json"):
        raise ValueError(f"logging.format: expected 'console' or 'json', got {fmt!r}")
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(stream or sys.stderr),
        cache_logger_on_first_use=False,
    )


def apply_policy_logging(policy: Any) -> bool:
    """Apply ``policy``'s ``logging:`` section if it wrote one and the application has not configured structlog.

    Returns whether logging was configured. ``policy`` may be anything a producer accepts: only a
    :class:`~mutepro.policy.Policy` with an explicit ``logging:`` section has an effect.
    """
    from mutepro.policy.effective import Policy

    if not isinstance(policy, Policy) or not policy.logging_written:
        return False
    settings = policy.logging
    if structlog.is_configured():
        structlog.get_logger("mutepro").debug(
            "policy logging section not applied: the application configured structlog",
            level=settings.level,
            format=settings.format,
        )
        return False
    configure_logging(settings.level, settings.format)
    return True
