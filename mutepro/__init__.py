"""mutepro: keeps Kafka producers healthy when part of the cluster is not."""

from __future__ import annotations

from mutepro.errors import ClusterError, ConfigError, MutedPartitionError, MuteproError, PrerequisiteError

__version__ = "0.1.0"

__all__ = [
    "ClusterError",
    "ConfigError",
    "MutedPartitionError",
    "MuteproError",
    "PrerequisiteError",
    "__version__",
]
