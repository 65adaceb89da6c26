"""MuteProducer's construction inputs (mutepro.producer.options): the policy argument, the application's
callbacks taken out of the librdkafka config, the librdkafka settings read with librdkafka's defaults, and the
arguments and settings refused with the field and the fix named."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from mutepro.errors import ConfigError
from mutepro.mute.store import MemoryStore
from mutepro.policy.effective import Policy
from mutepro.policy.loader import load_policy
from mutepro.policy.schema import DEFAULT_MESSAGE_TIMEOUT_MS, TopicPolicy
from mutepro.producer import options


class TestPolicyArgument:
    def test_none_is_the_defaults_and_a_policy_is_kept(self) -> None:
        assert options.coerce_policy(None) == TopicPolicy()
        tp = TopicPolicy()
        assert options.coerce_policy(tp) is tp

    def test_a_mapping_or_a_path_is_loaded(self, tmp_path: Path) -> None:
        path = tmp_path / "p.yaml"
        path.write_text("defaults:\n  keyed_policy: hold\n")
        for given in ({"defaults": {"keyed_policy": "hold"}}, path, str(path)):
            loaded = options.coerce_policy(given)
            assert isinstance(loaded, Policy)
            assert loaded.defaults.keyed_policy == "hold"

    def test_anything_else_is_a_type_error_naming_its_type(self) -> None:
        with pytest.raises(TypeError, match="got int"):
            options.coerce_policy(3)

    def test_topic_policy_of_a_policy_or_the_one_topic_policy(self) -> None:
        """A Policy gives the topic's entry (its defaults for ""); a TopicPolicy serves every topic."""
        policy = load_policy({"topics": {"orders": {"keyed_policy": "fail"}}})
        assert options.topic_policy(policy, "orders").keyed_policy == "fail"
        assert options.topic_policy(policy, "") is policy.defaults
        tp = TopicPolicy()
        assert options.topic_policy(tp, "anything") is tp


class TestRefusedArguments:
    def test_mutepro_keys_in_the_client_config_are_named(self) -> None:
        with pytest.raises(ConfigError, match=r"^mutepro\.a: .*policy="):
            options.refuse_mutepro_keys({"linger.ms": 5, "mutepro.b": 1, "mutepro.a": 1})
        options.refuse_mutepro_keys({"linger.ms": 5})

    @pytest.mark.parametrize("tick", [0.0005, 11.0])
    def test_tick_outside_its_range(self, tick: float) -> None:
        with pytest.raises(ConfigError, match="tick_interval_s"):
            options.check_tick(tick)

    @pytest.mark.parametrize("tick", [0.001, 0.05, 10.0])
    def test_tick_inside_its_range(self, tick: float) -> None:
        options.check_tick(tick)

    def test_accelerate_true_is_deprecated_false_is_refused(self) -> None:
        """Left out: nothing said; True: a DeprecationWarning; False (the gone Python path): a ConfigError."""
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            options.check_accelerate(None)
        with pytest.warns(DeprecationWarning, match="accelerate"):
            options.check_accelerate(True)
        with pytest.raises(ConfigError, match="accelerate=False"):
            options.check_accelerate(False)


class TestUserCallbacks:
    def test_callables_and_none_are_taken_out_of_the_config(self) -> None:
        def on_delivery(err: Any, msg: Any) -> None: ...

        conf: dict[str, Any] = {"on_delivery": on_delivery, "error_cb": None, "linger.ms": 5,
                                "delivery.report.only.error": True}
        cbs = options.UserCallbacks(conf)
        assert cbs.on_delivery is on_delivery and cbs.error_cb is None and cbs.only_errors is True
        assert conf == {"linger.ms": 5}

    def test_values_the_real_client_refuses_stay_for_it_to_refuse(self) -> None:
        conf: dict[str, Any] = {"stats_cb": "not callable", "delivery.report.only.error": "yes"}
        cbs = options.UserCallbacks(conf)
        assert cbs.stats_cb is None and cbs.only_errors is False
        assert conf == {"stats_cb": "not callable", "delivery.report.only.error": "yes"}


