"""The sink's policy (mutepro.spark.sinkpolicy): read inline or from a file, its client block under the kafka.*
options, the sink's defaults under the user's policy, and bad policies named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mutepro.errors import ConfigError
from mutepro.spark.options import parse_options
from mutepro.spark.sinkpolicy import SINK_POLICY_DEFAULTS, load_sink_policy

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


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
