"""``${ENV_VAR}`` interpolation, so secrets and per-environment values stay out of policy files.

Forms (in any string value, anywhere in it): ``${NAME}`` (an error if unset), ``${NAME:-default}`` (default
when unset or empty, as in POSIX shells), ``${NAME-default}`` (default only when unset); ``$${`` writes a
literal ``${``. Keys are never interpolated.

Re-typing: a *plain* (unquoted) scalar that is exactly one ``${...}`` is re-read as YAML would read the text
written there, so ``threshold_ms: ${SLOW_MS:-500}`` is the integer 500 and ``enabled: ${X:-false}`` a boolean.
Only to int, float, bool or null, and never under ``client``: librdkafka takes strings, and a password of
``0123`` must not become the integer 123. Quoted scalars (``"${PORT}"``) stay strings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mutepro.policy.errors import PolicyIssue
from mutepro.policy.paths import KeyPath
from mutepro.policy.source import Source

_REFERENCE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)(.*))?$", re.DOTALL)
_TOKEN = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_INT = re.compile(r"^[-+]?[0-9]+$")
_FLOAT = re.compile(r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?$")
_BOOLS = {"true": True, "false": False}
_NULLS = {"", "null", "~"}


class _Unresolved(Exception):
    """One ``${...}`` that cannot be resolved; ``expected``/``message`` describe it (no values inside)."""

    def __init__(self, expected: str, message: str) -> None:
        super().__init__(message)
        self.expected = expected
        self.message = message


def interpolate(source: Source, env: Mapping[str, str]) -> tuple[Source, list[PolicyIssue]]:
    """A copy of ``source`` with every ``${...}`` replaced from ``env``; unresolvable ones become issues."""
    issues: list[PolicyIssue] = []

    def visit(value: Any, path: KeyPath) -> Any:
        if isinstance(value, dict):
            return {key: visit(item, (*path, key)) for key, item in value.items()}
        if isinstance(value, list):
            return [visit(item, (*path, index)) for index, item in enumerate(value)]
        if not isinstance(value, str) or "$" not in value:
            return value
        try:
            text, whole = substitute(value, env)
        except _Unresolved as err:
            # found is the text as written (redacted for secret keys), never an environment value.
            issues.append(source.issue(path, expected=err.expected, message=err.message))
            return value
        if whole and path not in source.quoted and path[:1] != ("client",):
            return retype(text)
        return text

    data = visit(source.data, ())
    return Source(source.name, data, source.marks, source.quoted), issues


def substitute(text: str, env: Mapping[str, str]) -> tuple[str, bool]:
    """``text`` with its references replaced, and whether it was exactly one ``${...}`` reference."""
    whole = False
    out: list[str] = []
    position = 0
    for match in _TOKEN.finditer(text):
        out.append(text[position : match.start()])
        position = match.end()
        token = match.group(0)
        if token == "$${":
            out.append("${")
            continue
        if match.group(1) is None:
            raise _Unresolved("a closing '}'", "unterminated ${ (write $${ for a literal ${)")
        whole = match.start() == 0 and match.end() == len(text)
        out.append(_resolve(match.group(1), env))
    out.append(text[position:])
    return "".join(out), whole


def _resolve(body: str, env: Mapping[str, str]) -> str:
    match = _REFERENCE.match(body)
    if match is None:
        raise _Unresolved(
            "${NAME}, ${NAME:-default} or ${NAME-default}",
            f"{'${' + body + '}'!r} is not a valid reference (names are letters, digits and _)",
        )
    name, operator, default = match.group(1), match.group(2) or "", match.group(3) or ""
    value = env.get(name)
    if operator == ":-" and not value:
        return default
    if operator == "-" and value is None:
        return default
    if value is None:
        raise _Unresolved(
            f"environment variable {name} to be set",
            f"environment variable {name} is not set (set it, or give a default: ${{{name}:-...}})",
        )
    return value


def retype(text: str) -> Any:
    """Read an interpolated plain scalar as YAML would: int, float, bool, null, else the string itself."""
    lowered = text.strip().lower()
    if lowered in _NULLS:
        return None
    if lowered in _BOOLS:
        return _BOOLS[lowered]
    if _INT.match(text.strip()):
        return int(text.strip())
    if _FLOAT.match(text.strip()):
        return float(text.strip())
    return text
