"""The demo's table, plot and JSON from recorded samples (no Spark, no broker; the fault plan: test_schedule.py)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from mutepro.demo.report import plot, table, write_json
from mutepro.demo.samples import BatchSample, Event, JobSamples, summarize
from mutepro.demo.schedule import plan_faults


def _jobs() -> list[JobSamples]:
    ours, theirs = JobSamples("mutepro sink", committed=1200, read_back=1200, distinct=1200), JobSamples("built-in")
    for second in range(40):
        for _ in range(30):
            ours.add_delivery(second, 20.0)
            if not 12 <= second < 28:
                theirs.add_delivery(second, 40.0)
    ours.batches = [BatchSample(i, float(i), 0.5, 30) for i in range(40)]
    theirs.batches = [BatchSample(i, float(i), 12.0 if i == 12 else 0.5, 30) for i in range(40)]
    ours.events = [Event(14.0, "mute", "t:1", "w"), Event(31.0, "unmute", "t:1", "w")]
    ours.muted = [(14.5, 1), (31.0, 0)]
    theirs.events = [Event(22.0, "failed", "TimeoutException"), Event(23.0, "restarted")]
    return [ours, theirs]


class TestOutputs:
    def test_table_has_a_row_per_figure_and_a_column_per_job(self) -> None:
        """Rates per phase, the fault ratio, batch times, p99, losses, duplicates and mute timings are all there."""
        plan = plan_faults(40, "both")
        jobs = _jobs()
        t = table([summarize(j, plan) for j in jobs], plan, "title")
        console = Console(width=200, record=True)
        console.print(t)
        text = console.export_text()
        for needle in ("rows/s before", "rows/s limp", "rows/s stall", "during fault / before", "p99 latency",
                       "rows lost", "duplicates", "time to mute", "time to unmute", "query failures",
                       "mutepro sink", "built-in"):
            assert needle in text

    def test_plot_and_json_are_written(self, tmp_path: Path) -> None:
        """A PNG and a JSON with every job's summary, per-second rates, batches and events."""
        plan = plan_faults(40, "stall")
        jobs = _jobs()
        summaries = [summarize(j, plan) for j in jobs]
        png, data = tmp_path / "demo.png", tmp_path / "demo.json"
        plot(jobs, summaries, plan, 30, png, "title")
        write_json(data, {"rate": 30}, plan, jobs, summaries, [("stall", 10.1, 28.0)])
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        record = json.loads(data.read_text())
        assert set(record["jobs"]) == {"mutepro sink", "built-in"}
        ours = record["jobs"]["mutepro sink"]
        assert ours["summary"]["lost"] == 0
        assert len(ours["rows_per_s"]) == 40
        assert record["jobs"]["built-in"]["events"][0]["kind"] == "failed"
        assert record["fault_marks"] == [{"phase": "stall", "start_s": 10.1, "end_s": 28.0}]
