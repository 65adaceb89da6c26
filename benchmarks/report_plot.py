"""A plot for a result whose benchmark draws none: its headline figures as bars, median with the min..max range.

Used by ``python benchmarks/make_report.py --plots``, which draws ``results/<name>.png`` for each result without
one. Figures are grouped into one panel per kind, the second segment of the dotted path being the bar: e.g.
``styles.positional.ratio`` and ``styles.keywords.ratio`` are two bars of the panel ``styles.*.ratio``.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on the benchmark machine
import matplotlib.pyplot as plt
from make_report import Row

# Beyond this many panels a figure is unreadable; the README's table holds every figure anyway.
MAX_PANELS = 8


def panel_key(path: str) -> tuple[str, str]:
    """(panel, bar) of a figure: ``styles.positional.ratio`` -> (``styles.*.ratio``, ``positional``)."""
    segs = path.split(".")
    if len(segs) == 1:
        return segs[0], segs[0]
    return ".".join([segs[0], "*", *segs[2:]]), segs[1]


def plot_rows(title: str, rows: list[Row], path: Path) -> bool:
    """Draw ``rows`` into ``path``; False (nothing drawn) when there is no figure."""
    panels: dict[str, list[tuple[str, Row]]] = {}
    for row in rows:
        panel, bar = panel_key(row.path)
        panels.setdefault(panel, []).append((bar, row))
    if not panels:
        return False
    chosen = list(panels.items())[:MAX_PANELS]
    fig, axes = plt.subplots(len(chosen), 1, figsize=(10, 0.9 + sum(0.28 * len(b) + 0.6 for _, b in chosen)),
                             squeeze=False)
    for ax, (panel, bars) in zip(axes[:, 0], chosen, strict=True):
        labels = [b for b, _ in bars]
        values = [float(r.value) for _, r in bars]
        lo = [float(r.value) - float(r.spread[0]) if r.spread else 0.0 for _, r in bars]
        hi = [float(r.spread[1]) - float(r.value) if r.spread else 0.0 for _, r in bars]
        ys = range(len(bars))
        ax.barh(ys, values, xerr=[lo, hi], color="#1f77b4", ecolor="#333333", capsize=3)
        ax.set_yticks(list(ys), labels, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(f"{panel} (bar: median, whisker: min..max)", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
