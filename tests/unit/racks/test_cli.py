"""The `racks` click group, for the commands that need no broker."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mutepro.errors import ConfigError
from mutepro.racks.cli import racks


class TestPlacementCommand:
    def test_json_matches_kip36_vector(self) -> None:
        """--brokers with the KIP-36 racks prints Java's assignment as JSON."""
        result = CliRunner().invoke(
            racks,
            ["placement", "--algorithm", "kip36", "--brokers", "0:r1,1:r3,2:r3,3:r2,4:r2,5:r1", "-p", "7", "-r", "3",
             "--json"],
        )
        assert result.exit_code == 0, result.output
        doc = json.loads(result.output)
        assert doc["assignment"]["6"] == [0, 4, 2]
        assert doc["rack_aware"] is True

    def test_table_output(self) -> None:
        """The table lists each partition with its racks."""
        result = CliRunner().invoke(racks, ["placement", "--brokers", "1:a,2:b,3:c", "-p", "3", "-r", "2"])
        assert result.exit_code == 0, result.output
        assert "rack-aware: yes" in result.output

    def test_striped_uses_the_controller_broker_order(self) -> None:
        """1014, 1042, 1140 reach the placer as 1042, 1140, 1014 (HashMap buckets 2, 4, 6): Java's replicas."""
        result = CliRunner().invoke(
            racks,
            ["placement", "--brokers", "1014:C#,1042:BB,1140:C#", "--seed", "-7889932286183599930", "-p", "1",
             "-r", "3", "--json"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        doc = json.loads(result.output)
        assert doc["assignment"] == {"0": [1140, 1042, 1014]}
        assert doc["broker_order"] == [1042, 1140, 1014]
        assert doc["registration_order_assumed"] == []

    def test_bucket_mates_are_reported(self) -> None:
        """1 and 17 share a bucket: the table says the given order stands for registration order."""
        result = CliRunner().invoke(racks, ["placement", "--brokers", "17:a,1:b,2:c", "--seed", "5", "-p", "1"])
        assert result.exit_code == 0, result.output
        assert "brokers 17, 1 share a bucket" in " ".join(result.output.split())

    def test_partial_racks_error(self) -> None:
        """Brokers with and without racks fail with the placement error."""
        result = CliRunner().invoke(
            racks, ["placement", "--algorithm", "kip36", "--brokers", "1:a,2", "-p", "3", "-r", "2"]
        )
        assert isinstance(result.exception, ConfigError)
        assert "Not all brokers have rack information" in str(result.exception)

    def test_audit_needs_bootstrap(self) -> None:
        """Commands that talk to Kafka ask for --bootstrap-servers."""
        result = CliRunner().invoke(racks, ["audit"], env={"MUTEPRO_BOOTSTRAP": ""})
        assert result.exit_code == 2 and "--bootstrap-servers" in result.output


class TestInstanceIdCommand:
    def test_json(self) -> None:
        """An explicit id with a suffix and the session-timeout advice as JSON."""
        result = CliRunner().invoke(
            racks, ["instance-id", "--explicit", "pod 0", "--suffix", "1", "--restart-seconds", "40", "--json"]
        )
        assert result.exit_code == 0, result.output
        doc = json.loads(result.output)
        assert doc["group_instance_id"] == "pod-0-1"
        assert doc["config"]["session.timeout.ms"] == 60000
