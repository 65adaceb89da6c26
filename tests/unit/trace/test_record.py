"""What a recorded trace holds (mutepro.trace.record)."""

from __future__ import annotations

from pathlib import Path

from mutepro.trace.format import open_trace
from tests.unit.trace._recorded import TOPIC, record_run


def test_trace_records_are_the_documented_kinds(tmp_path: Path) -> None:
    path, _, _ = record_run(tmp_path)
    kinds = [rec["kind"] for rec in open_trace(path)]
    assert kinds[0] == "start" and "meta" in kinds and "round" in kinds and "decision" in kinds
    rounds = [rec for rec in open_trace(path) if rec["kind"] == "round"]
    # the failing round: partition 2's six reports, all failed (calls, failures, slow)
    assert [TOPIC, 2, 6, 6, 0] in [r for rec in rounds for r in rec["reports"]]
