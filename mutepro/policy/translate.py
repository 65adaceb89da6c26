"""Pydantic errors -> :class:`PolicyIssue`: key path, file and line, what was expected, what was found.

Pydantic reports ``loc=("defaults", "slow_call", "threshold_ms")`` and a terse message; a user needs
``base.yaml:14:7: defaults.slow_call.threshold_ms: must be >= 1 (expected an integer >= 1, found -5
(integer))``. Unknown keys get a "did you mean" from the names valid at that level, and so do unknown choices
(``keyed_policy: rerout`` -> ``'reroute'``). Cross-field errors carry ``ctx["field"]`` (see
:func:`mutepro.policy.schema.cross_field_error`), which is appended to the location so the blamed key is
named.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from mutepro.policy.errors import PolicyIssue
from mutepro.policy.paths import KeyPath, format_path, get_path
from mutepro.policy.source import Source, describe

_TYPE_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "none_required": "null",
    "missing": "a value",
}
_OPTION_SEPARATOR = re.compile(r", | or ")


@dataclass(frozen=True)
class _Option:
    text: str  # as shown: 'reroute' (strings quoted) or 1
    value: str  # bare, for suggestions


def _options(expected: str) -> list[_Option]:
    # pydantic renders Literal and enum choices as "'reroute', 'hold' or 'ignore'" (non-strings unquoted: "1").
    parts = [part.strip() for part in _OPTION_SEPARATOR.split(expected) if part.strip()]
    return [_Option(part, part.strip("'")) for part in parts]


def _number(bound: Any) -> Any:
    # Float fields report bounds as 100.0; users wrote 100.
    return int(bound) if isinstance(bound, float) and bound.is_integer() else bound


@dataclass(frozen=True)
class Translated:
    """An issue plus the relative location and error type it came from (for de-duplication across topics)."""

    relative: KeyPath
    kind: str
    issue: PolicyIssue


def translate(
    errors: Iterable[ErrorDetails],
    *,
    model: type[BaseModel],
    data: Any,
    source: Source,
    prefix: KeyPath = (),
) -> list[Translated]:
    """Issues for ``errors`` raised validating ``data`` (found at ``prefix`` in ``source``) as ``model``."""
    return [_one(error, model, data, source, prefix) for error in errors]


def _one(error: ErrorDetails, model: type[BaseModel], data: Any, source: Source, prefix: KeyPath) -> Translated:
    kind = error["type"]
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    relative: KeyPath = tuple(error["loc"])
    if "field" in ctx:
        relative = (*relative, str(ctx["field"]))
    path = (*prefix, *relative)
    exists, value = get_path(data, relative)
    # Shown as written when it came from ${...} (the environment may hold a secret), redacted otherwise.
    shown = source.shown(path, value)
    found = str(ctx["found"]) if "found" in ctx else describe(shown) if exists else "nothing"
    name = str(relative[-1]) if relative else "the policy"
    expected, message = _explain(kind, error["msg"], ctx, name, relative, model, shown)
    mark = source.mark_of(path)
    issue = PolicyIssue(mark.file, mark.line, mark.column, format_path(path), expected, found, message)
    return Translated(relative, kind, issue)


def _explain(
    kind: str, msg: str, ctx: dict[str, Any], name: str, relative: KeyPath, model: type[BaseModel], value: Any
) -> tuple[str, str]:
    if kind == "extra_forbidden":
        return _unknown_key(name, relative, model)
    if kind in ("literal_error", "enum"):
        options = _options(str(ctx.get("expected", "")))
        shown = [o.text for o in options]
        if len(options) == 1:
            return shown[0], f"{name} must be {shown[0]}"
        expected = "one of " + ", ".join(shown)
        message = f"unknown {name} {value!r}" if isinstance(value, str) else f"{name} is not a choice"
        return expected, message + _suggest(str(value), [o.value for o in options])
    bounds = {
        "greater_than_equal": (">=", "ge"),
        "greater_than": (">", "gt"),
        "less_than_equal": ("<=", "le"),
        "less_than": ("<", "lt"),
    }
    if kind in bounds:
        operator, key = bounds[kind]
        return f"a value {operator} {_number(ctx.get(key))}", f"{name} is out of range"
    if kind == "string_too_short":
        return "a non-empty string", f"{name} must not be empty"
    if kind in _TYPE_EXPECTED:
        expected = _TYPE_EXPECTED[kind]
        hint = ""
        if isinstance(value, str) and expected in ("an integer", "a number", "true or false"):
            hint = " (write it without quotes)"
        return expected, f"{name} has the wrong type{hint}"
    if "expected" in ctx:
        return str(ctx["expected"]), msg
    return "a valid value", msg


def _unknown_key(key: str, relative: KeyPath, model: type[BaseModel]) -> tuple[str, str]:
    parent = model_at(model, relative[:-1])
    known = sorted(parent.model_fields) if parent is not None else []
    expected = "one of " + ", ".join(known) if known else "no key here"
    message = f"unknown key {key!r}"
    suggestion = _suggest(key, known)
    if not suggestion and len(relative) == 1:
        # Commonest top-level slips: a librdkafka setting or a topic setting written without its section.
        if key in _topic_fields():
            suggestion = f"; did you mean defaults.{key}?"
        elif "." in key:
            suggestion = f"; librdkafka settings go under client: (client.{key})"
    elif not suggestion and "." in key:
        suggestion = "; librdkafka settings go under the top-level client: section"
    return expected, message + suggestion


def _topic_fields() -> set[str]:
    from mutepro.policy.schema import TopicPolicy

    return set(TopicPolicy.model_fields)


def _suggest(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def model_at(model: type[BaseModel], relative: KeyPath) -> type[BaseModel] | None:
    """The model class validating the mapping at ``relative`` inside ``model`` (``None`` if none)."""
    current: type[BaseModel] = model
    for part in relative:
        field = current.model_fields.get(str(part))
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        current = annotation
    return current
