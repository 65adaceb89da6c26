"""The JSON Schema of policy files, for editors (VS Code's YAML extension, JetBrains).

Generated from :class:`PolicyDocument`, with one fix-up: ``topics`` values are validated by the loader as
:class:`TopicPolicy` merged over defaults, so the schema describes each entry as a TopicPolicy (every field of
which is optional) instead of an opaque mapping.
"""

from __future__ import annotations

from typing import Any

from mutepro.policy.schema import PolicyDocument

SCHEMA_ID = "https://mutepro.dev/schema/policy-v1.json"


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a mutepro policy file."""
    schema = PolicyDocument.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["title"] = "mutepro policy"
    topics = schema["properties"]["topics"]
    topics["additionalProperties"] = {"$ref": "#/$defs/TopicPolicy"}
    # YAML anchors live under x-* keys at the top level (the loader ignores them).
    schema["patternProperties"] = {"^x-": {}}
    return schema


def reference_markdown() -> str:
    """Every policy setting as Markdown tables, one per section (``defaults``/``topics.<name>`` share the
    per-topic sections): key, type, default, meaning. The docs site's configuration page is built from it, so it
    cannot drift from the schema."""
    from pydantic import BaseModel

    from mutepro.policy.schema import TopicPolicy

    lines: list[str] = []

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    def section(title: str, instance: BaseModel, prefix: str) -> None:
        model = type(instance)
        rows: list[str] = []
        nested: list[tuple[str, BaseModel]] = []
        for name, field in model.model_fields.items():
            value = getattr(instance, name)
            if isinstance(value, BaseModel):
                nested.append((name, value))
                continue
            ann = field.annotation
            plain = isinstance(ann, type) and not getattr(ann, "__args__", None)
            kind = ann.__name__ if plain else str(ann).replace("typing.", "")  # type: ignore[union-attr]
            shown = "null" if value is None else str(value).lower() if isinstance(value, bool) else str(
                getattr(value, "value", value)
            )
            rows.append(f"| `{prefix}{name}` | `{cell(kind)}` | `{cell(shown)}` | {cell(field.description or '')} |")
        if rows:
            doc = (model.__doc__ or "").strip().split("\n\n")[0]
            lines.extend([f"### {title}", "", cell(doc), ""])
            lines.extend(["| key | type | default | meaning |", "| --- | --- | --- | --- |"])
            lines.extend([*rows, ""])
        for name, sub in nested:
            section(f"{prefix}{name}", sub, f"{prefix}{name}.")

    section("Per topic (`defaults:` and `topics.<name>:`)", TopicPolicy(), "")
    document = PolicyDocument()
    for name in PolicyDocument.model_fields:
        value = getattr(document, name)
        if name not in ("defaults", "topics") and isinstance(value, BaseModel):
            section(f"{name} (top level)", value, f"{name}.")
    return "\n".join(lines)
