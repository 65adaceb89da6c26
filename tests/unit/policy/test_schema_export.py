"""The policy schema exported (mutepro.policy.schema_export): the JSON schema editors read, and the configuration
reference in the docs, generated from the same models so neither can drift from the code."""

from __future__ import annotations

from mutepro.policy.schema import TopicPolicy
from mutepro.policy.schema_export import json_schema


class TestJsonSchema:
    def test_a_draft_2020_12_schema_of_the_policy_file(self) -> None:
        schema = json_schema()
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert {"defaults", "topics", "client", "state"} <= set(schema["properties"])
        assert schema["properties"]["topics"]["additionalProperties"] == {"$ref": "#/$defs/TopicPolicy"}
        assert "threshold_ms" in schema["$defs"]["SlowCallConfig"]["properties"]

    def test_anchor_keys_are_allowed_at_the_top(self) -> None:
        assert json_schema()["patternProperties"] == {"^x-": {}}


class TestReferenceMarkdown:
    def test_every_setting_is_in_the_generated_reference(self) -> None:
        """The docs' configuration page lists every leaf key of a topic policy, with its real default."""
        from mutepro.policy.schema_export import reference_markdown

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
