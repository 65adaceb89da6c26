"""Which delivery errors say something about a partition's health.

A partition is muted for failures of the partition or its broker: timeouts, a leader that moved or is gone, too
few in-sync replicas, a broken connection, a failing disk. Errors of the message or the application -- a record
too large for the topic, an invalid record, missing authorization, an unknown topic -- come back just as fast
from a perfectly healthy partition; counted as failures, 40 oversized messages muted a healthy partition and
moved its keys away. Those are reported to the application and never judged.
"""

from __future__ import annotations

from confluent_kafka import KafkaError

#: Final delivery errors that count against the partition (and its leader) in the failure-rate window.
HEALTH_ERRORS: frozenset[int] = frozenset(
    code
    for code in (
        KafkaError._MSG_TIMED_OUT,
        KafkaError._TIMED_OUT,
        KafkaError._TIMED_OUT_QUEUE,
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_ENOUGH_REPLICAS,
        KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        KafkaError.BROKER_NOT_AVAILABLE,
        KafkaError.REPLICA_NOT_AVAILABLE,
        KafkaError.NETWORK_EXCEPTION,
        KafkaError.KAFKA_STORAGE_ERROR,
        KafkaError.FENCED_LEADER_EPOCH,
        KafkaError.UNKNOWN_LEADER_EPOCH,
    )
)


def counts_against_partition(code: int) -> bool:
    """True for an error of the partition or its broker; False for one of the message or the application."""
    return code in HEALTH_ERRORS
