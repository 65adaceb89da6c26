"""Policy sources with positions: the data of one YAML file (or mapping) plus where each key was written.

PyYAML's ``safe_load`` forgets positions, so files are read with ``yaml.compose`` and the node tree is turned
into plain data here, recording every key's mark on the way. Any later error about a key path can then be
reported at ``file:line:column`` of the key that caused it, even after several files were merged (each mark
keeps its file).

Also caught here, because ``safe_load`` hides them: duplicate keys (YAML keeps the last silently, so a second
``orders:`` block would quietly replace the first) and non-scalar keys.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from mutepro.policy.errors import PolicyIssue
from mutepro.policy.paths import KeyPath, format_path, get_path
from mutepro.policy.redact import REDACTED, redact_value

_MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class Mark:
    """Where a key was written: file (or ``<mapping N>``), 1-based line and column (``None`` for mappings)."""

    file: str
    line: int | None = None
    column: int | None = None


@dataclass
class Source:
    """One policy source: ``data`` (a mapping), each path's :class:`Mark`, and which scalars were quoted.

    ``quoted`` matters to interpolation: ``"${PORT}"`` written in quotes stays a string, a plain ``${PORT}``
    is re-typed like any plain YAML scalar would be.
    """

    name: str
    data: dict[str, Any]
    marks: dict[KeyPath, Mark] = field(default_factory=dict)
    quoted: set[KeyPath] = field(default_factory=set)

    def mark_of(self, path: KeyPath) -> Mark:
        """The mark of ``path``, or of its nearest written ancestor (a missing key is shown at its parent)."""
        for end in range(len(path), -1, -1):
            mark = self.marks.get(path[:end])
            if mark is not None:
                return mark
        return Mark(self.name)

    def issue(self, path: KeyPath, *, expected: str, message: str, found: str | None = None) -> PolicyIssue:
        """A :class:`PolicyIssue` at ``path``; ``found`` defaults to the (redacted) value written there."""
        mark = self.mark_of(path)
        if found is None:
            exists, value = get_path(self.data, path)
            found = describe(redact_value(path, value)) if exists else "nothing"
        return PolicyIssue(mark.file, mark.line, mark.column, format_path(path), expected, found, message)


def describe(value: Any) -> str:
    """A short, typed rendering of a found value: ``'fast' (string)``, ``true (boolean)``, ``a mapping``."""
    if value is None:
        return "null"
    if value == REDACTED:
        return REDACTED
    if isinstance(value, bool):
        return f"{str(value).lower()} (boolean)"
    if isinstance(value, int):
        return f"{value} (integer)"
    if isinstance(value, float):
        return f"{value} (number)"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"{shown!r} (string)"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def from_mapping(mapping: Mapping[str, Any], name: str) -> Source:
    """A source for a mapping passed from code (no lines); keys are made strings, mappings copied deeply."""

    def copy(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {str(k): copy(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [copy(v) for v in value]
        return value

    data = copy(mapping)
    return Source(name, data, {(): Mark(name)})


def read_file(path: str | os.PathLike[str]) -> tuple[Source | None, list[PolicyIssue]]:
    """Read and compose one YAML file; ``(None, issues)`` if it cannot be read or parsed."""
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return None, [_file_issue(name, "an existing YAML file", "no such file", "cannot read the policy file")]
    except (OSError, UnicodeDecodeError) as err:
        found = type(err).__name__
        return None, [_file_issue(name, "a readable UTF-8 YAML file", found, f"cannot read the policy file: {err}")]
    return read_text(text, name)


def read_text(text: str, name: str) -> tuple[Source | None, list[PolicyIssue]]:
    """Compose YAML ``text`` (named ``name`` in issues) into a :class:`Source`."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as err:
        return None, [_syntax_issue(err, name)]
    except yaml.YAMLError as err:  # pragma: no cover - every PyYAML parse error is a MarkedYAMLError
        return None, [_file_issue(name, "valid YAML", "malformed YAML", f"malformed YAML: {err}")]
    if root is None:  # an empty file (or only comments): an empty overlay
        return Source(name, {}, {(): Mark(name, 1, 1)}), []
    builder = _Builder(name)
    if not isinstance(root, MappingNode):
        mark = builder.mark(root)
        found = "a list" if isinstance(root, SequenceNode) else "a single value"
        issue = PolicyIssue(
            name,
            mark.line,
            mark.column,
            "",
            "a mapping of keys at the top level",
            found,
            "a policy file is a mapping (version:, client:, defaults:, topics: ...)",
        )
        return None, [issue]
    data = builder.build(root, ())
    builder.marks[()] = builder.mark(root)
    return Source(name, data, builder.marks, builder.quoted), builder.issues


