"""The exception hierarchy: one root, :class:`MuteproError`, so callers can catch everything mutepro raises.

Where an error wraps a failure from Kafka, the original ``KafkaError`` (or exception) is kept on the
``kafka_error`` attribute / ``__cause__`` so nothing the client reported is lost.
"""

from __future__ import annotations

from typing import Any


class MuteproError(Exception):
    """Root of every exception mutepro raises."""

    def __init__(self, message: str, *, kafka_error: Any | None = None) -> None:
        super().__init__(message)
        self.kafka_error = kafka_error


class ClusterError(MuteproError):
    """The local Kafka cluster could not be resolved, started, reached or stopped."""


class PrerequisiteError(ClusterError):
    """A tool the local cluster needs (java, mvn, a Kafka distribution) is missing or unusable."""


class ConfigError(MuteproError):
    """A configuration value is invalid; the message names the field and the fix."""


class ExtensionMissing(MuteproError, ImportError):
    """mutepro's C extension ``mutepro.producer._fastpath`` is not importable; the message names the fix (install
    the wheel, or a C compiler and reinstall from source). An ImportError too."""
