"""Write benchmarks/README.md from benchmarks/results/: per benchmark, what it measures, and per result file the
command, machine, date, the figures with their spread and the plot.

    python benchmarks/make_report.py --write    # regenerate benchmarks/README.md
    python benchmarks/make_report.py --check    # exit 1 when the committed README differs from the generated one

Every ``results/<name>.json`` appears: under the benchmark its command names (``benchmarks/<script>.py``), with
the text of ``report/<script>.md`` when that template exists and a generic section when it does not. Command,
machine and date come from the result's own ``meta`` (or ``config``), else from ``results/provenance.json``
(filled from ``git log`` for results that did not record them), else the report says "not recorded".
The output depends on the committed files only (no clock, no git call), so a unit test can compare it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
TEMPLATES = HERE / "report"
README = HERE / "README.md"
PROVENANCE = "provenance.json"

# Keys whose values are raw material (per-run lists, event logs, time series, counters), not headline figures.
_SKIP = frozenset({
    "meta", "config", "runs", "events", "event_log", "series", "rounds", "batches", "per_second", "counters",
    "mute_runs_mutes", "failed_errors", "goals", "description",
    "target_rate", "load_s", "flush_s", "offered", "rejected_skipped_late", "messages_hit_buffer_error",
    "faulted_partitions", "muted_faulted_partitions", "muted_at_fault_end", "still_muted_at_end", "reasons",
    "start_s", "end_s", "broker", "fault", "replication_factor", "partitions_list", "stall_s", "rep",
})
# One result's table stops here; the JSON holds the rest (a fault matrix can have hundreds of cells).
MAX_ROWS = 60
_OUT = re.compile(r"\s--out[ =]\S+")


@dataclass(frozen=True)
class Row:
    """One figure: where it is in the JSON, its value (median when it has a spread) and its range."""

    path: str
    value: Any
    spread: tuple[Any, Any] | None = None


@dataclass(frozen=True)
class Result:
    name: str  # file stem, e.g. "producer_bench_java"
    benchmark: str  # script stem, e.g. "producer_bench"
    command: str
    machine: str
    date: str
    plot: str | None
    data: dict[str, Any]


def _fmt(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        if abs(v) >= 10:
            return f"{v:.1f}"
        return f"{v:.3g}"
    return str(v)


def _spread(d: dict[str, Any]) -> tuple[Any, Any, Any] | None:
    """(median, min, max) of a dict that states a spread: {median, min, max} or spark's {median_rows_per_s, ...}."""
    med = d.get("median", d.get("median_rows_per_s"))
    if med is None or "min" not in d or "max" not in d:
        return None
    return med, d["min"], d["max"]


def figures(data: Any, prefix: str = "") -> Iterator[Row]:
    """Headline figures of a result in JSON order: every spread, and every number or short string not inside one."""
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        if key in _SKIP or str(key).startswith("_"):
            continue
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            s = _spread(value)
            if s is not None:
                yield Row(path, s[0], (s[1], s[2]))
                # spark's summaries carry counts beside the spread
                rest = {k: v for k, v in value.items() if k not in ("median", "median_rows_per_s", "min", "max")}
                yield from figures(rest, path)
            else:
                yield from figures(value, path)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            yield Row(path, value)
        elif key == "error" and isinstance(value, str) and value:
            # a run that failed must show in the report, not only in the JSON
            yield Row(path, "failed: " + value.splitlines()[0][:80].replace("|", "/"))
        elif isinstance(value, list) and len(value) == 1 and _is_number(value[0]):
            yield Row(path, value[0])
        elif isinstance(value, list) and len(value) > 1 and all(_is_number(v) for v in value):
            # repetitions stored as a list (producer_bench's paired ratios, spark's per-run counts)
            ordered = sorted(value)
            mid = len(ordered) // 2
            med = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
            yield Row(path, med, (ordered[0], ordered[-1]))


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def matches(path: str, pattern: str) -> bool:
    """``pattern`` matches ``path`` segment by segment: ``*`` stands for one dotted segment, never several, so
    ``scenarios.*.*.lost`` takes ``scenarios.stalled.mute.lost`` but not ``scenarios.stalled.mute.counters.lost``."""
    segs, pats = path.split("."), pattern.split(".")
    return len(segs) == len(pats) and all(fnmatchcase(s, p) for s, p in zip(segs, pats, strict=True))


