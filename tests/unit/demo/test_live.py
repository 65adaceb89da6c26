"""The demo's view while it runs (mutepro.demo.live), on stand-in jobs and read-back: the plain line off a
terminal (time left, the phase, each job's figures), and the live table on one."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from rich.console import Console

from mutepro.demo.live import LiveView
from mutepro.demo.samples import Event, JobSamples
from mutepro.demo.schedule import FAULTY_BROKER, plan_faults


@dataclass
class _Job:
    samples: JobSamples
    topic: str
    sink: str
    last_batch_s: float | None = None
    muted: list[str] = field(default_factory=list)


class _ReadBack:
    def recent_rate(self, topic: str, now_s: float, seconds: int = 5) -> float:
        return {"ours": 950.0, "theirs": 12.0}[topic]


def _jobs() -> list[_Job]:
    ours = _Job(JobSamples("mutepro sink", read_back=1234), "ours", "mutepro", 0.5, ["demo:1", "demo:4"])
    theirs = _Job(JobSamples("built-in"), "theirs", "builtin")
    theirs.samples.events = [Event(20.0, "failed", "TimeoutException"), Event(21.0, "restarted")]
    return [ours, theirs]


def _view(terminal: bool) -> tuple[LiveView, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=200, color_system=None)
    return LiveView(plan_faults(40, "stall"), _jobs(), _ReadBack(), console), out


class TestPlainLine:
    def test_time_phase_and_each_jobs_figures(self) -> None:
        """40 s run, stall 10-28 s: at 12 s, 28 s left, the broker stalled; ours muted 2, theirs failed once."""
        view, _ = _view(terminal=False)
        line = view.line(12.0)
        assert line.startswith(f"t= 12.0s (  28s left) STALL (broker {FAULTY_BROKER} stall; fault window 10-28s)")
        assert "mutepro sink:     950 rows/s, last batch 0.5s, muted 2, failures 0" in line
        assert "built-in:      12 rows/s, last batch -, muted 0, failures 1" in line
        assert "BEFORE (fault at 10s;" in view.line(1.0) and "AFTER (fault over;" in view.line(30.0)

    def test_off_a_terminal_update_prints_the_line(self) -> None:
        view, out = _view(terminal=False)
        with view:
            view.update(12.0)
        assert out.getvalue().strip() == view.line(12.0)


class TestLiveTable:
    def test_on_a_terminal_a_table_per_job(self) -> None:
        view, out = _view(terminal=True)
        with view:
            view.update(12.0)
        text = out.getvalue()
        assert "mutepro demo" in text and "rows/s (last 5 s)" in text
        assert "1, 4" in text and "n/a (no muting)" in text  # ours' muted partitions; the built-in sink mutes none
