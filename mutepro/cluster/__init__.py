"""A real local Kafka cluster (KRaft, one rack per broker) with fault injection, for tests, demos and benchmarks."""

from __future__ import annotations

from mutepro.cluster.env import can_inject_faults, from_env, use_cluster
from mutepro.cluster.faults import Limper
from mutepro.cluster.jars import DEFAULT_KAFKA_VERSION, KafkaDistribution, resolve_kafka
from mutepro.cluster.launcher import BrokerInfo, LocalCluster
from mutepro.cluster.spec import ClusterSpec
from mutepro.cluster.topics import create_topic

__all__ = [
    "DEFAULT_KAFKA_VERSION",
    "BrokerInfo",
    "ClusterSpec",
    "KafkaDistribution",
    "Limper",
    "LocalCluster",
    "can_inject_faults",
    "create_topic",
    "from_env",
    "resolve_kafka",
    "use_cluster",
]
