"""A replay as a picture: each partition's oldest undelivered age over time, with its mutes and the faults."""

from __future__ import annotations

import os
from pathlib import Path

from mutepro.trace.format import open_trace
from mutepro.trace.replay import Replay


def plot_replay(path: str | os.PathLike[str], result: Replay, out: Path) -> None:
    """Top: the oldest undelivered message's age per partition (log scale), one colour per leader; bottom: when
    the model had each partition muted (red) or probing (orange); faults shaded grey in both."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ages: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
    leader_of: dict[tuple[str, int], int] = {}
    start = None
    for rec in open_trace(path):
        if rec["kind"] == "start":
            start = float(rec["t"])
        elif rec["kind"] == "meta":
            for p, leader, _replicas, _isr in rec["partitions"]:
                leader_of[(rec["topic"], p)] = leader
        elif rec["kind"] == "round" and start is not None:
            t = float(rec["t"]) - start
            for topic, p, _sent, _out, _bytes, oldest_ms, _warm, _older in rec["loads"]:
                xs, ys = ages.setdefault((topic, p), ([], []))
                xs.append(t)
                ys.append(max(oldest_ms, 0.5) / 1000.0)
    keys = sorted({*ages, *((d.topic, d.partition) for d in result.decisions)})
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 7), sharex=True, height_ratios=(2, 1))
    cmap = plt.get_cmap("tab10")
    for key in keys:
        if key in ages:
            xs, ys = ages[key]
            top.plot(xs, ys, lw=0.7, color=cmap(leader_of.get(key, 0) % 10))
    top.set_yscale("log")
    top.set_ylabel("oldest undelivered (s)")
    top.set_title(f"{Path(path).name}: colour = leader; mutes below (red muted, orange probing)")
    row = {k: i for i, k in enumerate(keys)}
    state: dict[tuple[str, int], tuple[str, float]] = {}
    for d in [*result.decisions, None]:
        items = [(k, ev, since) for k, (ev, since) in state.items()] if d is None else []
        if d is not None:
            key = (d.topic, d.partition)
            if key in state:
                items = [(key, *state[key])]
            state[key] = (d.event, d.t)
        for key, ev, since in items:
            end = result.end if d is None else d.t
            if ev in ("mute", "remute", "probe"):
                colour = "tab:orange" if ev == "probe" else "tab:red"
                bottom.broken_barh([(since, end - since)], (row[key] - 0.4, 0.8), color=colour)
    bottom.set_yticks(range(len(keys)), [f"{t}[{p}]" for t, p in keys], fontsize=6)
    bottom.set_xlabel("seconds since the trace began")
    for f in result.faults:
        for ax in (top, bottom):
            ax.axvspan(f.t, f.end if f.end is not None else result.end, color="grey", alpha=0.15)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