def _machine(meta: dict[str, Any]) -> str | None:
    m = meta.get("machine")
    if isinstance(m, str):
        return m
    parts: list[str] = []
    src = m if isinstance(m, dict) else meta
    cores = src.get("cpus", src.get("nproc"))
    if cores is not None:
        parts.append(f"{cores} cores")
    if "python" in src:
        parts.append(f"Python {src['python']}")
    load = src.get("loadavg_at_start", meta.get("load_before"))
    if isinstance(load, list) and load:
        parts.append(f"load average {load[0]:.2f} at start")
    for lib in ("confluent_kafka", "librdkafka", "spark", "connector", "mutepro_commit"):
        if lib in meta:
            parts.append(f"{lib} {meta[lib]}")
    return ", ".join(parts) or None


def _date(meta: dict[str, Any]) -> str | None:
    for key in ("date", "started_at"):
        v = meta.get(key)
        if isinstance(v, str) and v:
            return v[:10]
    return None


def _benchmark_of(stem: str, command: str, known: set[str]) -> str:
    m = re.search(r"benchmarks/(\w+)\.py", command)
    if m:
        return m.group(1)
    for name in sorted(known, key=len, reverse=True):
        if stem == name or stem.startswith(name + "_"):
            return name
    return stem


def load_results(results: Path = RESULTS, templates: Path = TEMPLATES) -> list[Result]:
    prov_path = results / PROVENANCE
    prov: dict[str, Any] = json.loads(prov_path.read_text()) if prov_path.exists() else {}
    known = {p.stem for p in templates.glob("*.md")}
    out = []
    for path in sorted(results.glob("*.json")):
        if path.name == PROVENANCE:
            continue
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            data = {"value": data}
        meta = data.get("meta") or data.get("config") or {}
        side = prov.get(path.name, {})
        # --out only says where the file went (often a scratch path); it is not part of what was measured
        command = _OUT.sub("", str(meta.get("command") or side.get("command") or "not recorded")).strip()
        png = path.with_suffix(".png")
        out.append(Result(
            name=path.stem,
            benchmark=_benchmark_of(path.stem, command, known),
            command=command,
            machine=str(side.get("machine") or _machine(meta) or "not recorded"),
            date=str(side.get("date") or _date(meta) or "not recorded"),
            plot=png.name if png.exists() else None,
            data=data,
        ))
    return out


@dataclass(frozen=True)
class Template:
    """report/<benchmark>.md: first line '# <title>'; a line '<!-- figures: PATTERN, ... -->' picks the figures
    shown (fnmatch patterns over the dotted JSON path, e.g. ``styles.*.ratio``); everything else is the body."""

    title: str
    body: str
    patterns: tuple[str, ...] = ()


_FIGURES_LINE = re.compile(r"^<!--\s*figures:(.*?)-->\s*$")


def _template(templates: Path, benchmark: str) -> Template:
    path = templates / f"{benchmark}.md"
    if not path.exists():
        return Template(benchmark, (
            f"No description yet: add `benchmarks/report/{benchmark}.md` (first line `# <title>`, then what it "
            "measures and how to read it). The figures below are every number the result file holds."
        ))
    lines = path.read_text().strip().splitlines()
    title = lines[0].removeprefix("# ").strip() if lines and lines[0].startswith("# ") else benchmark
    patterns: list[str] = []
    body: list[str] = []
    for line in lines[1:]:
        m = _FIGURES_LINE.match(line.strip())
        if m:
            patterns += [p.strip() for p in m.group(1).split(",") if p.strip()]
        else:
            body.append(line)
    return Template(title, "\n".join(body).strip(), tuple(patterns))


