"""mutepro config check / show / schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mutepro.policy.cli import config
from tests.unit._policy_helpers import write

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for name in ("KAFKA_BOOTSTRAP", "KAFKA_PASSWORD", "MUTEPRO_REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    return CliRunner()


class TestCheck:
    def test_valid_files_exit_0(self, runner: CliRunner) -> None:
        """check of valid files exits 0 and says ok."""
        result = runner.invoke(config, ["check", str(ROOT / "config" / "reference.yaml")])
        assert result.exit_code == 0
        assert result.output.startswith("ok: ")

    def test_invalid_file_exits_1_with_every_error(self, runner: CliRunner, tmp_path: Path) -> None:
        """check of a bad file exits 1 and lists each problem with file:line and key path."""
        path = write(tmp_path, "defaults:\n  keyed_policy: holdd\n  hold: {max_messages: 0}\n")
        result = runner.invoke(config, ["check", str(path)])
        assert result.exit_code == 1
        assert f"{path}:2:3: defaults.keyed_policy" in result.output
        assert f"{path}:3:" in result.output and "defaults.hold.max_messages" in result.output


class TestShow:
    def test_effective_policy_merged_and_redacted(self, runner: CliRunner, tmp_path: Path) -> None:
        """show prints the merged policy as YAML with secrets as ***."""
        base = write(tmp_path, "client:\n  sasl.password: s3cr3t\n  bootstrap.servers: a:1\n", "base.yaml")
        overlay = write(tmp_path, "defaults:\n  keyed_policy: fail\n", "prod.yaml")
        result = runner.invoke(config, ["show", str(base), str(overlay)])
        assert result.exit_code == 0
        shown = yaml.safe_load(result.output)
        assert shown["client"] == {"sasl.password": "***", "bootstrap.servers": "a:1"}
        assert shown["defaults"]["keyed_policy"] == "fail"
        assert "s3cr3t" not in result.output

    def test_json_for_one_topic(self, runner: CliRunner) -> None:
        """show --json --topic gives that topic's effective policy and the entry that matched."""
        path = ROOT / "config" / "reference.yaml"
        result = runner.invoke(config, ["show", str(path), "--json", "--topic", "metrics.cpu"])
        shown = json.loads(result.output)
        assert shown["matched"] == "metrics.*"
        assert shown["policy"]["keyed_policy"] == "ignore"

    def test_show_of_invalid_file_exits_1(self, runner: CliRunner, tmp_path: Path) -> None:
        """show refuses an invalid policy like check does."""
        result = runner.invoke(config, ["show", str(write(tmp_path, "versio: 1\n"))])
        assert result.exit_code == 1
        assert "did you mean 'version'?" in result.output


class TestSchema:
    def test_json_schema(self, runner: CliRunner) -> None:
        """schema prints a JSON Schema describing topic entries as TopicPolicy and forbidding unknown keys."""
        result = runner.invoke(config, ["schema"])
        schema = json.loads(result.output)
        assert schema["$schema"].startswith("https://json-schema.org/")
        assert schema["properties"]["topics"]["additionalProperties"] == {"$ref": "#/$defs/TopicPolicy"}
        assert schema["additionalProperties"] is False
        keyed = schema["$defs"]["TopicPolicy"]["properties"]["keyed_policy"]
        assert keyed["enum"] == ["reroute", "hold", "fail", "ignore"]


SECRET_TEXT = "hunter2-Kx9-never-shown"


class TestNoSecretInCheckOrShow:
    """Issue 10 item 2: neither check nor show prints a password, whichever way it was written."""

    @pytest.mark.parametrize(
        "text",
        [
            f'client: "sasl.password={SECRET_TEXT}"\n',
            f'state: {{backend: redis, url: ":{SECRET_TEXT}@localhost:6379/0"}}\n',
            f'state: {{backend: redis, url: "localhost:{SECRET_TEXT}@h:6379"}}\n',
            f"client: {{sasl.pasword: {SECRET_TEXT}}}\n",
            "defaults: {keyed_policy: '${SECRET}'}\n",
            "defaults: {keyed_policy: ${SECRET}, hold: {max_messages: 0}}\n",
            "topics: {orders: {slow_call: {threshold_ms: '${SECRET}'}}}\n",
        ],
    )
    @pytest.mark.parametrize("command", ["check", "show"])
    def test_invalid_policies(
        self, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, command: str
    ) -> None:
        """Errors quote ${NAME} or *** for every secret-bearing value; the secret itself never appears."""
        monkeypatch.setenv("SECRET", SECRET_TEXT)
        result = runner.invoke(config, [command, str(write(tmp_path, text))])
        assert result.exit_code == 1, result.output
        assert SECRET_TEXT not in result.output

    def test_secret_in_a_non_secret_field_is_hidden_by_show(
        self, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A ${SECRET} in client.id / rescue.header / key_prefix is *** in show (also --topic and --json)."""
        monkeypatch.setenv("SECRET", SECRET_TEXT)
        text = (
            "client: {client.id: '${SECRET}'}\n"
            "defaults: {rescue: {header: '${SECRET}'}}\n"
            "topics: {orders: {rescue: {header: 'x-${SECRET}'}}}\n"
            "state: {backend: redis, url: 'redis://:${SECRET}@h:6379/0', key_prefix: '${SECRET}'}\n"
        )
        path = write(tmp_path, text)
        for args in (["show", str(path)], ["show", "--json", str(path)], ["show", "--topic", "orders", str(path)],
                     ["show", "--topic", "other", str(path)]):
            result = runner.invoke(config, args)
            assert result.exit_code == 0, result.output
            assert SECRET_TEXT not in result.output and "***" in result.output, args

    def test_misspelt_client_key_is_flagged(self, runner: CliRunner, tmp_path: Path) -> None:
        """check names an unknown librdkafka key and suggests the real one."""
        path = write(tmp_path, "client:\n  bootstrap.servers: h:9092\n  sasl.pasword: x\n")
        result = runner.invoke(config, ["check", str(path)])
        assert result.exit_code == 1
        assert f"{path}:3:3" in result.output and "did you mean 'sasl.password'" in result.output

    def test_known_client_keys_pass(self, runner: CliRunner, tmp_path: Path) -> None:
        """Real librdkafka and confluent-kafka keys (and a plugin's unknown ones) are accepted."""
        text = "client: {acks: all, enable.idempotence: true, linger.ms: 5, sasl.password: x, stats_cb: f}\n"
        assert runner.invoke(config, ["check", str(write(tmp_path, text))]).exit_code == 0
        plugin = "client: {plugin.library.paths: monitoring-interceptor, confluent.monitoring.x: 1}\n"
        assert runner.invoke(config, ["check", str(write(tmp_path, plugin, "p.yaml"))]).exit_code == 0
