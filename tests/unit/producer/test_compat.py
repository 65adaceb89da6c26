"""confluent_kafka.Producer's edges as MuteProducer reproduces them (mutepro.producer.compat): the constructor's
config arguments, poll/produce argument checks, produce_batch's validation and error reports, the slow-call rule
adapted to the message timeout, and Ctrl-C inside a librdkafka callback turned back into KeyboardInterrupt.
(Compared against the real client itself: tests/unit/test_dropin.py.)"""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from mutepro.policy.loader import load_policy
from mutepro.policy.schema import TopicPolicy
from mutepro.producer import compat


class TestConfigFromArgs:
    def test_keywords_override_the_dict_which_is_not_touched(self) -> None:
        """Producer(conf, key=value): a new dict, the keyword winning; the caller's dict unchanged."""
        conf = {"bootstrap.servers": "a:1", "linger.ms": 5}
        merged = compat.config_from_args(conf, {"linger.ms": 50})
        assert merged == {"bootstrap.servers": "a:1", "linger.ms": 50}
        assert conf["linger.ms"] == 5 and merged is not conf

    def test_keywords_alone_are_the_config(self) -> None:
        assert compat.config_from_args(None, {"bootstrap.servers": "a:1"}) == {"bootstrap.servers": "a:1"}

    @pytest.mark.parametrize(("config", "match"), [(None, "expected configuration dict$"), ("x", "got str")])
    def test_no_config_or_not_a_mapping_is_a_type_error(self, config: Any, match: str) -> None:
        with pytest.raises(TypeError, match=match):
            compat.config_from_args(config, {})


class TestArgumentChecks:
    @pytest.mark.parametrize("timeout", [0, 1.5, -1])
    def test_real_numbers_are_timeouts(self, timeout: float) -> None:
        compat.check_timeout(timeout)

    @pytest.mark.parametrize(("timeout", "name"), [(None, "NoneType"), ("1", "str")])
    def test_anything_else_is_the_plain_clients_type_error(self, timeout: object, name: str) -> None:
        with pytest.raises(TypeError, match=f"must be real number, not {name}"):
            compat.check_timeout(timeout)

    def test_partition_must_be_an_integer(self) -> None:
        compat.check_partition(-1)
        with pytest.raises(TypeError, match="'str' object cannot be interpreted as an integer"):
            compat.check_partition("1")

    def test_closed_error_says_what_the_real_client_says(self) -> None:
        err = compat.closed_error()
        assert isinstance(err, RuntimeError) and str(err) == compat.CLOSED == "Producer has been closed"


class TestValidateBatch:
    def test_each_message_takes_the_batch_partition_and_callback_unless_it_has_its_own(self) -> None:
        def batch_cb(err: Any, msg: Any) -> None: ...

        def own_cb(err: Any, msg: Any) -> None: ...

        batch = compat.validate_batch(
            [{"value": b"a"}, {"value": "b", "key": b"k", "partition": 3, "callback": own_cb,
                               "headers": [("h", b"v")]}],
            partition=-1, callback=batch_cb,
        )
        assert [(m.value, m.key, m.partition, m.callback) for m in batch] == [
            (b"a", None, -1, batch_cb), ("b", b"k", 3, own_cb)
        ]

    @pytest.mark.parametrize(("messages", "error", "match"), [
        ("notalist", TypeError, "messages must be a list"),
        ([{"value": b"ok"}, "x"], TypeError, "Message at index 1 must be a dict"),
        ([{"value": 1}], TypeError, "Message value at index 0 must be bytes or str"),
        ([{"key": 1}], TypeError, "Message key at index 0 must be bytes or str"),
        ([{"partition": "1"}], TypeError, "Message partition at index 0 must be int"),
        ([{"timestamp": 1}], NotImplementedError, "not currently supported in batch mode"),
        ([{"headers": "h"}], ValueError, "Invalid headers at index 0"),
        ([{"headers": [(1, b"v")]}], ValueError, "Invalid headers at index 0"),
        ([{"headers": {"h": 3}}], ValueError, "Invalid headers at index 0"),
    ])
    def test_a_bad_message_rejects_the_whole_batch(self, messages: Any, error: type[Exception], match: str) -> None:
        with pytest.raises(error, match=match):
            compat.validate_batch(messages, -1, None)


class TestErrorCodes:
    def test_batch_error_is_a_kafka_error_naming_the_failure(self) -> None:
        err = compat.batch_error(KafkaError._QUEUE_FULL)
        assert err.code() == KafkaError._QUEUE_FULL
        assert err.str().startswith("Message failed: ")

    def test_error_code_of_what_produce_raised(self) -> None:
        """BufferError is a full queue; a KafkaException carries its code; anything else is an invalid argument."""
        assert compat.error_code(BufferError()) == KafkaError._QUEUE_FULL
        assert compat.error_code(KafkaException(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE))) == (
            KafkaError.MSG_SIZE_TOO_LARGE
        )
        assert compat.error_code(TypeError("bad")) == KafkaError._INVALID_ARG


class TestAdaptSlowCall:
    def test_the_alias_is_read_like_config_check(self) -> None:
        assert compat.message_timeout_ms({"delivery.timeout.ms": 700}) == 700

    def test_a_topic_policy_within_reach_is_returned_as_is(self) -> None:
        policy = TopicPolicy()
        assert compat.adapt_slow_call(policy, 5000) is policy
        assert compat.adapt_slow_call(policy, 0) is policy

    def test_only_the_policy_topics_out_of_reach_lose_the_rule_and_it_is_said_once(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Timeout 3000 ms: the defaults' 1000 ms threshold stays, the topic's 4000 ms one is turned off."""
        policy = load_policy({"topics": {"slow": {"slow_call": {"threshold_ms": 4000}}}})
        with caplog.at_level(logging.WARNING, logger="mutepro.producer"):
            adapted = compat.adapt_slow_call(policy, 3000)
        assert not isinstance(adapted, TopicPolicy)
        assert adapted.for_topic("slow").slow_call.enabled is False
        assert adapted.defaults.slow_call.enabled is True
        assert policy.for_topic("slow").slow_call.enabled is True  # the given policy is not changed
        assert [r.message.count("slow_call disabled") for r in caplog.records] == [1]

    def test_a_policy_within_reach_everywhere_is_returned_as_is(self) -> None:
        policy = load_policy({"topics": {"t": {"slow_call": {"threshold_ms": 200}}}})
        assert compat.adapt_slow_call(policy, 3000) is policy


class TestLostInterrupts:
    def test_only_the_lost_exception_error_is_converted(self) -> None:
        """The wrapper turns exactly confluent-kafka's lost-exception SystemError into KeyboardInterrupt."""

        @compat.surfaces_interrupts
        def lost() -> None:
            raise SystemError("<method 'poll' of 'cimpl.Producer' objects> returned NULL without setting an exception")

        @compat.surfaces_interrupts
        def other() -> None:
            raise SystemError("something else")

        if sys.version_info < (3, 12):
            with pytest.raises(KeyboardInterrupt):
                lost()
        with pytest.raises(SystemError, match="something else"):
            other()

    def test_the_converter_turns_only_the_lost_exception_error(self) -> None:
        """compat.reraise_lost_interrupt: the lost-exception SystemError becomes KeyboardInterrupt; others stay."""
        lost = SystemError("<method 'poll' of 'cimpl.Producer' objects> returned NULL without setting an exception")
        with pytest.raises(KeyboardInterrupt):
            compat.reraise_lost_interrupt(lost)
        with pytest.raises(SystemError, match="else"):
            compat.reraise_lost_interrupt(SystemError("else"))
