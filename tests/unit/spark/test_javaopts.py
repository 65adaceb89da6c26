"""Java producer option names pasted from jobs that used Spark's built-in Kafka sink (mutepro.spark.javaopts):
translated where librdkafka has the same setting, refused with what to use where it has not."""

from __future__ import annotations

import pytest

from mutepro.errors import ConfigError
from mutepro.spark.javaopts import translate_java_option
from mutepro.spark.options import parse_options
from tests.unit.spark.test_options import BASE


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
            translate_java_option(java, "x")

    def test_a_value_that_must_be_an_integer_is_named(self) -> None:
        with pytest.raises(ConfigError, match=r"kafka\.buffer\.memory: expected an integer, got 'lots'"):
            translate_java_option("buffer.memory", "lots")

    def test_a_java_option_given_to_the_sink_is_refused_before_any_row(self) -> None:
        with pytest.raises(ConfigError, match=r"kafka\.max\.block\.ms"):
            parse_options({**BASE, "kafka.max.block.ms": "1000"})
