"""``mutepro trace`` (mutepro.trace.cli) on a run recorded on the fake producer: replay prints the model's
decisions beside the recording producer's, as text or JSON, under the recorded policy or another one; record
refuses a malformed -X before producing anything (recording against a cluster: tests/integration/test_trace.py)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from mutepro.trace.cli import trace
from tests.unit.trace._recorded import TOPIC, record_run


class TestReplay:
    def test_text_lists_the_models_mutes_and_the_summary(self, tmp_path: Path) -> None:
        path, _, _ = record_run(tmp_path)
        result = CliRunner().invoke(trace, ["replay", str(path)])
        assert result.exit_code == 0, result.output
        # partition 2 failed every delivery: muted at 0.2 s, and (its probes never answered) muted again at each
        # retry; the recording producer was closed after its first mute
        assert f"0.20s  mute    {TOPIC}[2] broker 3  failure_rate" in result.output
        assert "recorded producer: 1 mutes; model now: 3" in result.output
        assert "mutes: 3, outside every fault: 3" in result.output  # no fault was recorded

    def test_json_holds_both_decision_lists_and_the_summary(self, tmp_path: Path) -> None:
        path, _, _ = record_run(tmp_path)
        result = CliRunner().invoke(trace, ["replay", str(path), "--json"])
        assert result.exit_code == 0, result.output
        doc = json.loads(result.output)
        assert [(d["event"], d["partition"]) for d in doc["decisions"] if d["event"] != "probe"] == [
            ("mute", 2), ("remute", 2), ("remute", 2)
        ]
        assert [d["event"] for d in doc["recorded"]][:1] == ["mute"]
        assert doc["summary"]["mutes"] == 3 and len(doc["summary"]["false_mutes"]) == 3

    def test_another_policy_changes_the_models_decisions(self, tmp_path: Path) -> None:
        """Failure-rate rule off: the model now mutes nothing on the same evidence."""
        path, _, _ = record_run(tmp_path)
        policy = tmp_path / "off.yaml"
        policy.write_text("defaults:\n  failure_rate: {enabled: false}\n  slow_call: {enabled: false}\n"
                          "  congestion: {enabled: false}\n  broker: {enabled: false}\n")
        result = CliRunner().invoke(trace, ["replay", str(path), "--policy", str(policy), "--json"])
        assert result.exit_code == 0, result.output
        doc = json.loads(result.output)
        assert doc["summary"]["mutes"] == 0 and len(doc["recorded"]) >= 1


class TestRecord:
    def test_a_malformed_librdkafka_setting_is_refused_first(self, tmp_path: Path) -> None:
        out = tmp_path / "never.jsonl.gz"
        result = CliRunner().invoke(trace, ["record", "-b", "127.0.0.1:1", "-t", "t", "-o", str(out), "-X", "linger"])
        assert result.exit_code == 2 and "expected KEY=VALUE, got 'linger'" in result.output
        assert not out.exists()