class TestSettings:
    def test_a_setting_or_librdkafkas_default(self) -> None:
        assert options.setting({"message.timeout.ms": "3000"}, "message.timeout.ms") == 3000
        assert options.setting({}, "message.timeout.ms") == DEFAULT_MESSAGE_TIMEOUT_MS
        assert options.setting({"message.timeout.ms": "3s"}, "message.timeout.ms") == DEFAULT_MESSAGE_TIMEOUT_MS

    @pytest.mark.parametrize(("conf", "idempotent"), [
        ({}, False), ({"enable.idempotence": "false"}, False), ({"enable.idempotence": True}, True),
        ({"enable.idempotence": "1"}, True), ({"transactional.id": "tx"}, True),
    ])
    def test_idempotent_or_transactional(self, conf: dict[str, Any], idempotent: bool) -> None:
        assert options.is_idempotent(conf) is idempotent


class TestPartitioner:
    def test_the_default_partitioner_follows_librdkafkas_settings(self) -> None:
        """partitioner from the config; linger as librdkafka's sticky linger (2 x linger.ms = 0.2 s); no byte
        limit unless the policy sets one."""
        made = options.default_partitioner({"partitioner": "murmur2_random", "linger.ms": 100}, TopicPolicy())
        assert made.partitioner == "murmur2_random"
        assert made.chooser.linger_s == pytest.approx(0.2)
        assert made.chooser.sticky_bytes == 0

    @pytest.mark.parametrize(("name", "direct"), [
        ("consistent_random", True), ("murmur2_random", True), ("random", True),
        ("consistent", False), ("murmur2", False),
    ])
    def test_the_sticky_chooser_only_where_null_keys_are_random(self, name: str, direct: bool) -> None:
        default = options.default_partitioner({"partitioner": name}, TopicPolicy())
        assert (options.sticky_chooser(default, name) is default.chooser) is direct
        assert options.sticky_chooser(None, name) is None


class TestStore:
    def test_only_a_policy_state_section_makes_a_store(self) -> None:
        assert options.store_of(TopicPolicy()) is None
        assert isinstance(options.store_of(load_policy({"state": {"backend": "memory"}})), MemoryStore)


class TestRackAwareness:
    def test_off_by_default(self) -> None:
        conf: dict[str, Any] = {"client.rack": "az1"}
        assert options.rack_awareness(conf, TopicPolicy()) == (None, False)

    def test_the_java_key_is_taken_out_and_turns_it_on_for_every_topic(self) -> None:
        conf: dict[str, Any] = {"partitioner.rack.aware": "True", "client.rack": " az1 "}
        assert options.rack_awareness(conf, TopicPolicy()) == ("az1", True)
        assert "partitioner.rack.aware" not in conf and conf["client.rack"] == " az1 "

    def test_a_policy_topic_asking_for_it_turns_it_on_for_those_topics(self) -> None:
        policy = load_policy({"topics": {"t": {"partitioner": {"rack_aware": True}}}})
        assert options.rack_awareness({"client.rack": "az2"}, policy) == ("az2", False)

    def test_on_without_client_rack_is_an_error_naming_where_it_was_turned_on(self) -> None:
        with pytest.raises(ConfigError, match=r"client.rack: partitioner.rack.aware is on"):
            options.rack_awareness({"partitioner.rack.aware": True}, TopicPolicy())
        with pytest.raises(ConfigError, match=r"client.rack: partitioner.rack_aware \(policy\) is on"):
            options.rack_awareness({}, TopicPolicy.model_validate({"partitioner": {"rack_aware": True}}))

    def test_a_value_that_is_not_a_boolean_is_named(self) -> None:
        with pytest.raises(ConfigError, match=r"partitioner\.rack\.aware: expected true or false"):
            options.rack_awareness({"partitioner.rack.aware": "yes"}, TopicPolicy())
