"""confluent_kafka.Producer's edges as MuteProducer reproduces them (mutepro.producer.compat): argument checks with
the real client's exception types and texts, the config copy, the slow-call rule adapted to the message timeout,
``produce_batch``'s validation, and the lost ``KeyboardInterrupt`` of Python < 3.12."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from confluent_kafka import KafkaError

from mutepro.policy.effective import Policy
from mutepro.policy.loader import load_policy
from mutepro.policy.schema import SlowCallConfig, TopicPolicy
from mutepro.producer import compat


class TestArguments:
    @pytest.mark.parametrize("timeout", [None, "1", [1]])
    def test_a_timeout_must_be_a_real_number(self, timeout: Any) -> None:
        with pytest.raises(TypeError, match="must be real number, not"):
            compat.check_timeout(timeout)

    def test_numbers_are_timeouts(self) -> None:
        for timeout in (0, 1.5, -1):
            compat.check_timeout(timeout)

    def test_a_partition_must_be_an_integer(self) -> None:
        with pytest.raises(TypeError, match="'NoneType' object cannot be interpreted as an integer"):
            compat.check_partition(None)
        compat.check_partition(-1)

    def test_the_closed_error_is_the_real_clients(self) -> None:
        assert str(compat.closed_error()) == "Producer has been closed"


class TestConfig:
    def test_a_copy_with_keywords_overriding(self) -> None:
        given = {"bootstrap.servers": "a", "acks": 1}
        conf = compat.config_from_args(given, {"acks": "all"})
        assert conf == {"bootstrap.servers": "a", "acks": "all"} and given["acks"] == 1

    def test_keywords_alone(self) -> None:
        assert compat.config_from_args(None, {"bootstrap.servers": "a"}) == {"bootstrap.servers": "a"}

    def test_nothing_or_not_a_dict_is_the_real_clients_type_error(self) -> None:
        with pytest.raises(TypeError, match="expected configuration dict"):
            compat.config_from_args(None, {})
        with pytest.raises(TypeError, match="expected configuration dict, got list"):
            compat.config_from_args([], {})

    def test_the_message_timeout_and_its_alias(self) -> None:
        assert compat.message_timeout_ms({"message.timeout.ms": 1234}) == 1234
        assert compat.message_timeout_ms({"delivery.timeout.ms": 4321}) == 4321


class TestSlowCallAdapted:
    def test_a_threshold_not_below_the_timeout_turns_the_rule_off_and_says_so(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        policy = TopicPolicy(slow_call=SlowCallConfig(threshold_ms=5000))
        with caplog.at_level(logging.WARNING, logger="mutepro.producer"):
            adapted = compat.adapt_slow_call(policy, 5000)
        assert isinstance(adapted, TopicPolicy) and not adapted.slow_call.enabled
        assert policy.slow_call.enabled  # the caller's policy is not changed
        assert "slow_call disabled" in caplog.text

    def test_a_reachable_threshold_or_no_timeout_keeps_the_policy(self) -> None:
        policy = TopicPolicy(slow_call=SlowCallConfig(threshold_ms=5000))
        assert compat.adapt_slow_call(policy, 5001) is policy
        assert compat.adapt_slow_call(policy, 0) is policy

    def test_each_topic_of_a_policy_is_adapted_on_its_own(self) -> None:
        policy = load_policy({"defaults": {"slow_call": {"threshold_ms": 1000}},
                              "topics": {"slow": {"slow_call": {"threshold_ms": 9000}}}})  # fmt: skip
        adapted = compat.adapt_slow_call(policy, 5000)
        assert isinstance(adapted, Policy)
        assert adapted.for_topic("other").slow_call.enabled and not adapted.for_topic("slow").slow_call.enabled


class TestBatch:
    def test_valid_messages_take_the_batch_partition_and_callback_unless_their_own(self) -> None:
        def cb(*_: Any) -> None:
            pass

        def own(*_: Any) -> None:
            pass

        batch = compat.validate_batch(
            [{"value": b"a"}, {"value": "b", "key": b"k", "partition": 2, "callback": own, "headers": [("h", b"v")]}],
            partition=1, callback=cb,
        )
        assert [(m.value, m.key, m.partition, m.callback) for m in batch] == [(b"a", None, 1, cb), ("b", b"k", 2, own)]

    @pytest.mark.parametrize(("messages", "error", "text"), [
        ("x", TypeError, "messages must be a list"),
        (["x"], TypeError, "Message at index 0 must be a dict"),
        ([{"value": 1}], TypeError, "Message value at index 0 must be bytes or str"),
        ([{"value": b"a"}, {"key": 1}], TypeError, "Message key at index 1 must be bytes or str"),
        ([{"partition": "0"}], TypeError, "Message partition at index 0 must be int"),
        ([{"timestamp": 1}], NotImplementedError, "Message timestamps are not currently supported in batch mode"),
        ([{"headers": [("h",)]}], ValueError, "Invalid headers at index 0"),
        ([{"headers": {1: b"v"}}], ValueError, "Invalid headers at index 0"),
    ])
    def test_a_bad_message_rejects_the_whole_batch_as_the_real_client(
        self, messages: Any, error: type[Exception], text: str
    ) -> None:
        with pytest.raises(error, match=text):
            compat.validate_batch(messages, partition=-1, callback=None)

    def test_the_error_set_on_a_rejected_message(self) -> None:
        err = compat.batch_error(KafkaError._QUEUE_FULL)
        assert err.code() == KafkaError._QUEUE_FULL and err.str().startswith("Message failed: ")

    def test_error_codes_of_what_produce_raised(self) -> None:
        assert compat.error_code(BufferError("full")) == KafkaError._QUEUE_FULL
        assert compat.error_code(Exception(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE))) == (
            KafkaError.MSG_SIZE_TOO_LARGE
        )
        assert compat.error_code(TypeError("bad")) == KafkaError._INVALID_ARG


class TestLostInterrupt:
    def test_the_lost_exception_becomes_keyboard_interrupt(self) -> None:
        lost = SystemError("<built-in method poll> returned NULL without setting an exception")
        with pytest.raises(KeyboardInterrupt) as caught:
            compat.reraise_lost_interrupt(lost)
        assert caught.value.__cause__ is lost

    def test_any_other_error_is_raised_as_it_is(self) -> None:
        other = SystemError("something else")
        with pytest.raises(SystemError, match="something else"):
            compat.reraise_lost_interrupt(other)

    def test_a_wrapped_method_surfaces_it(self) -> None:
        @compat.surfaces_interrupts
        def poll() -> int:
            raise SystemError("poll returned NULL without setting an exception")

        import sys

        expected: type[BaseException] = SystemError if sys.version_info >= (3, 12) else KeyboardInterrupt
        with pytest.raises(expected):
            poll()
