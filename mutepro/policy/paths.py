"""Key paths: tuples of keys (``("topics", "orders", "slow_call", "threshold_ms")``) and their dotted display.

Client settings are dotted themselves (``message.timeout.ms``), and topic patterns may be (``metrics.*``), so
a key holding anything but letters, digits, ``_`` and ``-`` is quoted when shown:
``client."message.timeout.ms"``, ``topics."metrics.*".keyed_policy``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

KeyPath = tuple[str | int, ...]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def format_path(path: KeyPath) -> str:
    """The dotted form of ``path``; list indices as ``[0]``, unusual keys double-quoted."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        shown = part if _BARE_KEY.match(part) else '"' + part.replace('"', '\\"') + '"'
        out += f".{shown}" if out else shown
    return out


def get_path(data: Any, path: KeyPath) -> tuple[bool, Any]:
    """``(True, value)`` if ``path`` exists in nested mappings/lists ``data``, else ``(False, None)``."""
    node = data
    for part in path:
        in_mapping = isinstance(node, Mapping) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_mapping or in_list:
            node = node[part]
        else:
            return False, None
    return True, node


def walk(data: Any, prefix: KeyPath = ()) -> list[KeyPath]:
    """Every path in ``data`` (depth first, parents before children), ``prefix`` itself included."""
    paths: list[KeyPath] = [prefix]
    if isinstance(data, Mapping):
        for key, value in data.items():
            paths.extend(walk(value, (*prefix, key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            paths.extend(walk(value, (*prefix, index)))
    return paths
