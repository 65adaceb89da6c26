"""The sink's options: Spark's Kafka sink names and mutepro's own (Java names: test_javaopts.py; the policy:
test_sinkpolicy.py)."""

from __future__ import annotations

import pytest

from mutepro.errors import ConfigError
from mutepro.spark.options import parse_options
from mutepro.spark.sinkpolicy import CLIENT_DEFAULTS

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


class TestParseOptions:
    def test_kafka_prefix_goes_to_the_client(self) -> None:
        """kafka.* options reach librdkafka without the prefix, over the sink's defaults."""
        opts = parse_options({**BASE, "kafka.linger.ms": "20", "topic": "orders"})
        assert opts.client == {"bootstrap.servers": "127.0.0.1:9092", "linger.ms": "20"}
        assert opts.client_config()["linger.ms"] == "20"
        assert opts.topic == "orders"

    def test_partitioner_defaults_to_murmur2_random(self) -> None:
        """Keys land where Spark's built-in (Java) sink put them unless the user says otherwise."""
        assert parse_options(BASE).client_config()["partitioner"] == "murmur2_random"
        mine = parse_options({**BASE, "kafka.partitioner": "consistent"})
        assert mine.client_config()["partitioner"] == "consistent"
        assert CLIENT_DEFAULTS["queue.buffering.max.kbytes"] == "131072"

    def test_names_compare_case_insensitively(self) -> None:
        """Spark hands options over case-insensitively: includeHeaders and includeheaders are one option."""
        assert parse_options({**BASE, "includeheaders": "false"}).include_headers is False
        assert parse_options({**BASE, "mutepro.IdHeaders": "false"}).id_headers is False
        assert parse_options({**BASE, "mutepro.idformat": "STRINGS"}).id_format == "strings"

    def test_identity_format_defaults_to_binary_and_names_the_choices(self) -> None:
        """mutepro.idFormat: binary unless set; a bad value fails naming the option and the choices."""
        assert parse_options(BASE).id_format == "binary"
        with pytest.raises(ConfigError, match=r"mutepro.idFormat.*binary, strings"):
            parse_options({**BASE, "mutepro.idFormat": "json"})
        assert parse_options({**BASE, "mutepro.flushTimeout": "30"}).flush_timeout_s == 30.0

    def test_the_flush_hedge_is_on_by_default_and_zero_turns_it_off(self) -> None:
        """mutepro.hedgeAfter: 1 s unless set; seconds as given; 0 means off (None)."""
        assert parse_options(BASE).hedge_after_s == 1.0
        assert parse_options({**BASE, "mutepro.hedgeAfter": "2.5"}).hedge_after_s == 2.5
        assert parse_options({**BASE, "mutepro.hedgeafter": "0"}).hedge_after_s is None

    def test_unknown_option_is_named(self) -> None:
        """A typo fails with the option's name and the known ones."""
        with pytest.raises(ConfigError, match=r"'topik'.*known"):
            parse_options({**BASE, "topik": "x"})

    def test_spark_internal_options_are_accepted(self) -> None:
        """checkpointLocation and path, which Spark passes along, are not errors."""
        parse_options({**BASE, "checkpointLocation": "/tmp/x", "path": "p"})

    def test_bootstrap_servers_required(self) -> None:
        """Without kafka.bootstrap.servers (or client.bootstrap.servers in the policy) the option is named."""
        with pytest.raises(ConfigError, match=r"kafka\.bootstrap\.servers"):
            parse_options({"topic": "t"})

    def test_librdkafka_refusal_on_the_driver(self) -> None:
        """An option librdkafka does not know fails when parsed, naming it, not later in every task."""
        with pytest.raises(ConfigError, match=r"buffer\.memroy"):
            parse_options({**BASE, "kafka.buffer.memroy": "1"})

    @pytest.mark.parametrize(("name", "value"), [
        ("includeHeaders", "maybe"), ("mutepro.flushTimeout", "-1"), ("mutepro.flushTimeout", "0"),
        ("mutepro.hedgeAfter", "-1"), ("mutepro.hedgeAfter", "soon"), ("mutepro.hedgeAfter", "nan"),
    ])
    def test_bad_values_are_named(self, name: str, value: str) -> None:
        """A bad boolean or number fails naming the option."""
        with pytest.raises(ConfigError, match=name):
            parse_options({**BASE, name: value})


class TestRackAware:
    """Rack-aware producing in the sink: the Java names pass the driver's check (each executor's own rack:
    tests/unit/spark/test_cache.py)."""

    def test_the_java_key_passes_the_drivers_librdkafka_check(self) -> None:
        opts = parse_options({**BASE, "kafka.partitioner.rack.aware": "true", "kafka.client.rack": "use1-az1"})
        assert opts.client_config()["partitioner.rack.aware"] == "true"
        assert opts.client_config()["client.rack"] == "use1-az1"
