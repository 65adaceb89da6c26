"""Which client keys librdkafka, confluent-kafka-python and mutepro accept (mutepro.policy.client_keys), and the
near key suggested for a misspelt one."""

from __future__ import annotations

import pytest

from mutepro.policy.client_keys import is_known_client_key, suggest_client_key


class TestKnownKeys:
    @pytest.mark.parametrize("key", ["bootstrap.servers", "message.timeout.ms", "on_delivery", "error_cb",
                                     "partitioner.rack.aware", "delivery.timeout.ms"])  # fmt: skip
    def test_librdkafkas_pythons_and_mutepros_keys_are_known(self, key: str) -> None:
        assert is_known_client_key(key)

    @pytest.mark.parametrize("key", ["sasl.pasword", "bootstrap_servers", "mutepro.tick", ""])
    def test_others_are_not(self, key: str) -> None:
        assert not is_known_client_key(key)


class TestSuggestion:
    def test_a_misspelt_key_gets_the_near_one(self) -> None:
        assert suggest_client_key("sasl.pasword") == "sasl.password"
        assert suggest_client_key("bootstrap.server") == "bootstrap.servers"

    def test_nothing_close_gets_no_suggestion(self) -> None:
        assert suggest_client_key("completely.unrelated.thing") is None
