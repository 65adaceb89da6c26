"""A trace recorded from a producer replays to the producer's own decisions (same model, same evidence)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from confluent_kafka import KafkaError

from mutepro import MuteProducer
from mutepro.testing.fakes import FakeClock, FakeInnerProducer
from mutepro.trace import AGE_EDGES_S, TraceError, append_records, replay, summarize
from mutepro.trace.format import AgeCounts, open_trace
from tests.unit._producer_fakes import CONF, topic_policy

TOPIC = "orders"


def _record(tmp_path: Path) -> tuple[Path, MuteProducer, FakeClock]:
    clock = FakeClock()
    fake = FakeInnerProducer({TOPIC: 4}, leader={0: 1, 1: 2, 2: 3, 3: 1})
    path = tmp_path / "run.jsonl.gz"
    producer = MuteProducer(
        CONF, policy=topic_policy(), clock=clock, _inner_factory=fake.factory,
        _threads=False, trace=path,
    )
    producer.wait_for_topic(TOPIC, 0)
    producer._load_metadata(clock())
    for _ in range(3):  # healthy rounds
        for p in range(4):
            producer.produce(TOPIC, b"v", partition=p)
        fake.deliver(TOPIC)
        producer._tick(clock.advance(0.05))
    for _ in range(6):  # partition 2 fails every delivery: the failure-rate window (4 calls, 50 %) trips
        producer.produce(TOPIC, b"v", partition=2)
    fake.fail(TOPIC, 2, KafkaError._MSG_TIMED_OUT)
    producer._tick(clock.advance(0.05))
    for _ in range(40):  # the breaker's retry (1 s) passes: half-open
        producer._tick(clock.advance(0.05))
    producer.close()
    return path, producer, clock


def test_replay_decides_what_the_recording_producer_decided(tmp_path: Path) -> None:
    path, _, _ = _record(tmp_path)
    result = replay(path)
    recorded = [(d.event, d.partition, d.reason) for d in result.recorded]
    decided = [(d.event, d.partition, d.reason) for d in result.decisions]
    assert ("mute", 2, "failure_rate") in recorded
    assert decided[: len(recorded)] == recorded
    assert result.rounds == 44
    assert result.replicas[TOPIC] == {0: (1,), 1: (2,), 2: (3,), 3: (1,)}


def test_trace_records_are_the_documented_kinds(tmp_path: Path) -> None:
    path, _, _ = _record(tmp_path)
    kinds = [rec["kind"] for rec in open_trace(path)]
    assert kinds[0] == "start" and "meta" in kinds and "round" in kinds and "decision" in kinds
    rounds = [rec for rec in open_trace(path) if rec["kind"] == "round"]
    # the failing round: partition 2's six reports, all failed (calls, failures, slow)
    assert [TOPIC, 2, 6, 6, 0] in [r for rec in rounds for r in rec["reports"]]


def test_a_replay_under_another_policy_decides_differently(tmp_path: Path) -> None:
    path, _, _ = _record(tmp_path)
    off = topic_policy(failure_rate={"enabled": False})
    assert replay(path, off).mutes() == []


def test_faults_appended_after_close_are_read_and_summarised(tmp_path: Path) -> None:
    path, _, _ = _record(tmp_path)
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


class TestAgeCounts:
    def test_exact_at_an_edge_and_never_more_than_were_there(self) -> None:
        counts = AgeCounts(3.0, (50, 40, 30, 20, 10), 60)  # older than 0.1, 0.25, 0.5, 1, 2 s
        assert AGE_EDGES_S[3] == 1.0
        assert counts.count_older_than(1.0) == 20
        assert counts.count_older_than(0.7) == 20  # between 0.5 and 1: the count at 1 s
        assert counts.count_older_than(4.0) == 0  # the oldest is 3 s
        assert counts.count_older_than(2.5) == 1  # past the last recorded edge: the oldest itself

    def test_nothing_outstanding(self) -> None:
        assert AgeCounts(None, (), 0).count_older_than(0.0) == 0
