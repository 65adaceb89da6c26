"""Traces on the real cluster: `mutepro trace record` writes what the model saw, `mutepro trace replay` reads it back,
and a stall recorded with its fault replays to a mute of only the stalled broker's partitions (RF 1, acks=1)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mutepro.cli import cli
from mutepro.cluster.launcher import LocalCluster
from mutepro.policy.schema import TopicPolicy
from mutepro.producer import MuteProducer
from mutepro.trace import append_records, open_trace, replay, summarize

pytestmark = [pytest.mark.integration]


def test_record_and_replay_commands(kafka_cluster: LocalCluster, topic_factory: Any, tmp_path: Path) -> None:
    """A bounded healthy recording: rounds with loads, metadata with replicas, and a replay that mutes nothing."""
    topic = topic_factory(partitions=6, replication_factor=3)
    out = tmp_path / "healthy.jsonl.gz"
    runner = CliRunner()
    rec = runner.invoke(cli, [
        "trace", "record", "-b", kafka_cluster.bootstrap_servers, "-t", topic, "-o", str(out),
        "--seconds", "3", "--rate", "500",
    ])
    assert rec.exit_code == 0, rec.output
    kinds = {r["kind"] for r in open_trace(out)}
    assert {"start", "meta", "round"} <= kinds
    meta = next(r for r in open_trace(out) if r["kind"] == "meta")
    assert all(len(row[2]) == 3 for row in meta["partitions"])  # RF 3: three replicas per partition
    shown = runner.invoke(cli, ["trace", "replay", str(out), "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert data["decisions"] == [] and data["summary"]["mutes"] == 0


def test_a_recorded_stall_replays_to_the_stalled_brokers_partitions(
    kafka_cluster: LocalCluster, topic_factory: Any, tmp_path: Path
) -> None:
    """Broker 2 stopped for 4 s under 1,000 msg/s: the replay mutes its partitions (1 and 4) and no other."""
    topic = topic_factory(replica_assignment=[[1], [2], [3], [1], [2], [3]])
    path = tmp_path / "stall.jsonl.gz"
    producer = MuteProducer({"bootstrap.servers": kafka_cluster.bootstrap_servers, "linger.ms": 5}, trace=path)
    assert producer.wait_for_topic(topic, 30.0)
    faults = []
    try:
        deadline = time.monotonic() + 12.0
        sent = 0
        stalled_at = None
        start = time.monotonic()
        while time.monotonic() < deadline:
            now = time.monotonic()
            if stalled_at is None and now - start >= 2.0:
                kafka_cluster.stall(2)
                stalled_at = time.monotonic()
            elif stalled_at is not None and not faults and now - stalled_at >= 4.0:
                kafka_cluster.resume(2)
                end = time.monotonic()
                faults.append({"kind": "fault", "t": stalled_at, "broker": 2, "fault": "stall", "end": end})
            if sent < 1000 * (now - start):
                producer.produce(topic, b"x" * 100)
                sent += 1
            else:
                producer.poll(0.001)
        assert producer.flush(30.0) == 0
    finally:
        if not faults:
            kafka_cluster.resume(2)
        producer.close()
    append_records(path, faults)
    result = replay(path, TopicPolicy())
    summary = summarize(result)
    muted = {d.partition for d in result.mutes()}
    assert muted == {1, 4}
    (fs,) = summary.faults
    assert fs.wrong == () and summary.false_mutes == ()
