"""The schema models: defaults as documented, frozen, strict, cross-field rules usable from code (what is generated
from them: test_schema_export.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from mutepro.policy import (
    BreakerConfig,
    FailureRateConfig,
    KeyedPolicy,
    PolicyDocument,
    PolicyError,
    TopicPolicy,
    WindowConfig,
    load_policy,
)
from mutepro.policy.schema import cross_field_error
from tests.unit._policy_helpers import issue_at, issues_of, write


class TestModels:
    def test_documented_defaults(self) -> None:
        """TopicPolicy() carries the defaults the contract lists."""
        policy = TopicPolicy()
        assert policy.failure_rate.window == WindowConfig(type="count", size=100)
        assert policy.slow_call.window == WindowConfig(type="time", size=10)
        assert (policy.failure_rate.minimum_calls, policy.failure_rate.threshold_pct) == (20, 50.0)
        assert (policy.breaker.retry_interval_ms, policy.breaker.max_retry_interval_ms) == (1000, 4000)
        assert policy.rescue.header == "x-mutepro-rescued-from"

    def test_frozen(self) -> None:
        """Models cannot be changed after construction."""
        with pytest.raises(ValidationError):
            TopicPolicy().keyed_policy = "hold"  # type: ignore[misc]

    def test_nested_dicts_accepted_from_code(self) -> None:
        """Code may build a policy from plain dicts (strict mode still accepts mappings for sub-models)."""
        policy = TopicPolicy.model_validate({"slow_call": {"threshold_ms": 250}})
        assert policy.slow_call.threshold_ms == 250

    def test_cross_field_rule_applies_from_code(self) -> None:
        """minimum_calls above a count window is refused however the model is built."""
        with pytest.raises(ValidationError) as caught:
            FailureRateConfig(window=WindowConfig(type="count", size=10), minimum_calls=20)
        assert caught.value.errors()[0]["ctx"]["field"] == "minimum_calls"

    def test_backoff_cap_equal_to_start_is_fine(self) -> None:
        """max_retry_interval_ms equal to retry_interval_ms means a constant interval."""
        assert BreakerConfig(retry_interval_ms=1000, max_retry_interval_ms=1000).max_retry_interval_ms == 1000

    def test_client_refuses_nested_values(self) -> None:
        """A client value that is a mapping (a mis-indented block) is an error at that key."""
        with pytest.raises(ValidationError) as caught:
            PolicyDocument.model_validate({"client": {"ssl": {"ca": "x"}}})
        assert caught.value.errors()[0]["loc"] == ("client", "ssl")

    def test_cross_field_error_context(self) -> None:
        """cross_field_error carries the field, expected and found for the loader."""
        error = cross_field_error("url", expected="a URL", found="nothing", message="m")
        assert error.context == {"field": "url", "expected": "a URL", "found": "nothing"}


class TestAbsurdSizes:
    """Issue 10 item 7: sizes that would allocate gigabytes (or never end) are refused by config check."""

    @pytest.mark.parametrize(
        ("text", "path"),
        [
            ("defaults: {failure_rate: {window: {size: 10000000000000}}}\n", "defaults.failure_rate.window.size"),
            ("defaults: {slow_call: {window: {type: count, size: 100001}}}\n", "defaults.slow_call.window.size"),
            ("defaults: {slow_call: {window: {type: time, size: 3601}}}\n", "defaults.slow_call.window.size"),
            ("topics: {o: {failure_rate: {window: {type: time, size: 86400}}}}\n", "topics.o.failure_rate.window.size"),
            ("defaults: {hold: {max_messages: 10000000000}}\n", "defaults.hold.max_messages"),
            ("defaults: {breaker: {half_open_probes: 1000000000}}\n", "defaults.breaker.half_open_probes"),
            ("defaults: {breaker: {retry_interval_ms: 10000000000000}}\n", "defaults.breaker.retry_interval_ms"),
        ],
    )
    def test_refused_with_the_field_named(self, tmp_path: Path, text: str, path: str) -> None:
        """The issue names the exact field and the upper bound."""
        issue = issue_at(issues_of(write(tmp_path, text)), path)
        assert "<=" in issue.expected

    def test_bounds_themselves_pass(self, tmp_path: Path) -> None:
        """The largest allowed windows still load."""
        text = (
            "defaults:\n  failure_rate: {window: {size: 100000}}\n"
            "  slow_call: {window: {type: time, size: 3600}}\n"
        )
        policy = load_policy(write(tmp_path, text), env={})
        assert policy.defaults.failure_rate.window.size == 100_000


class TestKeyedPolicyEnum:
    def test_file_value_becomes_the_enum(self) -> None:
        """keyed_policy: hold validates to KeyedPolicy.HOLD, which still equals "hold"."""
        policy = load_policy({"defaults": {"keyed_policy": "hold"}}, env={})
        assert policy.defaults.keyed_policy is KeyedPolicy.HOLD
        assert policy.defaults.keyed_policy == "hold"
        assert TopicPolicy().keyed_policy is KeyedPolicy.REROUTE

    def test_dumps_as_plain_strings(self) -> None:
        """model_dump gives the plain name in both modes (so yaml.safe_dump of a dump keeps working)."""
        import yaml

        tp = TopicPolicy(keyed_policy=KeyedPolicy.FAIL)
        assert type(tp.model_dump()["keyed_policy"]) is str
        assert tp.model_dump(mode="json")["keyed_policy"] == "fail"
        assert "keyed_policy: fail" in yaml.safe_dump(tp.model_dump())

    def test_unknown_value_is_named(self) -> None:
        """A typo is an issue listing the choices and suggesting the closest one."""
        with pytest.raises(PolicyError, match=r"did you mean 'hold'") as info:
            load_policy({"defaults": {"keyed_policy": "holdd"}}, env={})
        assert "'reroute', 'hold', 'fail', 'ignore'" in str(info.value)


class TestBreakerCap:
    def test_a_cap_left_out_follows_a_longer_first_wait(self) -> None:
        """retry_interval_ms 60000 alone: the cap (default 4000) follows it instead of refusing the policy."""
        policy = TopicPolicy.model_validate({"breaker": {"retry_interval_ms": 60000}})
        assert (policy.breaker.retry_interval_ms, policy.breaker.max_retry_interval_ms) == (60000, 60000)

    def test_a_cap_written_below_the_first_wait_is_refused(self) -> None:
        with pytest.raises(ValidationError, match="backoff cap is below the first retry interval"):
            TopicPolicy.model_validate({"breaker": {"retry_interval_ms": 60000, "max_retry_interval_ms": 4000}})