def _file_issue(name: str, expected: str, found: str, message: str) -> PolicyIssue:
    return PolicyIssue(name, None, None, "", expected, found, message)


def _syntax_issue(err: yaml.MarkedYAMLError, name: str) -> PolicyIssue:
    # Deliberately not str(err): PyYAML's message quotes the offending source line, which may hold a password.
    mark = err.problem_mark or err.context_mark
    problem = err.problem or "malformed YAML"
    message = f"malformed YAML: {problem}" + (f" ({err.context})" if err.context else "")
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    return PolicyIssue(name, line, column, "", "valid YAML", "a syntax error", message)


class _Builder:
    """Turns a composed node tree into dicts/lists/scalars, recording marks, quoting and key problems."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.marks: dict[KeyPath, Mark] = {}
        self.quoted: set[KeyPath] = set()
        self.issues: list[PolicyIssue] = []
        self._constructor = SafeConstructor()

    def mark(self, node: Node) -> Mark:
        return Mark(self.name, node.start_mark.line + 1, node.start_mark.column + 1)

    def build(self, node: Node, path: KeyPath) -> Any:
        if isinstance(node, MappingNode):
            return self._mapping(node, path)
        if isinstance(node, SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                self.marks[(*path, index)] = self.mark(item)
                items.append(self.build(item, (*path, index)))
            return items
        if isinstance(node, ScalarNode) and node.style is not None:
            self.quoted.add(path)  # '...', "...", | and > scalars are strings as written
        return self._constructor.construct_object(node, deep=True)

    def _mapping(self, node: MappingNode, path: KeyPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        # YAML merge keys (<<: *base) first, so keys written in this mapping override them, as in PyYAML.
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                for merged in _merge_sources(value_node):
                    result.update(self._mapping(merged, path))
        written: set[str] = set()
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            mark = self.mark(key_node)
            if not isinstance(key_node, ScalarNode):
                self.issues.append(
                    PolicyIssue(
                        self.name,
                        mark.line,
                        mark.column,
                        format_path(path),
                        "plain scalar keys",
                        "a complex key",
                        "keys must be plain names",
                    )
                )
                continue
            # The key as written: a topic called 2024 or on stays "2024"/"on" rather than 2024/True.
            key = str(key_node.value)
            key_path = (*path, key)
            if key in written:
                first = self.marks[key_path]
                self.issues.append(
                    PolicyIssue(
                        self.name,
                        mark.line,
                        mark.column,
                        format_path(key_path),
                        "each key once per mapping",
                        "a duplicate key",
                        f"duplicate key (first written on line {first.line}); YAML would "
                        "silently keep only the last one",
                    )
                )
                continue
            written.add(key)
            self.marks[key_path] = mark
            self._forget(key_path)
            result[key] = self.build(value_node, key_path)
        return result

    def _forget(self, path: KeyPath) -> None:
        # A key written here replaces one merged in by <<: drop the merged value's deeper marks and quoting.
        depth = len(path)
        for known in [p for p in self.marks if len(p) > depth and p[:depth] == path]:
            del self.marks[known]
        self.quoted = {p for p in self.quoted if not (len(p) >= depth and p[:depth] == path)}


def _merge_sources(node: Node) -> list[MappingNode]:
    if isinstance(node, MappingNode):
        return [node]
    if isinstance(node, SequenceNode):
        return [item for item in node.value if isinstance(item, MappingNode)]
    return []
