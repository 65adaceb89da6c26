"""The sink's options: Spark's Kafka sink names, Java names translated or refused, mutepro's own, the policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mutepro.errors import ConfigError
from mutepro.spark.javaopts import translate_java_option
from mutepro.spark.options import parse_options
from mutepro.spark.sinkpolicy import CLIENT_DEFAULTS, SINK_POLICY_DEFAULTS, load_sink_policy

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


class TestPolicy:
    def test_inline_json_and_file(self, tmp_path: Path) -> None:
        """The policy option takes inline JSON or a YAML path; its client block joins the client settings."""
        inline = parse_options({**BASE, "policy": json.dumps({"defaults": {"keyed_policy": "hold"}})})
        assert inline.policy == {"defaults": {"keyed_policy": "hold"}}
        path = tmp_path / "job.yaml"
        path.write_text("client:\n  linger.ms: 50\ndefaults:\n  keyed_policy: fail\n")
        from_file = parse_options({**BASE, "policy": str(path)})
        assert from_file.client_config()["linger.ms"] == 50
        assert load_sink_policy(from_file.policy, from_file.client).for_topic("x").keyed_policy == "fail"

    def test_options_override_the_policy_client(self, tmp_path: Path) -> None:
        """kafka.* options win over the policy's client block."""
        path = tmp_path / "job.yaml"
        path.write_text("client:\n  linger.ms: 50\n")
        assert parse_options({**BASE, "policy": str(path), "kafka.linger.ms": "7"}).client_config()["linger.ms"] == "7"

    def test_policy_client_env_resolved_where_the_producer_is_built(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """${ENV} in the policy's client block travels unresolved and is resolved with the executor's env."""
        path = tmp_path / "job.yaml"
        path.write_text("client:\n  bootstrap.servers: ${KAFKA_BOOTSTRAP:-127.0.0.1:9092}\n")
        opts = parse_options({"policy": str(path)})
        assert opts.client_config()["bootstrap.servers"] == "127.0.0.1:9092"
        monkeypatch.setenv("KAFKA_BOOTSTRAP", "broker-7:9092")
        assert opts.client_config()["bootstrap.servers"] == "broker-7:9092"

    def test_sink_defaults_under_the_user_policy(self) -> None:
        """Without a policy the slow-call threshold is the sink's 5 s (executors are CPU-bound); a policy wins."""
        assert SINK_POLICY_DEFAULTS["defaults"]["slow_call"]["threshold_ms"] == 5000
        opts = parse_options(BASE)
        assert load_sink_policy(opts.policy, opts.client).for_topic("t").slow_call.threshold_ms == 5000
        mine = {"defaults": {"slow_call": {"threshold_ms": 2000}}}
        assert load_sink_policy(mine, opts.client).for_topic("t").slow_call.threshold_ms == 2000

    @pytest.mark.parametrize(
        ("content", "needle"),
        [("defaults:\n  slow_call:\n    threshold_ms: -5\n", "threshold_ms"), ("- a\n- b\n", "mapping")],
    )
    def test_bad_policy_file_is_named(self, tmp_path: Path, content: str, needle: str) -> None:
        """An invalid policy fails naming the option and the offending key."""
        path = tmp_path / "bad.yaml"
        path.write_text(content)
        with pytest.raises(ConfigError, match=f"(?s)policy.*{needle}"):
            parse_options({**BASE, "policy": str(path)})

    def test_missing_policy_file(self, tmp_path: Path) -> None:
        """A path that exists nowhere (nor under SparkFiles) names the path and --files."""
        with pytest.raises(ConfigError, match="--files"):
            parse_options({**BASE, "policy": str(tmp_path / "nope.yaml")})

    def test_policy_contradicting_the_client_fails(self) -> None:
        """A slow-call threshold above message.timeout.ms is caught on the driver."""
        with pytest.raises(ConfigError, match="policy"):
            parse_options({**BASE, "kafka.message.timeout.ms": "3000"})


class TestUnreachableRedis:
    def test_local_state_said_once(self, capsys: pytest.CaptureFixture[str]) -> None:
        """A policy's Redis that cannot be reached gives in-process mute state and one warning, not two."""
        from mutepro.logs import configure_logging, reset_logging
        from mutepro.mute.store import MemoryStore
        from mutepro.spark import cache

        configure_logging("info", "json")
        policy = load_sink_policy(
            {"state": {"backend": "redis", "url": "redis://127.0.0.1:1/0", "key_prefix": "unreachable"}},
            parse_options(BASE).client,
        )
        cache._said.discard("redis://127.0.0.1:1/0")
        try:
            assert isinstance(cache._store(policy), MemoryStore)
            assert isinstance(cache._store(policy), MemoryStore)
        finally:
            reset_logging()
        assert capsys.readouterr().err.count("spark_mute_state_local") == 1


class TestRackAware:
    """Rack-aware producing in the sink: the Java names pass the driver's check, and each executor takes its own
    rack from its environment when kafka.client.rack is not given."""

    def test_the_java_key_passes_the_drivers_librdkafka_check(self) -> None:
        opts = parse_options({**BASE, "kafka.partitioner.rack.aware": "true", "kafka.client.rack": "use1-az1"})
        assert opts.client_config()["partitioner.rack.aware"] == "true"
        assert opts.client_config()["client.rack"] == "use1-az1"

    def test_an_executor_without_client_rack_takes_its_environments(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from mutepro.spark.cache import _executor_rack

        monkeypatch.setenv("MUTEPRO_CLIENT_RACK", "use1-az3")
        policy = load_sink_policy({}, {"bootstrap.servers": "b:1", "partitioner.rack.aware": "true"})
        config = dict(policy.client)
        _executor_rack(config, policy)
        assert config["client.rack"] == "use1-az3"

    def test_a_given_client_rack_or_rack_awareness_off_is_left_alone(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from mutepro.spark.cache import _executor_rack

        monkeypatch.setenv("MUTEPRO_CLIENT_RACK", "use1-az3")
        on = load_sink_policy({}, {"bootstrap.servers": "b:1", "partitioner.rack.aware": "true", "client.rack": "x"})
        config = dict(on.client)
        _executor_rack(config, on)
        assert config["client.rack"] == "x"
        off = load_sink_policy({}, {"bootstrap.servers": "b:1"})
        config = dict(off.client)
        _executor_rack(config, off)
        assert "client.rack" not in config
