"""Policy sources with positions: the data of one YAML file (or mapping) plus where each key was written.

PyYAML's ``safe_load`` forgets positions, so files are read with ``yaml.compose`` and the node tree is turned
into plain data here, recording every key's mark on the way. Any later error about a key path can then be
reported at ``file:line:column`` of the key that caused it, even after several files were merged (each mark
keeps its file).

Also caught here, because ``safe_load`` hides them: duplicate keys (YAML keeps the last silently, so a second
``orders:`` block would quietly replace the first) and non-scalar keys.

Hostile or broken files are refused with a named issue, never a traceback or a hang: aliases and merge keys
are expanded here (``yaml.compose`` keeps them shared), so a few hundred bytes of nested aliases ("billion
laughs") or merge keys would expand to billions of values; the builder counts every value it produces again
and stops at :data:`MAX_REPEATED`. Recursive aliases, nesting deeper than :data:`MAX_DEPTH` and any tag outside
YAML's core schema (``!!python/name:...``, ``!custom``) are refused too. Only PyYAML's safe composer and
constructor are used, so nothing in a file can run code.
"""

from __future__ import annotations

import itertools
import os
import stat
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
#: Tags a policy may carry (explicitly or resolved from plain scalars): YAML's core schema, nothing else.
_CORE_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "float", "bool", "null", "map", "seq", "merge", "timestamp", "binary")
)
#: libyaml's composer when PyYAML was built with it (about ten times faster on large files), else PyYAML's.
#: Both are the *safe* loader: no tag can construct a Python object.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: Values an alias or merge key may produce again (a node built a second, third... time). Values written once
#: are bounded by the file's size already; repeats are what an alias bomb multiplies. An anchor of 10 settings
#: reused by 8,000 topic entries repeats 80,000; nine levels of nine-fold aliases (360 bytes) would repeat
#: 387 million, refused after this many, in about a second.
MAX_REPEATED = 250_000
#: Nesting depth a file may have; real policies are 5 or 6 deep (topics.orders.failure_rate.window.size).
MAX_DEPTH = 64
#: Bytes a policy file may have, checked before it is parsed. A policy with 8,000 topic entries, each merging an
#: anchor and overriding it, is ~0.6 MB; a 50 MB file took PyYAML 107 s before ending in a MemoryError.
MAX_BYTES = 4 << 20


class _Refused(Exception):
    """The file is refused as a whole (alias bomb, recursion, depth, tag): ``issue`` says why and where."""

    def __init__(self, issue: PolicyIssue) -> None:
        super().__init__(issue.message)
        self.issue = issue


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
    #: Paths whose value took text from the environment -> the text as written (``${DB_PASSWORD}``).
    from_env: dict[KeyPath, str] = field(default_factory=dict)

    def shown(self, path: KeyPath, value: Any) -> Any:
        """``value`` at ``path`` as an error message may show it: redacted, and as written if from ``${...}``."""
        return self.from_env[path] if path in self.from_env else redact_value(path, value)

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
            found = describe(self.shown(path, value)) if exists else "nothing"
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
    """Read and compose one YAML file; ``(None, issues)`` if it cannot be read or parsed.

    Only a regular file of at most :data:`MAX_BYTES` is read: a device (``/dev/zero`` never ends), a FIFO (opening
    one with no writer blocks forever) or a directory is refused by its type before it is opened, and the size is
    bounded before anything is parsed.
    """
    name = os.fspath(path)
    try:
        mode = os.stat(name).st_mode
    except FileNotFoundError:
        return None, [_file_issue(name, "an existing YAML file", "no such file", "cannot read the policy file")]
    except OSError as err:
        found = type(err).__name__
        return None, [_file_issue(name, "a readable UTF-8 YAML file", found, f"cannot read the policy file: {err}")]
    if not stat.S_ISREG(mode):
        kind = _FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")
        return None, [_file_issue(
            name, "a regular file", kind, f"the policy must be a regular file, not {kind}; write it to a file first"
        )]
    try:
        with open(name, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)  # +1: over the bound, whatever stat said a moment ago
        if len(data) > MAX_BYTES:
            return None, [_file_issue(
                name, f"at most {MAX_BYTES:,} bytes", "a larger file",
                f"the policy file is larger than {MAX_BYTES >> 20} MiB; a policy with 8,000 topics is about 0.6 MB "
                "(use topic patterns for many topics)",
            )]
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        found = type(err).__name__
        return None, [_file_issue(name, "a readable UTF-8 YAML file", found, f"cannot read the policy file: {err}")]
    return read_text(text, name)


_FILE_KINDS = {
    stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFSOCK: "a socket",
}


