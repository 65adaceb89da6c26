"""mutepro: keeps Kafka producers healthy when part of the cluster is not.

    from mutepro import MuteProducer, load_policy

    producer = MuteProducer({"bootstrap.servers": "..."})          # drop-in for confluent_kafka.Producer
    producer = MuteProducer.from_policy("config/minimal.yaml")     # or from a validated YAML policy
    producer = MuteSerializingProducer({..., "value.serializer": s})  # drop-in for SerializingProducer
"""

from __future__ import annotations

from mutepro.detect import Delivery, MuteReason, PartitionDetector, PartitionLoad, Verdict
from mutepro.errors import ClusterError, ConfigError, MuteproError, PrerequisiteError
from mutepro.mute.breaker import BreakerState, MuteBreaker
from mutepro.mute.manager import MuteEvent, MuteEventKind, ProducerMuteManager
from mutepro.mute.store import BreakerStore, MemoryStore, RedisStore
from mutepro.partition import MuteView, MutingPartitioner, TopicSnapshot
from mutepro.policy import (
    BreakerConfig,
    BrokerConfig,
    CongestionConfig,
    FailureRateConfig,
    HoldConfig,
    KeyedPolicy,
    LoggingConfig,
    MetricsConfig,
    PartitionerConfig,
    Policy,
    PolicyError,
    PolicyIssue,
    RescueConfig,
    SlowCallConfig,
    StateConfig,
    TopicPolicy,
    WindowConfig,
    load_policy,
)
from mutepro.producer import MuteProducer, MuteSerializingProducer, ProducerCounters

__version__ = "0.2.0"

__all__ = [
    "BreakerConfig",
    "BreakerState",
    "BreakerStore",
    "BrokerConfig",
    "ClusterError",
    "ConfigError",
    "CongestionConfig",
    "Delivery",
    "FailureRateConfig",
    "HoldConfig",
    "KeyedPolicy",
    "LoggingConfig",
    "MemoryStore",
    "MetricsConfig",
    "MuteBreaker",
    "MuteEvent",
    "MuteEventKind",
    "MuteProducer",
    "MuteReason",
    "MuteSerializingProducer",
    "MuteView",
    "MuteproError",
    "MutingPartitioner",
    "PartitionDetector",
    "PartitionLoad",
    "PartitionerConfig",
    "Policy",
    "PolicyError",
    "PolicyIssue",
    "PrerequisiteError",
    "ProducerCounters",
    "ProducerMuteManager",
    "RedisStore",
    "RescueConfig",
    "SlowCallConfig",
    "StateConfig",
    "TopicPolicy",
    "TopicSnapshot",
    "Verdict",
    "WindowConfig",
    "__version__",
    "load_policy",
]
