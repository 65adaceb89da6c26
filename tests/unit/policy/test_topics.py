"""Topic entries: exact names win, then patterns in file order (Policy.for_topic: test_effective.py)."""

from __future__ import annotations

from mutepro.policy.source import read_text
from mutepro.policy.topics import build_rules, rule_kind, select_rule


class TestRules:
    def test_kinds(self) -> None:
        """Keys are exact names, globs (*?[) or re: regexes."""
        assert [rule_kind(k) for k in ("orders", "metrics.*", "re:a|b")] == ["exact", "glob", "regex"]

    def test_exact_beats_an_earlier_pattern(self) -> None:
        """An exact entry wins even when a pattern comes first in the file."""
        rules = build_rules(["orders*", "orders"])
        assert select_rule(rules, "orders").key == "orders"  # type: ignore[union-attr]

    def test_first_matching_pattern_wins(self) -> None:
        """Among patterns, file order decides."""
        rules = build_rules(["re:orders-.*", "orders-*"])
        assert select_rule(rules, "orders-eu").key == "re:orders-.*"  # type: ignore[union-attr]

    def test_regex_must_match_the_whole_name(self) -> None:
        """re:orders does not match orders-eu."""
        assert select_rule(build_rules(["re:orders"]), "orders-eu") is None


class TestTopicKeys:
    def test_numeric_topic_key_stays_text(self) -> None:
        """A YAML key like 2024 names topic '2024'."""
        source, issues = read_text("topics:\n  2024: {keyed_policy: hold}\n", "t.yaml")
        assert issues == [] and source is not None
        assert list(source.data["topics"]) == ["2024"]
