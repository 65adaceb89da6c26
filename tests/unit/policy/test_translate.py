"""Pydantic's errors as a user reads them (mutepro.policy.translate): the key path, what was expected and what was
found, a "did you mean" for an unknown key or choice, and the section a misplaced key belongs in."""

from __future__ import annotations

from pathlib import Path

from mutepro.policy.schema import BreakerConfig, PolicyDocument, SlowCallConfig, TopicPolicy
from mutepro.policy.translate import model_at
from tests.unit._policy_helpers import issue_at, issues_of, write


class TestIssues:
    def test_unknown_key_suggests_the_near_one(self, tmp_path: Path) -> None:
        """A misspelt key is an error at its line with a did-you-mean."""
        path = write(
            tmp_path,
            """
            version: 1
            defaults:
              slow_call:
                treshold_ms: 500
        """,
        )
        issue = issue_at(issues_of(path), "defaults.slow_call.treshold_ms")
        assert (issue.file, issue.line, issue.column) == (str(path), 4, 5)
        assert "did you mean 'threshold_ms'?" in issue.message
        assert "threshold_ms" in issue.expected

    def test_top_level_topic_setting_points_to_defaults(self) -> None:
        """A TopicPolicy key written at the top level is pointed to defaults:."""
        issue = issue_at(issues_of({"keyed_policy": "hold"}), "keyed_policy")
        assert "did you mean defaults.keyed_policy?" in issue.message

    def test_top_level_librdkafka_key_points_to_client(self) -> None:
        """A dotted librdkafka setting written at the top level is pointed to client:."""
        issue = issue_at(issues_of({"bootstrap.servers": "h:9092"}), '"bootstrap.servers"')
        assert "client.bootstrap.servers" in issue.message

    def test_wrong_type_names_expected_and_found(self, tmp_path: Path) -> None:
        """A quoted number for an integer field is a type error telling to drop the quotes."""
        path = write(
            tmp_path,
            """
            defaults:
              hold: {max_messages: "500"}
        """,
        )
        issue = issue_at(issues_of(path), "defaults.hold.max_messages")
        assert issue.line == 2
        assert (issue.expected, issue.found) == ("an integer", "'500' (string)")
        assert "without quotes" in issue.message

    def test_boolean_is_not_an_integer(self) -> None:
        """true for an integer field is refused rather than read as 1."""
        issue = issue_at(
            issues_of({"defaults": {"breaker": {"half_open_probes": True}}}),
            "defaults.breaker.half_open_probes",
        )
        assert issue.found == "true (boolean)"

    def test_negative_threshold_is_out_of_range(self, tmp_path: Path) -> None:
        """A negative threshold names the bound it breaks."""
        path = write(
            tmp_path,
            """
            defaults:
              slow_call:
                threshold_ms: -5
        """,
        )
        issue = issue_at(issues_of(path), "defaults.slow_call.threshold_ms")
        assert issue.line == 3
        assert (issue.expected, issue.found) == ("a value >= 1", "-5 (integer)")

    def test_percentage_above_100(self) -> None:
        """threshold_pct is a percentage: 150 is out of range."""
        issue = issue_at(
            issues_of({"defaults": {"failure_rate": {"threshold_pct": 150}}}),
            "defaults.failure_rate.threshold_pct",
        )
        assert issue.expected == "a value <= 100"

    def test_unknown_keyed_policy(self, tmp_path: Path) -> None:
        """An unknown keyed policy lists the choices and suggests the near one."""
        path = write(
            tmp_path,
            """
            topics:
              orders:
                keyed_policy: rerout
        """,
        )
        issue = issue_at(issues_of(path), "topics.orders.keyed_policy")
        assert issue.line == 3
        assert issue.expected == "one of 'reroute', 'hold', 'fail', 'ignore'"
        assert "did you mean 'reroute'?" in issue.message



class TestModelAt:
    def test_the_model_validating_a_nested_mapping(self) -> None:
        assert model_at(PolicyDocument, ()) is PolicyDocument
        assert model_at(PolicyDocument, ("defaults",)) is TopicPolicy
        assert model_at(PolicyDocument, ("defaults", "slow_call")) is SlowCallConfig
        assert model_at(TopicPolicy, ("breaker",)) is BreakerConfig

    def test_none_below_a_value_or_an_unknown_key(self) -> None:
        assert model_at(PolicyDocument, ("defaults", "slow_call", "threshold_ms")) is None
        assert model_at(PolicyDocument, ("nope",)) is None
        assert model_at(PolicyDocument, ("topics",)) is None  # a dict of topic policies, not one model
