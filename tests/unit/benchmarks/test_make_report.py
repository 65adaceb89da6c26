"""benchmarks/make_report.py: the benchmark report is generated from the committed results and cannot drift."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import make_report
from make_report import Row, figures, matches, render


def _write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data))


class TestCommittedReport:
    def test_readme_is_what_the_results_generate(self) -> None:
        """benchmarks/README.md equals the generator's output: run `python benchmarks/make_report.py --write`."""
        assert make_report.README.read_text() == render()

    def test_every_result_file_has_a_section(self) -> None:
        """Each results/<name>.json is reported, with its command, machine and date stated."""
        text = make_report.README.read_text()
        for result in make_report.load_results():
            assert f"### `results/{result.name}.json`" in text
            assert result.command != "not recorded", result.name
            assert result.machine != "not recorded", result.name
            assert result.date != "not recorded", result.name

    def test_no_heading_named_after_the_order_of_work(self) -> None:
        """No heading or result name counts sessions ("sixteenth session", "_s16")."""
        text = make_report.README.read_text().lower()
        for word in ("session", "sessions", "ninth", "tenth", "twelfth", "sixteenth"):
            assert re.search(rf"\b{word}\b", text) is None, word
        for result in make_report.load_results():
            assert not any(part[:1] == "s" and part[1:].isdigit() for part in result.name.split("_")), result.name


class TestGenericSection:
    def test_result_without_template_gets_a_generic_section(self, tmp_path: Path) -> None:
        """A new benchmark's result (say fault_matrix) appears with its figures and plot before anyone writes text."""
        results, templates = tmp_path / "results", tmp_path / "report"
        results.mkdir()
        templates.mkdir()
        _write(results / "fault_matrix.json", {
            "meta": {"command": "python benchmarks/fault_matrix.py", "date": "2026-11-28", "machine": "2 cores"},
            "cells": {"stall/hold": {"lost": 0, "ratio": {"median": 0.95, "min": 0.9, "max": 1.01}}},
        })
        (results / "fault_matrix.png").write_bytes(b"png")
        text = render(results, templates)
        assert "## `fault_matrix.py`: fault_matrix" in text
        assert "No description yet" in text
        assert "- Command: `python benchmarks/fault_matrix.py`" in text
        assert "![fault_matrix](results/fault_matrix.png)" in text
        assert "| `cells.stall/hold.ratio` | 0.95 | 0.9..1.01 |" in text
        assert "| `cells.stall/hold.lost` | 0 | - |" in text

    def test_provenance_fills_what_the_result_did_not_record(self, tmp_path: Path) -> None:
        """Command, machine and date come from provenance.json when the result lacks them; else 'not recorded'."""
        results, templates = tmp_path / "results", tmp_path / "report"
        results.mkdir()
        templates.mkdir()
        _write(results / "a_bench.json", {"x": 1})
        _write(results / "b_bench.json", {"x": 2})
        _write(results / "provenance.json", {"a_bench.json": {"command": "python a.py", "date": "2026-11-01",
                                                               "machine": "x86_64, 2 cores"}})
        by_name = {r.name: r for r in make_report.load_results(results, templates)}
        assert (by_name["a_bench"].command, by_name["a_bench"].date) == ("python a.py", "2026-11-01")
        assert by_name["a_bench"].machine == "x86_64, 2 cores"
        assert by_name["b_bench"].date == "not recorded"
        assert "provenance" not in by_name

    def test_template_without_result_says_no_current_figures(self, tmp_path: Path) -> None:
        """A benchmark that commits no result is listed with its text and 'No current figures'."""
        results, templates = tmp_path / "results", tmp_path / "report"
        results.mkdir()
        templates.mkdir()
        (templates / "soak.md").write_text("# Chaos soak\n\nWhat it does.\n")
        text = render(results, templates)
        assert "## `soak.py`: Chaos soak" in text
        assert "No current figures" in text


class TestFigures:
    def test_spreads_and_lists_give_median_and_range(self) -> None:
        """{median, min, max} dicts and lists of repetitions become one row each; raw material is skipped."""
        data = {
            "styles": {"positional": {"ratio": {"median": 1.0, "min": 0.9, "max": 1.1}, "runs": [1, 2]}},
            "happy": {"paired_ratios": [0.9, 1.2, 1.0], "events": [{"t": 1}]},
        }
        assert list(figures(data)) == [
            Row("styles.positional.ratio", 1.0, (0.9, 1.1)),
            Row("happy.paired_ratios", 1.0, (0.9, 1.2)),
        ]

    def test_pattern_star_is_one_segment(self) -> None:
        """`*` stands for one dotted segment, so a counter nested deeper is not taken for a headline figure."""
        assert matches("scenarios.stalled.mute.lost", "scenarios.*.*.lost")
        assert not matches("scenarios.stalled.mute.counters.lost", "scenarios.*.*.lost")

    def test_template_patterns_choose_the_figures(self, tmp_path: Path) -> None:
        """A template's '<!-- figures: ... -->' line keeps only the matching figures and is not shown."""
        results, templates = tmp_path / "results", tmp_path / "report"
        results.mkdir()
        templates.mkdir()
        _write(results / "x_bench.json", {"meta": {"command": "python benchmarks/x_bench.py"}, "a": 1, "b": 2})
        (templates / "x_bench.md").write_text("# X\n<!-- figures: a -->\nText.\n")
        text = render(results, templates)
        assert "| `a` | 1 | - |" in text
        assert "| `b` |" not in text
        assert "figures:" not in text


class TestPlotPanels:
    def test_second_segment_is_the_bar(self) -> None:
        """Figures differing only in their second segment share a panel, one bar each."""
        from report_plot import panel_key

        assert panel_key("styles.positional.ratio") == ("styles.*.ratio", "positional")
        assert panel_key("styles.keywords.ratio") == ("styles.*.ratio", "keywords")
        assert panel_key("stall.sent") == ("stall.*", "sent")
