"""Which ``topics:`` entry applies to a topic: its exact name, else the first matching pattern in file order.

Kafka topic names may only hold ``[a-zA-Z0-9._-]``, so a key with ``*``, ``?`` or ``[`` can only be a glob
(``metrics.*``, matched with :func:`fnmatch.fnmatchcase`), and ``re:`` introduces a regular expression that
must match the whole name (``re:orders-(eu|us)``). ``orders`` and ``orders.*`` both present: ``orders`` gets
the exact entry, ``orders.eu`` the pattern. Patterns do not stack: the first match is the whole override.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

RuleKind = Literal["exact", "glob", "regex"]

_GLOB_CHARS = frozenset("*?[")
REGEX_PREFIX = "re:"


def rule_kind(key: str) -> RuleKind:
    """How a ``topics:`` key matches: ``regex`` (``re:...``), ``glob`` (has ``*?[``) or ``exact``."""
    if key.startswith(REGEX_PREFIX):
        return "regex"
    if _GLOB_CHARS & set(key):
        return "glob"
    return "exact"


def compile_rule(key: str) -> Callable[[str], bool]:
    """A predicate for topic names matching ``key``; raises :class:`re.error` for a bad ``re:`` pattern."""
    kind = rule_kind(key)
    if kind == "regex":
        pattern = re.compile(key[len(REGEX_PREFIX) :])
        return lambda name: pattern.fullmatch(name) is not None
    if kind == "glob":
        return lambda name: fnmatch.fnmatchcase(name, key)
    return lambda name: name == key


@dataclass(frozen=True)
class TopicRule:
    """One ``topics:`` entry: its key, how it matches, and the predicate."""

    key: str
    kind: RuleKind
    matches: Callable[[str], bool]


def build_rules(keys: list[str]) -> list[TopicRule]:
    """Rules for ``keys`` in file order (patterns must be valid; the loader checks first)."""
    return [TopicRule(key, rule_kind(key), compile_rule(key)) for key in keys]


def select_rule(rules: list[TopicRule], topic: str) -> TopicRule | None:
    """The rule for ``topic``: the exact entry if any, else the first pattern that matches, else ``None``."""
    for rule in rules:
        if rule.kind == "exact" and rule.key == topic:
            return rule
    for rule in rules:
        if rule.kind != "exact" and rule.matches(topic):
            return rule
    return None
