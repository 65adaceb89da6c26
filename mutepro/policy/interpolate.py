"""``${ENV_VAR}`` interpolation, so secrets and per-environment values stay out of policy files.

Forms (in any string value, anywhere in it): ``${NAME}`` (an error if unset), ``${NAME:-default}`` (default
when unset or empty, as in POSIX shells), ``${NAME-default}`` (default only when unset); ``$${`` writes a
literal ``${``. Defaults may themselves hold references (``${A:-${B:-x}}``), resolved only when used, up to
:data:`MAX_NESTING` deep. Keys are never interpolated.

Every path whose value took text from the environment is recorded (``Source.from_env``, with the text as
written), so error messages quote ``${DB_PASSWORD}`` rather than the password, and ``config show`` hides
strings that came from the environment.

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
#: How deep defaults may nest references (``${A:-${B:-${C:-x}}}`` is 3).
MAX_NESTING = 8
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
    from_env: dict[KeyPath, str] = dict(source.from_env)

    def visit(value: Any, path: KeyPath) -> Any:
        if isinstance(value, dict):
            return {key: visit(item, (*path, key)) for key, item in value.items()}
        if isinstance(value, list):
            return [visit(item, (*path, index)) for index, item in enumerate(value)]
        if not isinstance(value, str) or "$" not in value:
            return value
        used: list[str] = []
        try:
            text, whole = substitute(value, env, used)
        except _Unresolved as err:
            # found is the text as written (redacted for secret keys), never an environment value.
            issues.append(source.issue(path, expected=err.expected, message=err.message))
            return value
        if used:
            from_env[path] = value
        if whole and path not in source.quoted and path[:1] != ("client",):
            return retype(text)
        return text

    data = visit(source.data, ())
    return Source(source.name, data, source.marks, source.quoted, from_env), issues


def substitute(
    text: str, env: Mapping[str, str], used: list[str] | None = None, depth: int = 0
) -> tuple[str, bool]:
    """``text`` with its references replaced, and whether it was exactly one ``${...}`` reference.

    ``used`` (if given) collects the names of the variables whose environment values went into the result.
    """
    whole = False
    out: list[str] = []
    position = 0
    while True:
        start = text.find("$", position)
        if start < 0:
            break
        if text.startswith("$${", start):
            out.append(text[position:start] + "${")
            position = start + 3
            continue
        if not text.startswith("${", start):
            out.append(text[position : start + 1])
            position = start + 1
            continue
        end = _closing(text, start + 2)
        if end < 0:
            raise _Unresolved("a closing '}'", "unterminated ${ (write $${ for a literal ${)")
        out.append(text[position:start])
        whole = start == 0 and end == len(text) - 1
        out.append(_resolve(text[start + 2 : end], env, used, depth))
        position = end + 1
    out.append(text[position:])
    return "".join(out), whole


def _closing(text: str, position: int) -> int:
    """Index of the ``}`` closing a ``${`` whose body starts at ``position`` (nested ``${...}`` skipped), or -1."""
    depth = 1
    while position < len(text):
        if text.startswith("${", position):
            depth += 1
            position += 2
            continue
        if text[position] == "}":
            depth -= 1
            if depth == 0:
                return position
        position += 1
    return -1


def _resolve(body: str, env: Mapping[str, str], used: list[str] | None, depth: int) -> str:
    match = _REFERENCE.match(body)
    if match is None:
        raise _Unresolved(
            "${NAME}, ${NAME:-default} or ${NAME-default}",
            f"{'${' + body + '}'!r} is not a valid reference (names are letters, digits and _)",
        )
    name, operator, default = match.group(1), match.group(2) or "", match.group(3) or ""
    value = env.get(name)
    if (operator == ":-" and not value) or (operator == "-" and value is None):
        if "${" not in default:
            return default.replace("$${", "${")
        if depth >= MAX_NESTING:
            raise _Unresolved(
                f"at most {MAX_NESTING} nested ${{...}} defaults", "references nested too deeply in a default"
            )
        return substitute(default, env, used, depth + 1)[0]
    if value is None:
        raise _Unresolved(
            f"environment variable {name} to be set",
            f"environment variable {name} is not set (set it, or give a default: ${{{name}:-...}})",
        )
    if used is not None:
        used.append(name)
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
