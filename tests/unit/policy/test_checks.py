"""The one client-vs-policy rule (mutepro.policy.checks), shared by ``mutepro config check`` and MuteProducer:
the client's limits read as librdkafka reads them, and a slow-call threshold the client's timeout puts out of reach."""

from __future__ import annotations

import pytest

from mutepro.policy.checks import ClientLimits, limits_of, slow_call_out_of_reach
from mutepro.policy.schema import TopicPolicy
from mutepro.producer import compat


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
