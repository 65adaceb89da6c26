"""Planner: scenario files, member specs, plan results (the `plan` command: tests/unit/racks/test_cli_plan.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mutepro.errors import ConfigError
from mutepro.racks.assign.planner import load_scenario, parse_members, plan
from mutepro.racks.cli_plan import plan as plan_command


class TestScenarioFile:
    def test_striped_topic_layout(self, scenario_file: Path):
        """partitions/replication_factor stripe replicas over the brokers in id order."""
        s = load_scenario(scenario_file)
        assert s.cluster.topics["orders"][:4] == ((1,), (2,), (3,), (1,))
        assert s.members[2].generation == 2

    def test_missing_field_names_it(self, tmp_path: Path):
        """A scenario without members says which field is missing."""
        path = tmp_path / "bad.yaml"
        path.write_text("brokers: {1: a}\ntopics: {t: {partitions: 1}}\n")
        with pytest.raises(ConfigError, match="members"):
            load_scenario(path)

    def test_member_spec(self):
        """'c0@rack-a,c1' -> c0 on rack-a, c1 without a rack."""
        members = parse_members("c0@rack-a,c1", ["t"])
        assert [(m.member_id, m.rack, m.topics) for m in members] == [("c0", "rack-a", ("t",)), ("c1", None, ("t",))]


class TestPlan:
    def test_range_plan_is_fully_local(self, scenario_file: Path):
        """RF=1 over 3 racks, one consumer per rack: 0 partitions and 0 bytes read cross-rack."""
        result = plan(load_scenario(scenario_file), "range")
        assert (result.figures.mismatched, result.figures.cross_rack_bytes) == (0, 0)
        assert [str(tp) for tp in result.assignment["c0"]] == ["orders-0", "orders-3"]

    def test_sticky_plan_reports_moving_partition(self, scenario_file: Path):
        """c2 owned orders-0 (rack a): cooperative-sticky moves it to c0 in the follow-up rebalance."""
        result = plan(load_scenario(scenario_file), "cooperative-sticky")
        assert {str(tp): m for tp, m in result.moving.items()} == {"orders-0": "c0"}
        assert result.target_figures.mismatched == 0
        assert result.to_dict()["moving"] == {"orders-0": "c0"}

    def test_unknown_assignor(self, scenario_file: Path):
        """An unsupported assignor name is a ConfigError naming the choices."""
        with pytest.raises(ConfigError, match="cooperative-sticky"):
            plan(load_scenario(scenario_file), "roundrobin")


MINIMAL = """
brokers: {1: r1}
topics:
  payments.v1: {replicas: [[1]], id: 9x_j_dBjjCYzvO4SWaQ2eQ}
  BB: {replicas: [[1]], id: YM5kJtF5INTjHA5pJNXxwQ}
members:
  - {id: gBy5eZkHnburVOXBKwaQkg, topics: [payments.v1, BB]}
  - {id: 1yKDgIdrVTy_xqq_WZTEuQ, topics: [BB, payments.v1]%s}
"""


class TestJoiningMember:
    def _run(self, tmp_path: Path, text: str, *args: str) -> dict[str, object]:
        path = tmp_path / "minimal.yaml"
        path.write_text(text)
        result = CliRunner().invoke(plan_command, ["--scenario", str(path), "--protocol", "consumer", "--json", *args])
        assert result.exit_code == 0, result.output
        doc: dict[str, object] = json.loads(result.output)
        return doc

    def test_existing_group_uses_sorted_subscriptions(self, tmp_path: Path):
        """The brief's case as a group that stands: Java gives the first member BB-0; no alternative."""
        doc = self._run(tmp_path, MINIMAL % "")
        assert doc["target"] == {"gBy5eZkHnburVOXBKwaQkg": ["BB-0"], "1yKDgIdrVTy_xqq_WZTEuQ": ["payments.v1-0"]}
        assert doc["alternative"] is None

    def test_joining_flag_and_option_agree(self, tmp_path: Path):
        """joining: true on the last member and --joining name the same joiner."""
        flagged = self._run(tmp_path, MINIMAL % ", joining: true")
        option = self._run(tmp_path, MINIMAL % "", "--joining", "1yKDgIdrVTy_xqq_WZTEuQ")
        assert flagged["target"] == option["target"]
        assert flagged["target"] == {"gBy5eZkHnburVOXBKwaQkg": ["BB-0"], "1yKDgIdrVTy_xqq_WZTEuQ": ["payments.v1-0"]}

    def test_joiner_not_last_is_refused(self, tmp_path: Path):
        """A joiner joins after every member in the group: listing it earlier is a named error."""
        path = tmp_path / "minimal.yaml"
        path.write_text(MINIMAL % "")
        result = CliRunner().invoke(
            plan_command, ["--scenario", str(path), "--protocol", "consumer", "--joining", "gBy5eZkHnburVOXBKwaQkg"]
        )
        assert result.exit_code != 0 and "list it last" in result.output

    def test_two_joiners_are_refused(self, tmp_path: Path):
        """One heartbeat computes an assignment: only one member can be joining."""
        path = tmp_path / "two.yaml"
        path.write_text(MINIMAL.replace("BB]}", "BB], joining: true}", 1) % ", joining: true")
        with pytest.raises(ConfigError, match="mark only"):
            load_scenario(path)

    def test_joining_must_be_a_boolean(self, tmp_path: Path):
        """joining: yes-please is refused with the field's name."""
        path = tmp_path / "bad.yaml"
        path.write_text(MINIMAL % ", joining: soon")
        with pytest.raises(ConfigError, match=r"members\[1\]\.joining"):
            load_scenario(path)
