"""MuteProducer's construction inputs (mutepro.producer.options): the policy argument, the application's
callbacks taken out of the config, librdkafka's numeric settings and their defaults, the retired ``accelerate=``,
the built-in partitioner and its sticky choice, and rack-aware partitioning's keys."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from mutepro.errors import ConfigError
from mutepro.policy.effective import Policy
from mutepro.policy.schema import DEFAULT_QUEUE_MAX_MESSAGES, PartitionerConfig, TopicPolicy
from mutepro.producer import options


class TestPolicyArgument:
    def test_none_is_the_defaults_and_a_policy_is_kept(self) -> None:
        assert options.coerce_policy(None) == TopicPolicy()
        given = TopicPolicy(keyed_policy="fail")
        assert options.coerce_policy(given) is given

    def test_a_mapping_is_loaded_and_validated(self) -> None:
        loaded = options.coerce_policy({"defaults": {"keyed_policy": "fail"}})
        assert options.topic_policy(loaded, "any").keyed_policy == "fail"

    def test_anything_else_is_a_type_error_naming_the_forms(self) -> None:
        with pytest.raises(TypeError, match="policy must be a Policy, a TopicPolicy, a path or a mapping"):
            options.coerce_policy(42)

    def test_one_topic_policy_serves_every_topic(self) -> None:
        given = TopicPolicy(keyed_policy="fail")
        assert options.topic_policy(given, "a") is given and options.topic_policy(given, "") is given

    def test_the_empty_topic_reads_a_policys_defaults(self) -> None:
        policy = options.coerce_policy(
            {"defaults": {"keyed_policy": "fail"}, "topics": {"t": {"keyed_policy": "hold"}}}
        )
        assert isinstance(policy, Policy)
        assert options.topic_policy(policy, "").keyed_policy == "fail"
        assert options.topic_policy(policy, "t").keyed_policy == "hold"


class TestChecks:
    def test_mutepro_keys_in_the_client_config_are_refused_with_where_they_go(self) -> None:
        with pytest.raises(ConfigError, match=r"mutepro\.a: mutepro settings do not go in the librdkafka config"):
            options.refuse_mutepro_keys({"bootstrap.servers": "x", "mutepro.b": 1, "mutepro.a": 2})
        options.refuse_mutepro_keys({"bootstrap.servers": "x"})

    @pytest.mark.parametrize("tick", [0.0005, 11.0])
    def test_a_tick_outside_its_range_names_the_range(self, tick: float) -> None:
        with pytest.raises(ConfigError, match=r"tick_interval_s: .* outside 0.001-10 s"):
            options.check_tick(tick)

    def test_the_ticks_range_is_inclusive(self) -> None:
        options.check_tick(0.001)
        options.check_tick(10)


class TestUserCallbacks:
    def test_callables_are_taken_out_and_the_rest_stays(self) -> None:
        def cb(*_: Any) -> None:
            pass

        conf: dict[str, Any] = {"on_delivery": cb, "error_cb": cb, "stats_cb": "not callable", "acks": 1}
        users = options.UserCallbacks(conf)
        assert users.on_delivery is cb and users.error_cb is cb and users.stats_cb is None
        # the bad value stays, so the wrapped client raises what confluent_kafka.Producer raises for it
        assert conf == {"stats_cb": "not callable", "acks": 1}

    def test_only_errors_is_taken_when_a_bool(self) -> None:
        conf: dict[str, Any] = {"delivery.report.only.error": True}
        assert options.UserCallbacks(conf).only_errors is True and conf == {}
        odd: dict[str, Any] = {"delivery.report.only.error": "true"}
        assert options.UserCallbacks(odd).only_errors is False and odd == {"delivery.report.only.error": "true"}


class TestSettings:
    def test_a_setting_or_librdkafkas_default(self) -> None:
        assert options.setting({"queue.buffering.max.messages": "500"}, "queue.buffering.max.messages") == 500
        assert options.setting({}, "queue.buffering.max.messages") == DEFAULT_QUEUE_MAX_MESSAGES
        assert options.setting({"queue.buffering.max.messages": "lots"}, "queue.buffering.max.messages") == (
            DEFAULT_QUEUE_MAX_MESSAGES
        )

    @pytest.mark.parametrize(("conf", "expected"), [
        ({}, False), ({"enable.idempotence": True}, True), ({"enable.idempotence": "false"}, False),
        ({"enable.idempotence": "1"}, True), ({"transactional.id": "t"}, True),
    ])
    def test_idempotent_or_transactional(self, conf: dict[str, Any], expected: bool) -> None:
        assert options.is_idempotent(conf) is expected


class TestAccelerate:
    def test_none_is_silent_and_true_is_deprecated(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            options.check_accelerate(None)
        with pytest.warns(DeprecationWarning, match="accelerate=True"):
            options.check_accelerate(True)

    def test_false_is_an_error_not_a_silent_c_run(self) -> None:
        with pytest.raises(ConfigError, match="no longer has a pure-Python path"):
            options.check_accelerate(False)


class TestPartitioner:
    def test_the_default_follows_librdkafkas_setting_and_the_policys_bytes(self) -> None:
        part = options.default_partitioner(
            {"partitioner": "murmur2_random"}, TopicPolicy(partitioner=PartitionerConfig(sticky_bytes=4096))
        )
        assert part.partitioner == "murmur2_random"
        assert part.chooser._sticky_bytes == 4096

    @pytest.mark.parametrize(("name", "chosen"), [
        ("consistent_random", True), ("murmur2_random", True), ("random", True),
        ("consistent", False), ("murmur2", False), ("fnv1a", False),
    ])
    def test_the_sticky_choice_only_where_librdkafka_spreads_null_keys(self, name: str, chosen: bool) -> None:
        default = options.default_partitioner({"partitioner": name}, TopicPolicy())
        assert (options.sticky_chooser(default, name) is not None) is chosen

    def test_no_sticky_choice_for_a_custom_partitioner(self) -> None:
        assert options.sticky_chooser(None, "consistent_random") is None


class TestRackAwareness:
    def test_off_by_default_and_the_key_is_taken_out(self) -> None:
        conf: dict[str, Any] = {"partitioner.rack.aware": "false", "client.rack": "a"}
        assert options.rack_awareness(conf, TopicPolicy()) == (None, False)
        assert conf == {"client.rack": "a"}

    def test_on_for_every_topic_with_the_client_key(self) -> None:
        conf: dict[str, Any] = {"partitioner.rack.aware": "True", "client.rack": " a "}
        assert options.rack_awareness(conf, TopicPolicy()) == ("a", True)

    def test_on_for_the_topics_whose_policy_asks(self) -> None:
        policy = TopicPolicy(partitioner=PartitionerConfig(rack_aware=True))
        assert options.rack_awareness({"client.rack": "a"}, policy) == ("a", False)

    def test_on_without_a_rack_names_client_rack(self) -> None:
        with pytest.raises(ConfigError, match=r"client\.rack: partitioner\.rack\.aware is on"):
            options.rack_awareness({"partitioner.rack.aware": True}, TopicPolicy())

    def test_a_value_not_a_bool_is_an_error(self) -> None:
        with pytest.raises(ConfigError, match=r"partitioner\.rack\.aware: expected true or false"):
            options.rack_awareness({"partitioner.rack.aware": "yes"}, TopicPolicy())
