"""The benchmark's PNG: one throughput-over-time panel per fault scenario (fault shaded, both producers
overlaid) and a panel of the headline ratios against the plain producer measured in the same run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display on the benchmark machine
import matplotlib.pyplot as plt

_COLORS = {"plain": "#888888", "mute": "#1f77b4", "java": "#ff7f0e"}
_LABELS = {"plain": "confluent_kafka.Producer", "mute": "MuteProducer", "java": "Java KafkaProducer (KIP-794 adaptive)"}


def plot(result: dict[str, Any], path: Path) -> None:
    scenarios = result.get("scenarios", {})
    panels = len(scenarios) + 1
    fig, axes = plt.subplots(panels, 1, figsize=(11, 3.4 * panels), squeeze=False)
    for ax, (name, sc) in zip(axes[:, 0], scenarios.items(), strict=False):
        _scenario_panel(ax, name, sc)
    _ratio_panel(axes[-1, 0], result)
    fig.suptitle(result.get("meta", {}).get("title", "mutepro producer benchmark"), fontsize=12)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _scenario_panel(ax: Any, name: str, sc: dict[str, Any]) -> None:
    fault = sc["fault"]
    ax.axvspan(fault["start_s"], fault["end_s"], color="#ffcccc", alpha=0.6, label=f"fault: {fault['kind']}")
    for who in ("plain", "mute", "java"):
        run = sc.get(who)
        if run is None:
            continue
        series = run["series"]["delivered_per_s"]
        xs = [i + 0.5 for i in range(len(series))]
        tp = run["throughput"]
        label = (
            f"{_LABELS[who]}: during/before {tp['during_over_before']}, BufferErrors {run['buffer_errors']}, "
            f"lost {run['lost']}, p99 {run['latency_ms']['p99']} ms"
        )
        ax.plot(xs, series, color=_COLORS[who], lw=1.6, label=label)
    rate = sc.get("target_rate")
    if rate:
        ax.axhline(rate, color="black", lw=0.8, ls=":", label=f"offered {rate:.0f} msg/s")
    mute = sc.get("mute", {}).get("mute_timing", {})
    tm, tu = mute.get("time_to_first_mute_s"), mute.get("time_to_last_unmute_s")
    muted = f"mute after {tm} s" if tm is not None else "never muted"
    unmuted = f"last unmute {tu} s after the fault" if tu is not None else "still muted at the end of the run"
    ax.set_title(f"{name}: {sc['description']}\nMuteProducer: {muted}, {unmuted}", fontsize=9)
    ax.set_xlabel("seconds since load start (after the load: bounded flush)")
    ax.set_ylabel("delivered msg/s")
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3)


def _ratio_panel(ax: Any, result: dict[str, Any]) -> None:
    labels: list[str] = []
    values: list[float] = []
    happy = result.get("happy_path", {})
    for mode in ("unkeyed", "keyed"):
        r = happy.get(mode, {}).get("ratio")
        if r is not None:
            labels.append(f"happy {mode}\nMute/plain msg/s")
            values.append(r)
    for name, sc in result.get("scenarios", {}).items():
        for who in ("plain", "mute", "java"):
            r = sc.get(who, {}).get("throughput", {}).get("during_over_before")
            if r is not None:
                labels.append(f"{name}\n{ {'mute': 'Mute', 'plain': 'plain', 'java': 'Java'}[who]} during/before")
                values.append(r)
    colors = ["#1f77b4" if "Mute" in lab else "#ff7f0e" if "Java" in lab else "#888888" for lab in labels]
    bars = ax.bar(range(len(values)), values, color=colors)
    for bar, v in zip(bars, values, strict=True):
        ax.text(bar.get_x() + bar.get_width() / 2, v + 0.02, f"{v:.2f}", ha="center", fontsize=8)
    ax.axhline(0.9, color="red", lw=1, ls="--", label="goal 0.9")
    ax.set_xticks(range(len(values)), labels, fontsize=7)
    ax.set_ylabel("ratio")
    ax.set_ylim(0, max([1.1, *values]) * 1.1)
    ax.set_title("headline ratios (same cluster, same run)", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)


_EVENT_STYLE = {"mute": ("#d62728", "-"), "remute": ("#d62728", ":"), "unmute": ("#2ca02c", "-")}


def plot_faults(result: dict[str, Any], path: Path) -> None:
    """saturated_bench.py's fault runs: delivered msg/s per second of each producer, the fault window shaded and
    MuteProducer's mute, re-mute and unmute moments marked (one line per moment, not per partition)."""
    faults = result.get("faults", {})
    fig, axes = plt.subplots(len(faults), 1, figsize=(11, 3.6 * len(faults)), squeeze=False)
    for ax, (fault, entry) in zip(axes[:, 0], faults.items(), strict=True):
        window = entry["mute"].get("fault_s")
        if window:
            ax.axvspan(window[0], window[1], color="#ffcccc", alpha=0.6, label=f"broker 2 {fault}")
        for who in ("plain", "mute", "java"):
            run = entry.get(who)
            if run is None or "delivered_per_s" not in run:
                continue
            series = run["delivered_per_s"]
            label = f"{_LABELS[who]}: during/before {run.get('during_over_pre')}, lost {run.get('lost')}"
            ax.plot([i + 0.5 for i in range(len(series))], series, color=_COLORS[who], lw=1.6, label=label)
        seen: set[tuple[str, float]] = set()
        for event in entry["mute"].get("events", []):
            style = _EVENT_STYLE.get(event["kind"])
            moment = (event["kind"], round(event["t"], 1))
            if style is None or moment in seen:
                continue
            label = event["kind"] if event["kind"] not in {k for k, _ in seen} else None
            seen.add(moment)
            ax.axvline(event["t"], color=style[0], ls=style[1], lw=0.9, label=label)
        ax.set_title(f"saturated closed loop, default policy: broker 2 {fault}", fontsize=9)
        ax.set_xlabel("seconds since the run's start")
        ax.set_ylabel("delivered msg/s")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="lower left")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
