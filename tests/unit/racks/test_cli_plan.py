"""`mutepro racks plan` (mutepro.racks.cli_plan) on a scenario file: JSON and table output, what to give when
nothing is given, an assignor of the other protocol refused, and a consumer-protocol plan compared with the
classic one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mutepro.racks.cli_plan import plan as plan_command


class TestPlanCommand:
    def test_json_output(self, scenario_file: Path) -> None:
        """--json prints the assignment and figures."""
        out = CliRunner().invoke(plan_command, ["--scenario", str(scenario_file), "--json"])
        assert out.exit_code == 0, out.output
        assert json.loads(out.output)["figures"]["mismatched"] == 0

    def test_table_output(self, scenario_file: Path) -> None:
        """The default output is a table listing every member."""
        out = CliRunner().invoke(plan_command, ["--scenario", str(scenario_file)])
        assert out.exit_code == 0, out.output
        assert "c0" in out.output and "cross-rack" in out.output

    def test_needs_an_input(self) -> None:
        """Without a scenario or a cluster the command explains what to give."""
        out = CliRunner().invoke(plan_command, [])
        assert out.exit_code != 0
        assert "--scenario" in out.output

    @pytest.mark.parametrize(("protocol", "assignor"), [("consumer", "cooperative-sticky"), ("classic", "uniform")])
    def test_an_assignor_of_the_other_protocol_is_refused(
        self, scenario_file: Path, protocol: str, assignor: str
    ) -> None:
        out = CliRunner().invoke(
            plan_command, ["--scenario", str(scenario_file), "--protocol", protocol, "--assignor", assignor]
        )
        assert out.exit_code == 2 and f"not an assignor of the {protocol} protocol" in out.output

    def test_a_consumer_plan_is_compared_with_the_classic_one(self, scenario_file: Path) -> None:
        """uniform (ignores racks) against its classic counterpart, cooperative-sticky with client.rack."""
        out = CliRunner().invoke(plan_command, ["--scenario", str(scenario_file), "--protocol", "consumer", "--json"])
        assert out.exit_code == 0, out.output
        doc = json.loads(out.output)
        assert doc["protocol"] == "consumer" and doc["classic"]["assignor"] == "cooperative-sticky"
        assert doc["classic"]["target_figures"]["mismatched"] == 0
        table = CliRunner().invoke(plan_command, ["--scenario", str(scenario_file), "--protocol", "consumer"])
        assert table.exit_code == 0 and "classic protocol, cooperative-sticky with client.rack" in table.output
