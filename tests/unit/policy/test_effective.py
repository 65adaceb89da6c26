"""An effective policy (mutepro.policy.effective.Policy): its sections, the client block as a fresh copy, the topic
rule that applies (exact name before patterns), and the per-topic policy built once."""

from __future__ import annotations

from pathlib import Path

from mutepro.policy import Policy, load_policy


def policy_with_rules() -> Policy:
    return load_policy({
        "client": {"bootstrap.servers": "127.0.0.1:9092"},
        "defaults": {"keyed_policy": "hold"},
        "topics": {"orders": {"keyed_policy": "fail"}, "metrics.*": {"keyed_policy": "reroute"}},
    })


class TestSections:
    def test_version_defaults_and_topics_in_file_order(self) -> None:
        policy = policy_with_rules()
        assert policy.version == 1 and policy.defaults.keyed_policy == "hold"
        assert list(policy.topics) == ["orders", "metrics.*"]

    def test_the_client_block_is_a_fresh_copy_each_time(self) -> None:
        policy = policy_with_rules()
        client = policy.client
        client["bootstrap.servers"] = "elsewhere"
        assert policy.client == {"bootstrap.servers": "127.0.0.1:9092"}

    def test_logging_written_only_when_a_source_wrote_it(self) -> None:
        assert not policy_with_rules().logging_written
        assert load_policy({"logging": {"level": "debug"}}).logging_written

    def test_sources_name_the_files_in_merge_order(self, tmp_path: Path) -> None:
        a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
        a.write_text("defaults: {keyed_policy: hold}\n")
        b.write_text("defaults: {keyed_policy: fail}\n")
        policy = load_policy(a, b)
        assert [Path(s).name for s in policy.sources] == ["a.yaml", "b.yaml"]
        assert policy.defaults.keyed_policy == "fail"


class TestForTopic:
    def test_exact_name_pattern_or_defaults(self) -> None:
        policy = policy_with_rules()
        assert policy.for_topic("orders").keyed_policy == "fail"
        assert policy.for_topic("metrics.cpu").keyed_policy == "reroute"
        assert policy.for_topic("other") is policy.defaults
        assert (policy.rule_for("metrics.cpu"), policy.rule_for("other")) == ("metrics.*", None)

    def test_built_once_per_topic(self) -> None:
        policy = policy_with_rules()
        assert policy.for_topic("metrics.cpu") is policy.for_topic("metrics.cpu")