def read_text(text: str, name: str) -> tuple[Source | None, list[PolicyIssue]]:
    """Compose YAML ``text`` (named ``name`` in issues) into a :class:`Source`."""
    try:
        root = yaml.compose(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as err:
        if "maximum nesting depth" in str(err.problem):  # libyaml's own bound (PyYAML >= 6.0.4 with libyaml)
            return None, [_file_issue(name, f"at most {MAX_DEPTH} levels of nesting", "deeper nesting", _TOO_DEEP)]
        return None, [_syntax_issue(err, name)]
    except yaml.YAMLError as err:  # pragma: no cover - every PyYAML parse error is a MarkedYAMLError
        return None, [_file_issue(name, "valid YAML", "malformed YAML", f"malformed YAML: {err}")]
    except RecursionError:
        # PyYAML's composer recurses once per nesting level: a few hundred levels exhaust Python's stack.
        return None, [_file_issue(name, f"at most {MAX_DEPTH} levels of nesting", "deeper nesting", _TOO_DEEP)]
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
    try:
        data = builder.build(root, ())
    except _Refused as refused:
        return None, [refused.issue]
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


_TOO_DEEP = f"the file nests deeper than {MAX_DEPTH} levels; a policy is a few levels deep"


class _Builder:
    """Turns a composed node tree into dicts/lists/scalars, recording marks, quoting and key problems.

    Work is bounded: every value produced again (by an alias or a merge key) counts towards
    :data:`MAX_REPEATED`, nesting towards :data:`MAX_DEPTH`, and a node met again inside itself is a recursive
    alias. Each breach raises :class:`_Refused` at once, before any further expansion.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.marks: dict[KeyPath, Mark] = {}
        self.quoted: set[KeyPath] = set()
        self.issues: list[PolicyIssue] = []
        self._constructor = SafeConstructor()
        self._seen: set[int] = set()  # ids of nodes built at least once
        self._repeated = 0
        self._open: set[int] = set()  # ids of the collection nodes being built (recursion detection)

    def mark(self, node: Node) -> Mark:
        return Mark(self.name, node.start_mark.line + 1, node.start_mark.column + 1)

    def _refuse(self, node: Node, path: KeyPath, expected: str, found: str, message: str) -> _Refused:
        mark = self.mark(node)
        return _Refused(PolicyIssue(self.name, mark.line, mark.column, format_path(path), expected, found, message))

    def _count(self, node: Node, path: KeyPath) -> None:
        if id(node) in self._seen:
            self._repeated += 1
        else:
            self._seen.add(id(node))
        if self._repeated > MAX_REPEATED:
            raise self._refuse(
                node,
                path,
                f"at most {MAX_REPEATED:,} values repeated by aliases and merge keys",
                "more",
                "the file expands to too many values (nested YAML aliases or merge keys repeat their targets "
                "over and over: an alias bomb?)",
            )
        if len(path) > MAX_DEPTH:
            raise self._refuse(node, path, f"at most {MAX_DEPTH} levels of nesting", "deeper nesting", _TOO_DEEP)
        if node.tag not in _CORE_TAGS:
            raise self._refuse(
                node,
                path,
                "plain YAML values (no tags)",
                f"the tag {node.tag[:60]!r}",
                "YAML tags are not allowed in a policy (nothing in a policy file is ever executed or constructed)",
            )

    def build(self, node: Node, path: KeyPath) -> Any:
        self._count(node, path)
        if isinstance(node, MappingNode | SequenceNode):
            if id(node) in self._open:
                raise self._refuse(
                    node,
                    path,
                    "an alias to a finished anchor",
                    "an alias inside its own anchor",
                    "recursive YAML alias: the value would contain itself",
                )
            self._open.add(id(node))
            try:
                if isinstance(node, MappingNode):
                    return self._mapping(node, path)
                items = []
                for index, item in enumerate(node.value):
                    self.marks[(*path, index)] = self.mark(item)
                    items.append(self.build(item, (*path, index)))
                return items
            finally:
                self._open.discard(id(node))
        if isinstance(node, ScalarNode) and node.style:  # None (PyYAML) or "" (libyaml) when plain
            self.quoted.add(path)  # '...', "...", | and > scalars are strings as written
        try:
            # The scalar's own constructor, not construct_object: same result for core tags, a third the cost.
            return self._constructor.yaml_constructors[node.tag](self._constructor, node)
        except yaml.MarkedYAMLError as err:  # e.g. !!int "abc", !!timestamp "never"
            raise _Refused(_syntax_issue(err, self.name)) from err

    def _mapping(self, node: MappingNode, path: KeyPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        marks_before = len(self.marks)
        # YAML merge keys (<<: *base) first, so keys written in this mapping override them, as in PyYAML.
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                for merged in _merge_sources(value_node):
                    self._count(merged, path)
                    if id(merged) in self._open:
                        raise self._refuse(
                            merged,
                            path,
                            "a merge of a finished anchor",
                            "a merge of its own anchor",
                            "recursive YAML merge key: the mapping would contain itself",
                        )
                    self._open.add(id(merged))
                    try:
                        result.update(self._mapping(merged, path))
                    finally:
                        self._open.discard(id(merged))
        # Marks recorded by the merges, grouped by the key they sit under (dicts keep insertion order, so they
        # are the newest ones): a key written here drops only its own, keeping the build linear in the file.
        merged_marks: dict[str, list[KeyPath]] = {}
        depth = len(path)
        for known in itertools.islice(reversed(self.marks), len(self.marks) - marks_before):
            if len(known) > depth and known[:depth] == path:
                merged_marks.setdefault(str(known[depth]), []).append(known)
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
            for stale in merged_marks.pop(key, ()):
                # A key written here replaces one merged in by <<: drop the merged value's marks and quoting.
                self.marks.pop(stale, None)
                self.quoted.discard(stale)
            self.marks[key_path] = mark
            result[key] = self.build(value_node, key_path)
        return result



def _merge_sources(node: Node) -> list[MappingNode]:
    if isinstance(node, MappingNode):
        return [node]
    if isinstance(node, SequenceNode):
        return [item for item in node.value if isinstance(item, MappingNode)]
    return []
