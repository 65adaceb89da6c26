"""Which delivery errors count against a partition (mutepro.detect.errors)."""

from __future__ import annotations


class TestHealthErrors:
    def test_errors_of_the_partition_count(self) -> None:
        """Timeouts, lost leaders, too few replicas, broken connections count against the partition."""
        from confluent_kafka import KafkaError

        from mutepro.detect.errors import counts_against_partition

        for code in (KafkaError._MSG_TIMED_OUT, KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.NOT_ENOUGH_REPLICAS,
                     KafkaError._TRANSPORT, KafkaError.REQUEST_TIMED_OUT, KafkaError.KAFKA_STORAGE_ERROR):
            assert counts_against_partition(code), code

    def test_errors_of_the_message_or_application_do_not(self) -> None:
        """Record too large, invalid record, authorization, unknown topic/partition, purges say nothing about it."""
        from confluent_kafka import KafkaError

        from mutepro.detect.errors import counts_against_partition

        for code in (KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.INVALID_RECORD, KafkaError.TOPIC_AUTHORIZATION_FAILED,
                     KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION, KafkaError._PURGE_QUEUE,
                     KafkaError.CLUSTER_AUTHORIZATION_FAILED):
            assert not counts_against_partition(code), code
