"""The loaded policy (mutepro.policy.effective): each topic's effective policy resolved once and cached, the client
settings handed out as a new dict each time, equality, and what is shown with strings from ${ENV} hidden."""

from __future__ import annotations

from mutepro.policy import load_policy
from mutepro.policy.redact import REDACTED


class TestForTopic:
    def test_resolution(self) -> None:
        """for_topic gives the exact entry, else the first pattern, else defaults."""
        policy = load_policy(
            {
                "defaults": {"keyed_policy": "reroute"},
                "topics": {"metrics.*": {"keyed_policy": "ignore"}, "metrics.cpu": {"keyed_policy": "fail"}},
            },
            env={},
        )
        assert policy.for_topic("metrics.cpu").keyed_policy == "fail"
        assert policy.for_topic("metrics.mem").keyed_policy == "ignore"
        assert policy.for_topic("orders") is policy.defaults
        assert policy.rule_for("metrics.mem") == "metrics.*"
        assert policy.rule_for("orders") is None

    def test_cached(self) -> None:
        """The same topic returns the same TopicPolicy object."""
        policy = load_policy({"topics": {"o*": {"keyed_policy": "hold"}}}, env={})
        assert policy.for_topic("orders") is policy.for_topic("orders")



class TestClient:
    def test_client_is_a_fresh_copy(self) -> None:
        """Mutating the returned client dict changes neither the policy nor the caller's mapping."""
        given = {"client": {"bootstrap.servers": "h:9092"}}
        policy = load_policy(given, env={})
        policy.client["bootstrap.servers"] = "other"
        given["client"]["bootstrap.servers"] = "changed"
        assert policy.client == {"bootstrap.servers": "h:9092"}


    def test_sources_version_and_sections(self) -> None:
        policy = load_policy({"state": {"backend": "memory", "key_prefix": "p"}}, env={})
        assert policy.sources == ("<mapping 1>",) and policy.version == 1
        assert policy.state.key_prefix == "p" and policy.logging_written is False
        assert load_policy({"logging": {"level": "debug"}}, env={}).logging_written is True


class TestEquality:
    def test_equal_documents_are_equal_policies(self) -> None:
        one = load_policy({"topics": {"t": {"keyed_policy": "hold"}}}, env={})
        same = load_policy({"topics": {"t": {"keyed_policy": "hold"}}}, env={})
        other = load_policy({"topics": {"t": {"keyed_policy": "fail"}}}, env={})
        assert one == same and hash(one) == hash(same)
        assert one != other
        assert one != "policy"


class TestRedacted:
    def test_strings_from_the_environment_are_hidden_numbers_stay(self) -> None:
        """client.id from ${ID} may be a secret: hidden; a threshold from ${MS} is what show is for: visible."""
        policy = load_policy(
            {"client": {"client.id": "${ID}", "sasl.password": "pw"},
             "defaults": {"slow_call": {"threshold_ms": "${MS}"}}},
            env={"ID": "secret-id", "MS": "750"},
        )
        shown = policy.to_redacted_dict()
        assert shown["client"] == {"client.id": REDACTED, "sasl.password": REDACTED}
        assert shown["defaults"]["slow_call"]["threshold_ms"] == 750
        assert "pw" not in repr(policy) and "secret-id" not in str(shown)

    def test_a_topics_strings_from_the_environment_are_hidden_in_its_view(self) -> None:
        """Written under the topic's entry or inherited from defaults: hidden either way; literal text shown."""
        policy = load_policy(
            {"defaults": {"keyed_policy": "${KP}"}, "topics": {"t": {"keyed_policy": "${K}"}, "u": {}}},
            env={"K": "hold", "KP": "fail"},
        )
        assert policy.for_topic("t").keyed_policy == "hold"
        assert policy.redacted_topic("t")["keyed_policy"] == REDACTED
        assert policy.redacted_topic("other")["keyed_policy"] == REDACTED
        plain = load_policy({"topics": {"t": {"keyed_policy": "hold"}}}, env={})
        assert plain.redacted_topic("t")["keyed_policy"] == "hold"
