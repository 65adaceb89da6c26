"""A trace recorded from a producer replays to the producer's own decisions: same model, same evidence
(mutepro.trace.replay)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from mutepro.trace import TraceError, append_records, replay, summarize
from mutepro.trace.format import open_trace
from tests.unit._producer_fakes import topic_policy
from tests.unit.trace._recorded import TOPIC, record_run


def test_replay_decides_what_the_recording_producer_decided(tmp_path: Path) -> None:
    path, _, _ = record_run(tmp_path)
    result = replay(path)
    recorded = [(d.event, d.partition, d.reason) for d in result.recorded]
    decided = [(d.event, d.partition, d.reason) for d in result.decisions]
    assert ("mute", 2, "failure_rate") in recorded
    assert decided[: len(recorded)] == recorded
    assert result.rounds == 44
    assert result.replicas[TOPIC] == {0: (1,), 1: (2,), 2: (3,), 3: (1,)}


def test_a_replay_under_another_policy_decides_differently(tmp_path: Path) -> None:
    path, _, _ = record_run(tmp_path)
    off = topic_policy(failure_rate={"enabled": False})
    assert replay(path, off).mutes() == []


def test_faults_appended_after_close_are_read_and_summarised(tmp_path: Path) -> None:
    path, _, _ = record_run(tmp_path)
    start = next(open_trace(path))["t"]
    append_records(path, [{"kind": "fault", "t": start + 0.1, "broker": 3, "fault": "stall", "end": start + 0.5}])
    result = replay(path)
    assert [(f.broker, f.fault) for f in result.faults] == [(3, "stall")]
    summary = summarize(result)
    # partition 2 (led by broker 3) was muted during the stall: no wrong partitions, no false mutes
    assert summary.faults[0].first_mute_s is not None and summary.faults[0].wrong == ()
    assert summary.false_mutes == ()


def test_not_a_trace_is_a_named_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl.gz"
    with gzip.open(bad, "wt") as f:
        f.write(json.dumps({"kind": "round"}) + "\n")
    with pytest.raises(TraceError, match="start record"):
        replay(bad)
    with pytest.raises(TraceError, match="not a file"):
        replay(tmp_path / "missing.jsonl.gz")
