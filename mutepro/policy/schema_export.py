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
