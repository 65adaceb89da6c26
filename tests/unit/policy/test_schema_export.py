"""What is generated from the policy schema (mutepro.policy.schema_export): the JSON Schema editors validate policy
files with, and the configuration reference the docs are built from."""

from __future__ import annotations

from mutepro.policy import TopicPolicy
from mutepro.policy.schema_export import SCHEMA_ID, json_schema, reference_markdown


class TestReferenceMarkdown:
    def test_every_setting_is_in_the_generated_reference(self) -> None:
        """The docs' configuration page lists every leaf key of a topic policy, with its real default."""
        text = reference_markdown()

        def leaves(model: object, prefix: str = "") -> list[str]:
            out = []
            for name in type(model).model_fields:  # type: ignore[attr-defined]
                value = getattr(model, name)
                if hasattr(type(value), "model_fields"):
                    out += leaves(value, f"{prefix}{name}.")
                else:
                    out.append(f"{prefix}{name}")
            return out

        missing = [k for k in leaves(TopicPolicy()) if f"| `{k}` |" not in text]
        assert missing == []
        assert "| `slow_call.window.type` | `Literal['count', 'time']` | `time` |" in text  # the section's own default
        assert "| `breaker.retry_interval_ms` | `int` | `1000` |" in text


class TestJsonSchema:
    def test_topics_entries_are_topic_policies_and_x_keys_are_allowed(self) -> None:
        schema = json_schema()
        assert schema["$id"] == SCHEMA_ID and schema["$schema"].endswith("/2020-12/schema")
        assert schema["properties"]["topics"]["additionalProperties"] == {"$ref": "#/$defs/TopicPolicy"}
        assert schema["patternProperties"] == {"^x-": {}}
        assert set(TopicPolicy.model_fields) <= set(schema["$defs"]["TopicPolicy"]["properties"])

    def test_a_new_schema_each_call(self) -> None:
        """Callers may edit what they get: the next call is not affected."""
        first = json_schema()
        first["title"] = "changed"
        assert json_schema()["title"] == "mutepro policy"

    def test_editors_accept_a_valid_policy_and_flag_a_typo(self) -> None:
        """Checked with the jsonschema validator an editor's YAML extension applies (a dev dependency)."""
        import jsonschema

        validator = jsonschema.Draft202012Validator(json_schema())
        good = {"client": {"bootstrap.servers": "127.0.0.1:9092"}, "x-common": {"a": 1},
                "defaults": {"keyed_policy": "hold"}, "topics": {"orders": {"slow_call": {"threshold_ms": 500}}}}
        assert list(validator.iter_errors(good)) == []
        bad = {"topics": {"orders": {"keyed_policy": "rerout"}}}
        assert [list(e.absolute_path) for e in validator.iter_errors(bad)] == [["topics", "orders", "keyed_policy"]]
