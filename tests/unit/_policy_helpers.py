"""Helpers shared by the policy tests: write YAML to a file, load it, pick the issue at a key path."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from mutepro.policy import PolicyError, PolicyIssue, load_policy


def write(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    """Write dedented ``text`` to ``tmp_path/name`` (line 1 is the first line after the opening quotes)."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def issues_of(*sources: Any, env: Mapping[str, str] | None = None) -> list[PolicyIssue]:
    """The issues raised loading ``sources`` (fails the test if they load)."""
    with pytest.raises(PolicyError) as caught:
        load_policy(*sources, env={} if env is None else env)
    return caught.value.issues


def issue_at(issues: list[PolicyIssue], path: str) -> PolicyIssue:
    """The single issue whose key path is ``path``."""
    matching = [issue for issue in issues if issue.path == path]
    assert len(matching) == 1, f"expected one issue at {path}, got {[str(i) for i in issues]}"
    issue = matching[0]
    # What a user reads names the key path and, for files, file:line.
    assert f": {path}: " in str(issue)
    if issue.line is not None:
        assert f"{issue.file}:{issue.line}:" in str(issue)
    return issue
