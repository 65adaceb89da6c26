"""${ENV} interpolation: forms, defaults, re-typing of plain scalars, and errors at the key's line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.policy import load_policy
from mutepro.policy.interpolate import retype, substitute
from tests.unit._policy_helpers import issue_at, issues_of, write


class TestSubstitute:
    def test_set_variable(self) -> None:
        """${NAME} is replaced by the variable's value."""
        assert substitute("${HOST}:9092", {"HOST": "kafka"}) == ("kafka:9092", False)

    def test_colon_dash_default_when_unset_or_empty(self) -> None:
        """${NAME:-d} falls back when the variable is unset or empty."""
        assert substitute("${A:-d}", {}) == ("d", True)
        assert substitute("${A:-d}", {"A": ""}) == ("d", True)

    def test_dash_default_only_when_unset(self) -> None:
        """${NAME-d} keeps an empty value and falls back only when unset."""
        assert substitute("${A-d}", {"A": ""})[0] == ""
        assert substitute("${A-d}", {})[0] == "d"

    def test_default_may_contain_colons(self) -> None:
        """A default such as a URL or host:port is taken whole."""
        assert substitute("${U:-redis://h:6379/0}", {})[0] == "redis://h:6379/0"

    def test_escaped_reference_is_literal(self) -> None:
        """$${ writes a literal ${ and is not looked up."""
        assert substitute("a$${B}c", {"B": "x"})[0] == "a${B}c"

    @pytest.mark.parametrize(
        ("env", "value"),
        [({}, "x"), ({"B": "b"}, "b"), ({"A": "a", "B": "b"}, "a"), ({"A": ""}, "x")],
    )
    def test_nested_default(self, env: dict[str, str], value: str) -> None:
        """${A:-${B:-x}} falls back to B, then to x (issue 10 item 7: it used to become a literal)."""
        assert substitute("${A:-${B:-x}}", env) == (value, True)

    def test_nested_default_inside_text(self) -> None:
        """Nested references work inside longer text and next to other references."""
        assert substitute("${H:-${H2:-k}}:${P:-9092}/x", {"H2": "kafka"}) == ("kafka:9092/x", False)

    def test_nested_default_needs_its_variable_only_when_used(self) -> None:
        """An unset ${B} inside A's default is not an error while A is set."""
        assert substitute("${A:-${B}}", {"A": "a"})[0] == "a"
        with pytest.raises(Exception, match="B is not set"):
            substitute("${A:-${B}}", {})

    def test_dollar_without_brace_is_kept(self) -> None:
        """A lone $ (a password like pa$$word) is not a reference."""
        assert substitute("pa$$word $5", {})[0] == "pa$$word $5"

    def test_nested_retypes_to_int(self, tmp_path: Path) -> None:
        """A plain nested reference resolving to digits is an int, as a single one would be."""
        path = write(tmp_path, "defaults:\n  slow_call:\n    threshold_ms: ${A:-${B:-700}}\n")
        assert load_policy(path, env={}).defaults.slow_call.threshold_ms == 700


class TestRetype:
    @pytest.mark.parametrize(
        ("text", "value"),
        [("500", 500), ("-3", -3), ("2.5", 2.5), ("true", True), ("False", False), ("null", None), ("", None)],
    )
    def test_plain_scalars(self, text: str, value: object) -> None:
        """Interpolated text is typed as YAML would type it written plainly."""
        assert retype(text) == value

    def test_other_text_stays_a_string(self) -> None:
        """Host:port and words stay strings."""
        assert retype("127.0.0.1:9092") == "127.0.0.1:9092"


class TestInterpolationInPolicies:
    def test_plain_reference_becomes_an_integer(self, tmp_path: Path) -> None:
        """threshold_ms: ${SLOW_MS:-500} is the integer from the environment."""
        path = write(tmp_path, "defaults:\n  slow_call:\n    threshold_ms: ${SLOW_MS:-500}\n")
        assert load_policy(path, env={"SLOW_MS": "750"}).defaults.slow_call.threshold_ms == 750
        assert load_policy(path, env={}).defaults.slow_call.threshold_ms == 500

    def test_client_values_stay_strings(self, tmp_path: Path) -> None:
        """Under client a value is never re-typed (a password 0123 must stay '0123')."""
        path = write(tmp_path, "client:\n  sasl.password: ${PW}\n  linger.ms: ${LINGER:-5}\n")
        assert load_policy(path, env={"PW": "0123"}).client == {"sasl.password": "0123", "linger.ms": "5"}

    def test_quoted_reference_stays_a_string(self, tmp_path: Path) -> None:
        """A quoted "${X}" is a string, so an integer field rejects it."""
        path = write(tmp_path, 'defaults:\n  hold:\n    max_messages: "${N:-5}"\n')
        issue = issue_at(issues_of(path), "defaults.hold.max_messages")
        assert issue.found == "'5' (string)"

    def test_mapping_sources_are_interpolated(self) -> None:
        """Mappings passed from code get the same interpolation."""
        policy = load_policy({"state": {"backend": "redis", "url": "${R:-redis://h:1/0}"}}, env={})
        assert policy.state.url == "redis://h:1/0"

    def test_unset_variable_is_an_error_at_its_line(self, tmp_path: Path) -> None:
        """${NAME} with NAME unset names the variable, the key path and the line."""
        path = write(tmp_path, "version: 1\nclient:\n  bootstrap.servers: ${KAFKA_BOOTSTRAP}\n")
        issue = issue_at(issues_of(path, env={}), 'client."bootstrap.servers"')
        assert issue.line == 3
        assert "KAFKA_BOOTSTRAP is not set" in issue.message

    def test_reference_replaced_by_overlay_is_not_required(self, tmp_path: Path) -> None:
        """Interpolation runs after merging: a value the overlay replaces needs no variable."""
        base = write(tmp_path, "client:\n  sasl.password: ${PROD_PASSWORD}\n", "base.yaml")
        dev = write(tmp_path, "client:\n  sasl.password: dev\n", "dev.yaml")
        assert load_policy(base, dev, env={}).client["sasl.password"] == "dev"

    def test_bad_reference_syntax(self) -> None:
        """A reference that is not ${NAME...} and an unterminated ${ are both reported."""
        issues = issues_of({"state": {"key_prefix": "${1X}", "url": "redis://${H"}})
        assert "not a valid reference" in issue_at(issues, "state.key_prefix").message
        assert "unterminated" in issue_at(issues, "state.url").message
