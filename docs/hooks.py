"""MkDocs hook: the configuration page's tables are generated from the policy schema at build time."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- policy-reference -->"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from mutepro.policy.schema_export import reference_markdown

    return markdown.replace(MARKER, reference_markdown())
