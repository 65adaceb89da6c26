"""Spark's Kafka sink options under their Java names (mutepro.spark.javaopts): translated to librdkafka's, values
converted, or refused naming the option and what to use instead."""

from __future__ import annotations

import pytest

from mutepro.errors import ConfigError
from mutepro.spark.javaopts import translate_java_option
from mutepro.spark.options import parse_options

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


class TestJavaOptions:
    @pytest.mark.parametrize(
        ("java", "value", "rdkafka", "converted"),
        [
            ("delivery.timeout.ms", "30000", "message.timeout.ms", "30000"),
            ("buffer.memory", "33554432", "queue.buffering.max.kbytes", "32768"),
            ("max.request.size", "2000000", "message.max.bytes", "2000000"),
            ("send.buffer.bytes", "131072", "socket.send.buffer.bytes", "131072"),
            ("linger.ms", "5", "linger.ms", "5"),
        ],
    )
    def test_translated(self, java: str, value: str, rdkafka: str, converted: str) -> None:
        """Java names with a librdkafka equivalent are translated (values converted)."""
        assert translate_java_option(java, value) == (rdkafka, converted)

    @pytest.mark.parametrize(
        ("java", "hint"),
        [
            ("max.block.ms", "no librdkafka equivalent"),
            ("sasl.jaas.config", "kafka.sasl.username"),
            ("partitioner.class", "kafka.partitioner"),
            ("value.serializer", "binary"),
            ("ssl.truststore.location", "kafka.ssl.ca.location"),
        ],
    )
    def test_refused_with_the_librdkafka_name(self, java: str, hint: str) -> None:
        """Java-only names are refused, naming the option (with its prefix) and what to use."""
        with pytest.raises(ConfigError, match=f"kafka.{java}.*{hint}"):
            parse_options({**BASE, f"kafka.{java}": "x"})
