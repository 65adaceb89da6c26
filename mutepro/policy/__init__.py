"""YAML-configured policies: schema, loading (merge + ``${ENV}``), validation with file/line errors.

Public API::

    policy = load_policy("config/base.yaml", "config/prod.yaml")   # or mappings; env= for tests
    policy.client                 # librdkafka settings (a fresh dict)
    policy.for_topic("orders")    # effective TopicPolicy: exact entry, else first pattern, else defaults
    policy.to_redacted_dict()     # safe to print or log

See ``config/reference.yaml`` for every key, annotated.
"""

from __future__ import annotations

from mutepro.policy.effective import Policy
from mutepro.policy.errors import PolicyError, PolicyIssue
from mutepro.policy.loader import PolicySource, load_policy
from mutepro.policy.redact import REDACTED, is_secret_key, redact_client, redact_url
from mutepro.policy.schema import (
    BreakerConfig,
    BrokerConfig,
    CongestionConfig,
    FailureRateConfig,
    HoldConfig,
    KeyedPolicy,
    LoggingConfig,
    MetricsConfig,
    PartitionerConfig,
    PolicyDocument,
    RescueConfig,
    SlowCallConfig,
    StateConfig,
    TopicPolicy,
    WindowConfig,
)
from mutepro.policy.schema_export import json_schema

__all__ = [
    "REDACTED",
    "BreakerConfig",
    "BrokerConfig",
    "CongestionConfig",
    "FailureRateConfig",
    "HoldConfig",
    "KeyedPolicy",
    "LoggingConfig",
    "MetricsConfig",
    "PartitionerConfig",
    "Policy",
    "PolicyDocument",
    "PolicyError",
    "PolicyIssue",
    "PolicySource",
    "RescueConfig",
    "SlowCallConfig",
    "StateConfig",
    "TopicPolicy",
    "WindowConfig",
    "is_secret_key",
    "json_schema",
    "load_policy",
    "redact_client",
    "redact_url",
]
