"""Loading policies: each class of bad input is reported with file, line, key path, expected and found."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.errors import ConfigError, MuteproError
from mutepro.policy import PolicyError, load_policy
from tests.unit._policy_helpers import issue_at, issues_of, write


class TestValidPolicies:
    def test_mapping_source_gets_defaults(self) -> None:
        """A mapping with only client settings yields the documented defaults."""
        policy = load_policy({"client": {"bootstrap.servers": "h:9092"}}, env={})
        assert policy.defaults.keyed_policy == "reroute"
        assert policy.defaults.slow_call.threshold_ms == 1000
        assert policy.state.backend == "memory"

    def test_topic_override_deep_merges_over_defaults(self, tmp_path: Path) -> None:
        """A topic entry changes only what it names; the rest comes from defaults."""
        path = write(
            tmp_path,
            """
            version: 1
            defaults:
              slow_call: {threshold_ms: 2000, rate_threshold_pct: 30}
            topics:
              orders: {keyed_policy: hold, slow_call: {threshold_ms: 500}}
        """,
        )
        orders = load_policy(path, env={}).for_topic("orders")
        assert (orders.keyed_policy, orders.slow_call.threshold_ms) == ("hold", 500)
        assert orders.slow_call.rate_threshold_pct == 30

    def test_several_files_merge_in_order(self, tmp_path: Path) -> None:
        """An overlay replaces the base's values key by key and keeps the rest."""
        base = write(
            tmp_path,
            """
            client: {bootstrap.servers: "a:9092", linger.ms: 5}
            defaults: {breaker: {retry_interval_ms: 1000, max_retry_interval_ms: 8000}}
        """,
            "base.yaml",
        )
        prod = write(
            tmp_path,
            """
            client: {bootstrap.servers: "prod:9092"}
            defaults: {breaker: {retry_interval_ms: 2000}}
        """,
            "prod.yaml",
        )
        policy = load_policy(base, prod, env={})
        assert policy.client == {"bootstrap.servers": "prod:9092", "linger.ms": 5}
        assert policy.defaults.breaker.retry_interval_ms == 2000
        assert policy.defaults.breaker.max_retry_interval_ms == 8000
        assert policy.sources == (str(base), str(prod))

    def test_x_keys_hold_anchors(self, tmp_path: Path) -> None:
        """Top-level x-* keys are ignored, so they can hold anchors merged into topics."""
        path = write(
            tmp_path,
            """
            x-strict: &strict {keyed_policy: fail}
            topics:
              payments: {<<: *strict, hold: {max_messages: 5}}
        """,
        )
        payments = load_policy(path, env={}).for_topic("payments")
        assert (payments.keyed_policy, payments.hold.max_messages) == ("fail", 5)



