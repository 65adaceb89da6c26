"""The one client-vs-policy rule (mutepro.policy.checks), shared by ``mutepro config check`` and MuteProducer:
the client's limits read as librdkafka reads them, and a slow-call threshold the client's timeout puts out of reach."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.policy import load_policy
from mutepro.policy.checks import ClientLimits, limits_of, slow_call_out_of_reach
from mutepro.policy.schema import TopicPolicy
from mutepro.producer import compat
from tests.unit._policy_helpers import issue_at, issues_of, write


class TestClientLimits:
    def test_defaults(self) -> None:
        """Nothing set: librdkafka's defaults."""
        assert limits_of({}) == ClientLimits()
        assert ClientLimits().message_timeout_ms == 300_000

    def test_the_later_of_the_alias_and_the_key_wins(self) -> None:
        """message.timeout.ms and delivery.timeout.ms both set: the later one in the dict, as in librdkafka."""
        assert limits_of({"message.timeout.ms": 1000, "delivery.timeout.ms": 2000}).message_timeout_ms == 2000
        assert limits_of({"delivery.timeout.ms": 2000, "message.timeout.ms": 1000}).message_timeout_ms == 1000

    @pytest.mark.parametrize("timeout_ms, out_of_reach", [(0, False), (500, True), (1000, True), (1001, False)])
    def test_slow_call_out_of_reach(self, timeout_ms: int, out_of_reach: bool) -> None:
        """threshold 1000 ms: out of reach under a timeout <= 1000 ms; 0 means no timeout (always reachable)."""
        limits = limits_of({"message.timeout.ms": timeout_ms})
        assert slow_call_out_of_reach(TopicPolicy(), limits) is out_of_reach


class TestProducerAgreesWithConfigCheck:
    @pytest.mark.parametrize("timeout_ms", [0, 500, 1000, 5000])
    def test_the_producer_disables_exactly_what_the_check_reports(self, timeout_ms: int) -> None:
        """MuteProducer turns the slow-call rule off where (and only where) ``config check`` reports it out of
        reach; message.timeout.ms 0 (no timeout) is accepted by both and keeps the rule."""
        policy = TopicPolicy()
        adapted = compat.adapt_slow_call(policy, compat.message_timeout_ms({"message.timeout.ms": timeout_ms}))
        assert isinstance(adapted, TopicPolicy)
        reported = slow_call_out_of_reach(policy, limits_of({"message.timeout.ms": timeout_ms}))
        assert adapted.slow_call.enabled is not reported


class TestAgainstTheClient:
    """Where a policy contradicts its client: block, reported at the key with what was expected (through
    load_policy, as ``config check`` and MuteProducer see it)."""

    def test_slow_threshold_checked_against_message_timeout_alias(self) -> None:
        """delivery.timeout.ms (librdkafka's alias) lowers the ceiling of slow_call.threshold_ms too."""
        issues = issues_of({"client": {"delivery.timeout.ms": "800"}})
        issue = issue_at(issues, "defaults.slow_call.threshold_ms")
        assert "delivery.timeout.ms = 800" in issue.expected

    def test_zero_message_timeout_means_no_ceiling(self) -> None:
        """message.timeout.ms 0 (infinite in librdkafka) accepts any slow-call threshold."""
        policy = load_policy({"client": {"message.timeout.ms": 0}, "defaults": {"slow_call": {"threshold_ms": 10**7}}})
        assert policy.defaults.slow_call.threshold_ms == 10**7

    def test_slow_threshold_above_message_timeout(self, tmp_path: Path) -> None:
        """A topic's slow-call threshold at or above message.timeout.ms is reported at the topic's key."""
        path = write(
            tmp_path,
            """
            client:
              message.timeout.ms: 30000
            topics:
              orders:
                slow_call:
                  threshold_ms: 45000
        """,
        )
        issue = issue_at(issues_of(path), "topics.orders.slow_call.threshold_ms")
        assert issue.line == 6
        assert issue.expected == "a value below message.timeout.ms = 30000"
        assert issue.found == "45000 (integer)"

    def test_congestion_floor_above_queue(self, tmp_path: Path) -> None:
        """congestion.min_messages above queue.buffering.max.messages could never trigger."""
        path = write(
            tmp_path,
            """
            client: {queue.buffering.max.messages: 500}
            defaults:
              congestion: {min_messages: 600}
        """,
        )
        issue = issue_at(issues_of(path), "defaults.congestion.min_messages")
        assert (issue.line, issue.expected) == (3, "a value <= queue.buffering.max.messages = 500")

    def test_non_numeric_client_timeout(self, tmp_path: Path) -> None:
        """A message.timeout.ms mutepro cannot read as a number is reported at the client key."""
        path = write(
            tmp_path,
            """
            client:
              message.timeout.ms: soon
        """,
        )
        issue = issue_at(issues_of(path), 'client."message.timeout.ms"')
        assert issue.line == 2