def _result_section(r: Result, patterns: tuple[str, ...]) -> list[str]:
    out = [
        f"### `results/{r.name}.json`",
        "",
        f"- Command: `{r.command}`",
        f"- Machine: {r.machine}",
        f"- Date: {r.date}",
    ]
    out.append(f"- Plot: [`results/{r.plot}`](results/{r.plot})" if r.plot else "- Plot: none recorded")
    out.append("")
    if r.plot:
        out += [f"![{r.name}](results/{r.plot})", ""]
    rows = shown_rows(r, patterns)
    # a template's patterns choose the figures; without one a result can hold hundreds (a fault matrix's cells)
    limit = len(rows) if patterns else MAX_ROWS
    if not rows:
        out += ["No figures in this result.", ""]
        return out
    out += ["| figure | value (median when repeated) | spread: min..max of the repetitions |", "| --- | ---: | ---: |"]
    for row in rows[:limit]:
        spread = f"{_fmt(row.spread[0])}..{_fmt(row.spread[1])}" if row.spread else "-"
        out.append(f"| `{row.path}` | {_fmt(row.value)} | {spread} |")
    if len(rows) > limit:
        out.append(f"\n{len(rows) - limit} more figures in the JSON file.")
    out.append("")
    return out


def render(results: Path = RESULTS, templates: Path = TEMPLATES) -> str:
    res = load_results(results, templates)
    by_bench: dict[str, list[Result]] = {}
    for r in res:
        by_bench.setdefault(r.benchmark, []).append(r)
    names = sorted(set(by_bench) | {p.stem for p in templates.glob("*.md")} - {"_intro"})
    intro = templates / "_intro.md"
    out = [intro.read_text().strip() if intro.exists() else "# Benchmarks", ""]
    out += ["| benchmark | results | newest date |", "| --- | --- | --- |"]
    for name in names:
        rs = by_bench.get(name, [])
        date = max((r.date for r in rs if r.date != "not recorded"), default="-")
        files = ", ".join(f"`{r.name}`" for r in rs) or "no current figures"
        out.append(f"| [{name}](#{name.replace('_', '')}) | {files} | {date} |")
    out.append("")
    for name in names:
        tpl = _template(templates, name)
        out += [f'<a id="{name.replace("_", "")}"></a>', "", f"## `{name}.py`: {tpl.title}", "", tpl.body, ""]
        rs = by_bench.get(name, [])
        if not rs:
            out += ["No current figures: no result of this benchmark is committed in `benchmarks/results/`.", ""]
        for r in rs:
            out += _result_section(r, tpl.patterns)
    out.append(
        "<!-- Generated by benchmarks/make_report.py from benchmarks/results/ and benchmarks/report/; "
        "edit those and run `python benchmarks/make_report.py --write`. -->"
    )
    return "\n".join(out).rstrip() + "\n"


def shown_rows(r: Result, patterns: tuple[str, ...]) -> list[Row]:
    """The figures the report shows for ``r``: the template's patterns, or all of them (no template)."""
    return [row for row in figures(r.data) if not patterns or any(matches(row.path, p) for p in patterns)]


# Benchmarks whose own plot function (module, function(result, path)) can redraw a result from its JSON alone.
_OWN_PLOTS = {"producer_bench": ("bench_plot", "plot")}


def draw_missing_plots(results: Path = RESULTS, templates: Path = TEMPLATES) -> list[Path]:
    import importlib

    from report_plot import plot_rows  # matplotlib only when drawing

    drawn = []
    for r in load_results(results, templates):
        if r.plot is None:
            path = results / f"{r.name}.png"
            if r.benchmark in _OWN_PLOTS:
                module, func = _OWN_PLOTS[r.benchmark]
                getattr(importlib.import_module(module), func)(r.data, path)
                drawn.append(path)
                continue
            rows = shown_rows(r, _template(templates, r.benchmark).patterns)[:MAX_ROWS]
            if plot_rows(f"{r.name} ({r.date})", rows, path):
                drawn.append(path)
    return drawn


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Write benchmarks/README.md from benchmarks/results/.")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true", help="regenerate benchmarks/README.md")
    g.add_argument("--check", action="store_true", help="exit 1 if benchmarks/README.md is not up to date")
    g.add_argument("--plots", action="store_true",
                   help="draw results/<name>.png for each result without a plot, then regenerate the README")
    args = p.parse_args(argv)
    if args.plots:
        draw_missing_plots()
        args.write = True
    text = render()
    if args.write:
        README.write_text(text)
        return 0
    if README.read_text() != text:
        print("benchmarks/README.md is stale: run python benchmarks/make_report.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
