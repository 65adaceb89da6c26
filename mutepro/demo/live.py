"""The demo's view while it runs: a live ``rich`` table on a terminal, one plain line every few seconds otherwise."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from mutepro.demo.schedule import FAULTY_BROKER, FaultPlan

_PLAIN_EVERY_S = 5.0


class LiveView:
    """Shows elapsed/remaining time, the fault window, and per job: rows/s, batches, muted partitions, failures."""

    def __init__(self, plan: FaultPlan, jobs: Sequence[Any], readback: Any, console: Console) -> None:
        self.plan = plan
        self.jobs = jobs
        self.readback = readback
        self.console = console
        self._live: Live | None = None
        self._last_line = float("-inf")

    def __enter__(self) -> LiveView:
        if self.console.is_terminal:
            self._live = Live(console=self.console, refresh_per_second=2, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)

    def update(self, now_s: float) -> None:
        if self._live is not None:
            self._live.update(self._render(now_s))
        elif time.monotonic() - self._last_line >= _PLAIN_EVERY_S:
            self._last_line = time.monotonic()
            self.console.print(self.line(now_s), highlight=False, soft_wrap=True)

    def _phase_text(self, now_s: float) -> str:
        phase = self.plan.phase_at(now_s)
        start, end = self.plan.window
        where = {"before": f"fault at {start:.0f}s", "after": "fault over"}.get(
            phase, f"broker {FAULTY_BROKER} {phase}"
        )
        return f"{phase.upper()} ({where}; fault window {start:.0f}-{end:.0f}s)"

    def line(self, now_s: float) -> str:
        """The plain-output line: time, phase and each job's rate, last batch, muted partitions, failures."""
        left = max(0.0, self.plan.duration_s - now_s)
        parts = [f"t={now_s:5.1f}s ({left:4.0f}s left) {self._phase_text(now_s)}"]
        for job in self.jobs:
            parts.append(
                f"{job.samples.name}: {self.readback.recent_rate(job.topic, now_s):7.0f} rows/s, "
                f"last batch {_seconds(job.last_batch_s)}, muted {len(job.muted)}, "
                f"failures {sum(1 for e in job.samples.events if e.kind == 'failed')}"
            )
        return " | ".join(parts)

    def _render(self, now_s: float) -> Group:
        left = max(0.0, self.plan.duration_s - now_s)
        head = Text.assemble(
            ("mutepro demo  ", "bold"), f"elapsed {now_s:5.1f}s  remaining {left:4.0f}s  ",
            (self._phase_text(now_s), "bold red" if self.plan.phase_at(now_s) in ("limp", "stall") else "green"),
        )
        table = Table(expand=False)
        for col in ("job", "rows/s (last 5 s)", "rows delivered", "last batch", "muted partitions", "failures"):
            table.add_column(col, justify="left" if col in ("job", "muted partitions") else "right")
        for job in self.jobs:
            s = job.samples
            muted = ", ".join(p.rsplit(":", 1)[-1] for p in job.muted) if job.muted else "-"
            table.add_row(
                s.name, f"{self.readback.recent_rate(job.topic, now_s):,.0f}", f"{s.read_back:,}",
                _seconds(job.last_batch_s), muted if job.sink == "mutepro" else "n/a (no muting)",
                str(sum(1 for e in s.events if e.kind == "failed")),
            )
        return Group(head, table)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"