class TestBadInput:
    def test_minimum_calls_above_count_window(self, tmp_path: Path) -> None:
        """minimum_calls larger than a count window is blamed on minimum_calls, not the whole section."""
        path = write(
            tmp_path,
            """
            defaults:
              failure_rate:
                window: {type: count, size: 50}
                minimum_calls: 80
        """,
        )
        issue = issue_at(issues_of(path), "defaults.failure_rate.minimum_calls")
        assert issue.line == 4
        assert issue.expected == "<= window.size (50) for a count window"

    def test_time_window_allows_any_minimum_calls(self) -> None:
        """A time window's size is seconds, so minimum_calls is not compared with it."""
        policy = load_policy({"defaults": {"slow_call": {"window": {"type": "time", "size": 5}, "minimum_calls": 50}}})
        assert policy.defaults.slow_call.minimum_calls == 50

    def test_override_inconsistent_only_with_inherited_value(self, tmp_path: Path) -> None:
        """A topic's smaller window contradicting the inherited minimum_calls is reported under the topic."""
        path = write(
            tmp_path,
            """
            topics:
              orders:
                failure_rate:
                  window: {size: 10}
        """,
        )
        issue = issue_at(issues_of(path), "topics.orders.failure_rate.minimum_calls")
        assert issue.line == 3  # minimum_calls is inherited: the nearest written key is failure_rate
        assert issue.found == "20"

    def test_backoff_cap_below_first_interval(self, tmp_path: Path) -> None:
        """max_retry_interval_ms below retry_interval_ms is an error naming the cap."""
        path = write(
            tmp_path,
            """
            defaults:
              breaker:
                retry_interval_ms: 5000
                max_retry_interval_ms: 2000
        """,
        )
        issue = issue_at(issues_of(path), "defaults.breaker.max_retry_interval_ms")
        assert (issue.line, issue.expected) == (4, ">= retry_interval_ms (5000)")

    def test_redis_backend_needs_url(self, tmp_path: Path) -> None:
        """backend: redis without url is reported at state.url."""
        path = write(
            tmp_path,
            """
            state:
              backend: redis
        """,
        )
        issue = issue_at(issues_of(path), "state.url")
        assert (issue.line, issue.found) == (1, "nothing")

    def test_malformed_yaml_has_line_and_column(self, tmp_path: Path) -> None:
        """A YAML syntax error is reported with its line and column."""
        path = write(
            tmp_path,
            """
            defaults:
              keyed_policy: hold
             slow_call: {}
        """,
        )
        (issue,) = issues_of(path)
        assert (issue.file, issue.line, issue.column) == (str(path), 3, 2)
        assert issue.message.startswith("malformed YAML")

    def test_duplicate_key(self, tmp_path: Path) -> None:
        """A key written twice in one mapping is an error at the second one."""
        path = write(
            tmp_path,
            """
            topics:
              orders: {keyed_policy: hold}
              orders: {keyed_policy: fail}
        """,
        )
        issue = issue_at(issues_of(path), "topics.orders")
        assert issue.line == 3
        assert "line 2" in issue.message

    def test_top_level_must_be_a_mapping(self, tmp_path: Path) -> None:
        """A file holding a list is refused at line 1."""
        (issue,) = issues_of(write(tmp_path, "- a\n- b\n"))
        assert (issue.line, issue.found) == (1, "a list")

    def test_section_of_wrong_type(self, tmp_path: Path) -> None:
        """A section written as a scalar is expected to be a mapping."""
        path = write(
            tmp_path,
            """
            version: 1
            topics: orders
        """,
        )
        issue = issue_at(issues_of(path), "topics")
        assert (issue.line, issue.expected) == (2, "a mapping")

    def test_version_must_be_1(self) -> None:
        """Only schema version 1 exists."""
        issue = issue_at(issues_of({"version": 2}), "version")
        assert (issue.expected, issue.message) == ("1", "version must be 1")

    def test_invalid_topic_regex(self, tmp_path: Path) -> None:
        """A re: pattern that does not compile is reported at its key."""
        path = write(
            tmp_path,
            """
            topics:
              "re:orders-(": {keyed_policy: hold}
        """,
        )
        issue = issue_at(issues_of(path), 'topics."re:orders-("')
        assert issue.line == 2

    def test_invalid_topic_name(self) -> None:
        """A key that is neither a legal topic name nor a pattern is refused."""
        issue = issue_at(issues_of({"topics": {"my topic": {}}}), 'topics."my topic"')
        assert "not a valid topic name" in issue.message

    def test_missing_file(self, tmp_path: Path) -> None:
        """A file that does not exist is an issue naming it, not an OSError."""
        (issue,) = issues_of(tmp_path / "absent.yaml")
        assert issue.file == str(tmp_path / "absent.yaml")

    def test_no_sources(self) -> None:
        """load_policy() with nothing to load is an error."""
        (issue,) = issues_of()
        assert issue.message == "no policy sources given"

    def test_all_errors_at_once_in_line_order(self, tmp_path: Path) -> None:
        """Every problem in a file is reported in one PolicyError, sorted by line."""
        path = write(
            tmp_path,
            """
            defaults:
              keyed_policy: nope
              hold: {max_messages: 0}
            topics:
              orders: {slow_call: {threshold_ms: "x"}}
            statee: {}
        """,
        )
        issues = issues_of(path)
        assert [i.path for i in issues] == [
            "defaults.keyed_policy",
            "defaults.hold.max_messages",
            "topics.orders.slow_call.threshold_ms",
            "statee",
        ]
        assert [i.line for i in issues] == [2, 3, 5, 6]

    def test_cross_checks_run_when_another_section_fails(self) -> None:
        """A bad state section does not hide the defaults' conflict with message.timeout.ms."""
        issues = issues_of(
            {
                "client": {"message.timeout.ms": 1000},
                "defaults": {"slow_call": {"threshold_ms": 2000}},
                "state": {"backend": "disk"},
            }
        )
        assert sorted(i.path for i in issues) == ["defaults.slow_call.threshold_ms", "state.backend"]

    def test_inherited_error_reported_once(self) -> None:
        """A bad default is reported under defaults only, not again for every topic inheriting it."""
        issues = issues_of({"defaults": {"hold": {"max_messages": 0}}, "topics": {"a": {}, "b": {"hold": {}}}})
        assert [i.path for i in issues] == ["defaults.hold.max_messages"]

    def test_error_in_overlay_points_at_overlay(self, tmp_path: Path) -> None:
        """After a merge, an error is located in the file that wrote the bad value."""
        base = write(tmp_path, "defaults:\n  hold: {max_messages: 10}\n", "base.yaml")
        overlay = write(tmp_path, "# prod\ndefaults:\n  hold:\n    max_messages: -1\n", "prod.yaml")
        issue = issue_at(issues_of(base, overlay), "defaults.hold.max_messages")
        assert (issue.file, issue.line) == (str(overlay), 4)

    def test_error_hierarchy_and_text(self, tmp_path: Path) -> None:
        """PolicyError is a ConfigError whose text lists file:line, key path, expected and found."""
        path = write(tmp_path, "defaults:\n  hold: {max_messages: 0}\n")
        with pytest.raises(ConfigError) as caught:
            load_policy(path, env={})
        assert isinstance(caught.value, PolicyError)
        assert isinstance(caught.value, MuteproError)
        assert f"{path}:2:" in str(caught.value)
        assert "defaults.hold.max_messages" in str(caught.value)
        assert "expected a value >= 1, found 0 (integer)" in str(caught.value)
