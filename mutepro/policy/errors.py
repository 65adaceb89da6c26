"""Policy problems: one :class:`PolicyIssue` per thing wrong, all raised together in a :class:`PolicyError`.

A user fixing a policy file wants every problem in one pass, each pointing at the line to edit, so nothing
here stops at the first error: readers, interpolation, schema validation and the cross-field checks all
collect issues and the loader raises once. Every ``found`` value has already been redacted by whoever built
the issue (see :mod:`mutepro.policy.redact`), so printing an issue can never leak a secret.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mutepro.errors import ConfigError


@dataclass(frozen=True)
class PolicyIssue:
    """One problem in a policy: where it is (file, 1-based line and column, key path) and what is wrong.

    ``path`` is the dotted key path (``topics.orders.slow_call.threshold_ms``; keys that contain dots are
    quoted: ``client."message.timeout.ms"``). ``line``/``column`` are ``None`` for mappings passed in from
    code.
    """

    file: str | None
    line: int | None
    column: int | None
    path: str
    expected: str
    found: str
    message: str

    @property
    def location(self) -> str:
        """``file:line:column`` as far as known (editors and terminals turn this into a link)."""
        parts = [self.file or "<policy>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        where = f"{self.location}: {self.path}: " if self.path else f"{self.location}: "
        return f"{where}{self.message} (expected {self.expected}, found {self.found})"


class PolicyError(ConfigError):
    """A policy could not be loaded; ``issues`` lists every problem found, in file and line order."""

    def __init__(self, issues: Iterable[PolicyIssue]) -> None:
        self.issues: list[PolicyIssue] = list(issues)
        count = len(self.issues)
        noun = "problem" if count == 1 else "problems"
        lines = [f"invalid mutepro policy: {count} {noun}"]
        lines.extend(f"  {issue}" for issue in self.issues)
        super().__init__("\n".join(lines))
