"""The plain-producer half of the demo (mutepro.demo.plain), without a cluster: what one run's figures say (lost,
p99, the rate during the fault against before it) and the comparison plot (running against the cluster:
tests/integration/test_demo.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.demo.plain import RunResult, plot
from mutepro.demo.schedule import plan_faults


class TestRunResult:
    def test_lost_is_what_got_no_final_report(self) -> None:
        assert RunResult("plain", produced=100, delivered=90, failed=4).lost == 6

    def test_p99_of_the_latencies(self) -> None:
        """100 latencies 1..100 ms: index int(0.99 * 100) = 99, the largest, 100 ms; none: 0."""
        result = RunResult("plain", latencies_s=[i / 1000 for i in range(100, 0, -1)])
        assert result.p99_ms == pytest.approx(100.0)
        assert RunResult("plain").p99_ms == 0.0

    def test_fault_ratio_is_the_fault_rate_over_the_rate_before(self) -> None:
        """500 delivered in a 10 s fault (50/s) against 200/s before: 0.25."""
        result = RunResult("plain", fault_window=(10.0, 20.0), during_fault=500, before_fault_rate=200.0)
        assert result.fault_ratio == pytest.approx(0.25)
        assert RunResult("plain", fault_window=(10.0, 10.0), during_fault=5, before_fault_rate=1.0).fault_ratio == 0
        assert RunResult("plain", fault_window=(0.0, 1.0), during_fault=5).fault_ratio == 0


class TestPlot:
    def test_a_png_of_both_producers(self, tmp_path: Path) -> None:
        pytest.importorskip("matplotlib")
        runs = [RunResult("plain", per_second=[100] * 40), RunResult("mutepro", per_second=[100] * 40)]
        out = tmp_path / "plain.png"
        plot(runs, out, plan_faults(40, "both"))
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
