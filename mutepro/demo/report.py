"""The demo's results: the end table (rich), the PNG plot (matplotlib, Agg) and the JSON record."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from mutepro.demo.samples import JobSamples, JobSummary, muted_steps, smoothed
from mutepro.demo.schedule import FAULTY_BROKER, LIMP_DUTY, LIMP_PERIOD_S, FaultPlan

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
_PHASE_STYLE = {
    "limp": ("#ff7f0e", 0.15, f"broker {FAULTY_BROKER} limping (stopped {LIMP_DUTY:.0%} of every {LIMP_PERIOD_S:g} s)"),
    "stall": ("#7f7f7f", 0.25, f"broker {FAULTY_BROKER} stalled (SIGSTOP)"),
}


def table(summaries: Sequence[JobSummary], plan: FaultPlan, title: str) -> Table:
    """Rows are figures, columns are jobs."""
    t = Table(title=title, title_justify="left")
    t.add_column("figure", justify="left")
    for s in summaries:
        t.add_column(s.name, justify="right")
    faults = [p for p in plan.phases if p.name not in ("before", "after")]
    windows = ["before", *[p.name for p in faults], *(["fault"] if len(faults) > 1 else []), "after"]

    def row(label: str, values: Sequence[Any]) -> None:
        t.add_row(label, *[_fmt(v) for v in values])

    for w in windows:
        row(f"rows/s {_window_label(w, plan)}", [s.rows_per_s.get(w) for s in summaries])
    row("rows/s during fault / before", [None if s.fault_vs_before is None else f"{s.fault_vs_before:.2f}x"
                                         for s in summaries])
    for w in windows:
        row(f"batch s median / max, {w}", [_pair(s.batch_seconds.get(w, {})) for s in summaries])
    for w in [*windows, "all"]:
        row(f"p99 latency ms, {w}", [s.p99_ms.get(w) for s in summaries])
    row("rows committed", [s.committed for s in summaries])
    row("rows read back", [s.read_back for s in summaries])
    row("rows lost", [s.lost for s in summaries])
    row("duplicates", [s.duplicates for s in summaries])
    row("time to mute (s after its fault phase began)",
        [f"{s.time_to_mute_s:.1f} ({s.muted_in})" if s.time_to_mute_s is not None else "-" for s in summaries])
    row("time to unmute all (s after fault end)",
        [("not within the run" if s.time_to_unmute_s is None else s.time_to_unmute_s) if s.mutes else "-"
         for s in summaries])
    row("mutes before the fault", [s.mutes_before_fault for s in summaries])
    row("query failures (restarted)", [s.failures for s in summaries])
    return t


def plot(jobs: Sequence[JobSamples], summaries: Sequence[JobSummary], plan: FaultPlan, rate: int, path: Path,
         title: str) -> None:
    """Rows/s of every job over time (top) and its micro-batch durations (bottom), the fault shaded, the
    mute-aware job's muted partitions as a step line, mutes/unmutes and query failures marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 7.2), sharex=True, gridspec_kw={"height_ratios": [3, 1.5]})
    duration = plan.duration_s
    for ax in (top, bottom):
        for p in plan.phases:
            style = _PHASE_STYLE.get(p.name)
            if style:
                ax.axvspan(p.start_s, p.end_s, color=style[0], alpha=style[1], label=style[2] if ax is top else None,
                           linewidth=0)
    top.axhline(rate, color="#555555", linestyle=":", linewidth=1, label=f"rows/s offered to each job ({rate:,})")
    # Catch-up bursts after a stall reach several times the offered rate; drawn to scale they would flatten the
    # steady rate and the dips that matter, so the axis stops at 5x the offered rate and a clipped peak is named
    ceiling = rate * 5.0
    muted_axis = None
    for i, (job, summary) in enumerate(zip(jobs, summaries, strict=True)):
        colour = _COLOURS[i % len(_COLOURS)]
        series = smoothed(job.delivered, duration)
        peak = max(series, default=0.0)
        if peak > ceiling:
            at = series.index(peak)
            top.annotate(f"catch-up burst: {peak:,.0f} rows/s", (at, ceiling), xytext=(12, -14),
                         textcoords="offset points", fontsize=8, color=colour)
        ratio = "" if summary.fault_vs_before is None else f", {summary.fault_vs_before:.2f}x of before during fault"
        top.plot(range(len(series)), series, color=colour, linewidth=2,
                 label=f"{job.name}: rows/s in Kafka (3 s avg){ratio}")
        starts = [b.start_s for b in job.batches]
        bottom.scatter(starts, [max(b.seconds, 0.01) for b in job.batches], s=12, color=colour, label=job.name)
        failures = [e.at_s for e in job.events if e.kind == "failed"]
        if failures:
            top.plot(failures, [0] * len(failures), marker="X", markersize=11, color=colour, linestyle="none")
            times = "once" if len(failures) == 1 else f"{len(failures)} times"
            top.annotate(f"{job.name}: query failed {times} (X),\nrestarted from its checkpoint", (failures[0], 0),
                         xytext=(8, 40), textcoords="offset points", fontsize=8, color=colour,
                         arrowprops={"arrowstyle": "->", "color": colour})
        steps = muted_steps(job.muted)
        if job.muted:
            if muted_axis is None:
                muted_axis = top.twinx()
                muted_axis.set_ylabel("partitions muted by the mutepro sink (dashed)")
            xs = [t for t, _ in steps] + [duration]
            ys = [c for _, c in steps] + [steps[-1][1]]
            muted_axis.step(xs, ys, where="post", color=colour, linestyle="--", linewidth=1.2, alpha=0.8,
                            label=f"{job.name}: partitions muted (of 12; broker {FAULTY_BROKER} leads 4)")
            if summary.time_to_mute_s is not None:
                began = next(p.start_s for p in plan.phases if p.name == summary.muted_in)
                _mark(top, began + summary.time_to_mute_s,
                      f"first mute, {summary.time_to_mute_s:.1f} s into the {summary.muted_in}", colour)
            if summary.time_to_unmute_s:
                _mark(top, plan.window[1] + summary.time_to_unmute_s,
                      f"all unmuted, {summary.time_to_unmute_s:.1f} s after the fault", "#2ca02c")
            elif summary.time_to_unmute_s is None:
                top.annotate(f"{steps[-1][1]} partitions still muted at the end", (duration, 0), xytext=(-6, 6),
                             textcoords="offset points", fontsize=8, color=colour, ha="right")
    if muted_axis is not None:
        muted_axis.set_ylim(0, max(12, muted_axis.get_ylim()[1]))
        lines, labels = top.get_legend_handles_labels()
        more, more_labels = muted_axis.get_legend_handles_labels()
        top.legend(lines + more, labels + more_labels, loc="upper left", fontsize=8, framealpha=0.9)
    else:
        top.legend(loc="upper left", fontsize=8, framealpha=0.9)
    top.set_ylim(0, ceiling)
    top.set_ylabel("rows written per second")
    top.grid(alpha=0.3)
    top.set_title(title, fontsize=11)
    bottom.set_yscale("log")
    bottom.set_ylabel("micro-batch duration (s)")
    bottom.set_xlabel("seconds since the streaming jobs started")
    bottom.legend(loc="upper left", fontsize=8)
    bottom.grid(alpha=0.3, which="both")
    bottom.set_xlim(0, duration)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_json(path: Path, config: dict[str, Any], plan: FaultPlan, jobs: Sequence[JobSamples],
               summaries: Sequence[JobSummary], marks: Sequence[tuple[str, float, float]]) -> None:
    """Everything the table and plot were made from, per job, plus the configuration and the real fault marks."""
    data = {
        "config": config,
        "plan": plan.as_dict(),
        "fault_marks": [{"phase": n, "start_s": a, "end_s": b} for n, a, b in marks],
        "jobs": {
            job.name: {
                "summary": summary.as_dict(),
                "rows_per_s": smoothed(job.delivered, plan.duration_s, width=1),
                "batches": [vars(b) for b in job.batches],
                "events": [vars(e) for e in job.events],
            }
            for job, summary in zip(jobs, summaries, strict=True)
        },
    }
    path.write_text(json.dumps(data, indent=1, default=str))


def _mark(ax: Any, x: float, text: str, colour: str) -> None:
    ax.axvline(x, color=colour, linestyle="-.", linewidth=1)
    ax.annotate(text, (x, 0), xytext=(3, 4), textcoords="offset points", rotation=90, fontsize=8, color=colour,
                va="bottom")


def _window_label(window: str, plan: FaultPlan) -> str:
    from mutepro.demo.samples import windows

    a, b = windows(plan)[window]
    return f"{window} ({a:.0f}-{b:.0f} s)"


def _pair(stats: dict[str, float | None]) -> str:
    if not stats or stats.get("median") is None:
        return "-"
    return f"{stats['median']:.1f} / {stats['max']:.1f}"


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
