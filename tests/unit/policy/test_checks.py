"""The client-vs-policy rules (mutepro.policy.checks), shared by ``mutepro config check``, policy loading and
MuteProducer: librdkafka's limits read from the client block, and the policy values they put out of reach."""

from __future__ import annotations

from pathlib import Path

import pytest

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


class TestCrossChecksWhenLoading:
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
