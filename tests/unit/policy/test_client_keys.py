"""The ``client:`` keys librdkafka and confluent-kafka-python know (mutepro.policy.client_keys): a known key is
accepted, a misspelt one gets the known key it is closest to, and nothing is suggested for a key unlike any."""

from __future__ import annotations

import pytest

from mutepro.policy.client_keys import (
    KNOWN_CLIENT_KEYS,
    LIBRDKAFKA_KEYS,
    PYTHON_CLIENT_KEYS,
    is_known_client_key,
    suggest_client_key,
)


class TestKnownKeys:
    @pytest.mark.parametrize("key", [
        "bootstrap.servers", "message.timeout.ms", "delivery.timeout.ms", "queue.buffering.max.ms",  # aliases too
        "on_delivery", "error_cb", "logger",  # confluent-kafka-python's own
        "partitioner.rack.aware",  # read by mutepro itself (Java's name, KIP-1123)
    ])
    def test_known(self, key: str) -> None:
        assert is_known_client_key(key)

    @pytest.mark.parametrize("key", ["sasl.pasword", "Bootstrap.Servers", "mutepro.policy", ""])
    def test_unknown(self, key: str) -> None:
        assert not is_known_client_key(key)

    def test_the_sets_are_the_union(self) -> None:
        assert LIBRDKAFKA_KEYS | PYTHON_CLIENT_KEYS <= KNOWN_CLIENT_KEYS
        assert "linger.ms" in LIBRDKAFKA_KEYS and "stats_cb" in PYTHON_CLIENT_KEYS


class TestSuggestion:
    @pytest.mark.parametrize(("typo", "meant"), [
        ("sasl.pasword", "sasl.password"),
        ("bootstrap.server", "bootstrap.servers"),
        ("linger.m", "linger.ms"),
        ("mesage.timeout.ms", "message.timeout.ms"),
    ])
    def test_the_closest_known_key(self, typo: str, meant: str) -> None:
        assert suggest_client_key(typo) == meant

    def test_nothing_close_nothing_suggested(self) -> None:
        assert suggest_client_key("completely.unrelated.setting.name") is None
