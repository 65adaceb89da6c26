"""Sources merged in order (base, then environment overlays): mappings deep-merge, anything else replaces.

``base.yaml`` with ``defaults: {slow_call: {threshold_ms: 1000, enabled: true}}`` and ``prod.yaml`` with
``defaults: {slow_call: {threshold_ms: 400}}`` give ``{threshold_ms: 400, enabled: true}``. Lists and scalars
are replaced whole; an explicit ``null`` replaces too (``rescue: {header: null}`` in an overlay disables the
header). Each merged path keeps the mark of the source that supplied it, so errors point at the file that set
the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mutepro.policy.paths import KeyPath, walk
from mutepro.policy.source import Mark, Source


def deep_merge(base: Any, overlay: Any) -> Any:
    """``overlay`` merged over ``base``: mappings key by key (recursively), any other value replaces."""
    if isinstance(base, dict) and isinstance(overlay, dict):
        merged = dict(base)
        for key, value in overlay.items():
            merged[key] = deep_merge(base[key], value) if key in base else value
        return merged
    return overlay


def merge_sources(sources: Sequence[Source]) -> Source:
    """``sources`` merged in order into one; its name lists them all (``base.yaml + prod.yaml``)."""
    if not sources:
        return Source("<empty>", {}, {(): Mark("<empty>")})
    merged = sources[0]
    for overlay in sources[1:]:
        merged = _merge_two(merged, overlay)
    return merged


def _merge_two(base: Source, overlay: Source) -> Source:
    data = deep_merge(base.data, overlay.data)
    marks: dict[KeyPath, Mark] = {}
    quoted: set[KeyPath] = set()
    overlay_paths = set(walk(overlay.data))
    for path in walk(data):
        # The overlay supplied this path iff it wrote it (deep_merge only descends where both are mappings).
        origin = overlay if path in overlay_paths and path else base
        mark = origin.marks.get(path)
        if mark is not None:
            marks[path] = mark
        if path in origin.quoted:
            quoted.add(path)
    marks[()] = base.marks.get((), Mark(base.name))
    return Source(f"{base.name} + {overlay.name}", data, marks, quoted)
