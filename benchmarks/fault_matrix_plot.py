"""The fault matrix as one PNG grid: a row per cell, a column per figure, each square coloured by how MuteProducer
did — against the plain client in the same cell (better / same within the spread / worse) for the figures both
have, against the issue's goal (met / missed) for MuteProducer's own. The text in a square is the figure itself
(``MuteProducer / plain`` where both have one)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display on the benchmark machine
import matplotlib.pyplot as plt
from fault_matrix_metrics import COLUMNS, cell_text, cell_verdict, tally
from matplotlib.patches import Patch

COLOURS = {
    "better": "#7fc97f",
    "met": "#b8e0b8",
    "same": "#f0f0f0",
    "worse": "#f08080",
    "missed": "#f4a6a6",
    "n/a": "#ffffff",
}
LEGEND = (
    ("better", "MuteProducer better than plain (beyond the spread)"),
    ("same", "same within the spread"),
    ("worse", "MuteProducer worse than plain"),
    ("met", "the issue's goal met"),
    ("missed", "the issue's goal missed"),
    ("n/a", "no figure, or no goal in this cell"),
)


def describe(cell: Mapping[str, Any]) -> str:
    """A cell's parameters in a few words (the row label's second line)."""
    load = f"{cell['rate']:,}/s" if cell.get("load") == "open" else "saturated"
    fault = cell.get("fault", "?")
    if fault in ("limp", "rotate"):
        fault += f" {cell['duty']:.0%}/{cell['period_s']:g}s"
    parts = [fault, f"{cell['brokers']}b {cell['partitions']}p RF{cell['rf']} acks={cell['acks']}", load]
    if cell.get("keyed"):
        parts.append("keyed")
    if cell.get("value_bytes", 512) != 512:
        parts.append(f"{cell['value_bytes'] // 1024} KB")
    if cell.get("idempotent"):
        parts.append("idempotent")
    if cell.get("cpu_hogs"):
        parts.append(f"{cell['cpu_hogs']} CPU hogs")
    return ", ".join(parts)


def plot_grid(result: Mapping[str, Any], path: Path) -> None:
    cells = result.get("cells", {})
    rows = list(cells.items())
    n_rows, n_cols = max(1, len(rows)), len(COLUMNS)
    fig_w, fig_h = 3.6 + 1.3 * n_cols, 2.0 + 0.42 * n_rows
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    ax.set_xlim(0, n_cols)
    ax.set_ylim(n_rows, 0)
    for r, (_name, entry) in enumerate(rows):
        for c, (metric, _) in enumerate(COLUMNS):
            if "error" in entry:
                colour, text = "#dddddd", "error" if c == 0 else ""
            else:
                colour, text = COLOURS[cell_verdict(metric, entry)], cell_text(metric, entry)
            ax.add_patch(plt.Rectangle((c, r), 1, 1, facecolor=colour, edgecolor="#999999", lw=0.5))
            ax.text(c + 0.5, r + 0.5, text, ha="center", va="center", fontsize=6.5)
    ax.set_xticks([c + 0.5 for c in range(n_cols)])
    ax.set_xticklabels([textwrap.fill(label, 14) for _, label in COLUMNS], fontsize=7)
    ax.xaxis.tick_top()
    ax.set_yticks([r + 0.5 for r in range(n_rows)])
    ax.set_yticklabels([f"{name}\n{describe(entry.get('cell', {}))}" for name, entry in rows], fontsize=6.5)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    meta = result.get("meta", {})
    sched = meta.get("schedule", {})
    counts = tally(result)
    worse = sum(v.get("worse", 0) for v in counts.values())
    missed = sum(v.get("missed", 0) for v in counts.values())
    fig.suptitle(
        f"mutepro fault matrix: MuteProducer (default policy) / plain confluent_kafka.Producer, each cell on fresh "
        f"topics, read back — {len(rows)} cells, {worse} squares worse than plain, {missed} goals missed\n"
        f"{sched.get('before_s', '?')} s healthy, {sched.get('fault_s', '?')} s fault on broker "
        f"{meta.get('fault_broker', '?')}, {sched.get('after_s', '?')} s after; {meta.get('nproc', '?')} cores, "
        f"confluent-kafka {meta.get('confluent_kafka', '?')}, librdkafka {meta.get('librdkafka', '?')}, Kafka "
        f"{meta.get('kafka', '?')}, {meta.get('date', '')[:16]}",
        fontsize=9,
    )
    handles = [Patch(facecolor=COLOURS[k], edgecolor="#999999", label=label) for k, label in LEGEND]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 0.95))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
