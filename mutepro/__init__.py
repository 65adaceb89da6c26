"""mutepro: keeps Kafka producers healthy when part of the cluster is not.

    from mutepro import MuteProducer, load_policy

    producer = MuteProducer({"bootstrap.servers": "..."})          # drop-in for confluent_kafka.Producer
    producer = MuteProducer.from_policy("config/minimal.yaml")     # or from a validated YAML policy
    producer = MuteSerializingProducer({..., "value.serializer": s})  # drop-in for SerializingProducer
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mutepro._lazy import lazy_exports

if TYPE_CHECKING:  # the names for type checkers and the API docs; at run time __getattr__ imports each on first use
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

#: public name -> the module defining it. Importing mutepro loads none of them: `mutepro config check` and the
#: CLI start without the producer stack (pybreaker, redis, confluent_kafka); `from mutepro import X` loads X's module.
_LAZY: dict[str, str] = {
    'Delivery': 'mutepro.detect',
    'MuteReason': 'mutepro.detect',
    'PartitionDetector': 'mutepro.detect',
    'PartitionLoad': 'mutepro.detect',
    'Verdict': 'mutepro.detect',
    'ClusterError': 'mutepro.errors',
    'ConfigError': 'mutepro.errors',
    'MuteproError': 'mutepro.errors',
    'PrerequisiteError': 'mutepro.errors',
    'BreakerState': 'mutepro.mute.breaker',
    'MuteBreaker': 'mutepro.mute.breaker',
    'MuteEvent': 'mutepro.mute.manager',
    'MuteEventKind': 'mutepro.mute.manager',
    'ProducerMuteManager': 'mutepro.mute.manager',
    'BreakerStore': 'mutepro.mute.store',
    'MemoryStore': 'mutepro.mute.store',
    'RedisStore': 'mutepro.mute.store',
    'MuteView': 'mutepro.partition',
    'MutingPartitioner': 'mutepro.partition',
    'TopicSnapshot': 'mutepro.partition',
    'BreakerConfig': 'mutepro.policy',
    'BrokerConfig': 'mutepro.policy',
    'CongestionConfig': 'mutepro.policy',
    'FailureRateConfig': 'mutepro.policy',
    'HoldConfig': 'mutepro.policy',
    'KeyedPolicy': 'mutepro.policy',
    'LoggingConfig': 'mutepro.policy',
    'MetricsConfig': 'mutepro.policy',
    'PartitionerConfig': 'mutepro.policy',
    'Policy': 'mutepro.policy',
    'PolicyError': 'mutepro.policy',
    'PolicyIssue': 'mutepro.policy',
    'RescueConfig': 'mutepro.policy',
    'SlowCallConfig': 'mutepro.policy',
    'StateConfig': 'mutepro.policy',
    'TopicPolicy': 'mutepro.policy',
    'WindowConfig': 'mutepro.policy',
    'load_policy': 'mutepro.policy',
    'MuteProducer': 'mutepro.producer',
    'MuteSerializingProducer': 'mutepro.producer',
    'ProducerCounters': 'mutepro.producer',
}

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


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), subpackages=True)
