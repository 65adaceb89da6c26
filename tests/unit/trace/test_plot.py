"""A replay as a picture (mutepro.trace.plot), on a run recorded on the fake producer: a PNG is written, one
row per partition the trace or the decisions name, and the replay's CLI option draws it (where matplotlib is
installed: it is an optional extra)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mutepro.trace.cli import trace
from mutepro.trace.replay import Fault, replay
from tests.unit.trace._recorded import record_run

PNG = b"\x89PNG\r\n\x1a\n"


class TestPlotReplay:
    def test_a_png_with_a_row_per_partition(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        import matplotlib.figure

        from mutepro.trace.plot import plot_replay

        path, _, _ = record_run(tmp_path)
        result = replay(path)
        result.faults.append(Fault(0.5, 3, "stall", end=1.0))  # shaded: drawn without error
        ticks: list[list[str]] = []
        original = matplotlib.figure.Figure.savefig

        def savefig(fig: matplotlib.figure.Figure, *args: object, **kwargs: object) -> None:
            ticks.append([t.get_text() for t in fig.axes[1].get_yticklabels()])
            original(fig, *args, **kwargs)

        monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
        out = tmp_path / "replay.png"
        plot_replay(path, result, out)
        assert out.read_bytes()[:8] == PNG
        assert ticks == [[f"orders[{p}]" for p in range(4)]]

    def test_the_replay_command_draws_it(self, tmp_path: Path) -> None:
        path, _, _ = record_run(tmp_path)
        out = tmp_path / "cli.png"
        result = CliRunner().invoke(trace, ["replay", str(path), "--plot", str(out)])
        assert result.exit_code == 0, result.output
        assert out.read_bytes()[:8] == PNG and f"plot: {out}" in result.output
