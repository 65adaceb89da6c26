"""Delivery callbacks that produce, poll, flush, ask len() or raise, and several threads producing and polling at
once while partitions are muted by hand: on both MuteProducer paths, on the real cluster. Each case runs in its
own process (tests/integration/reentrancy_job.py) so a crash fails the test instead of ending the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mutepro.cluster.launcher import LocalCluster

JOB = Path(__file__).with_name("reentrancy_job.py")


def run_job(cluster: LocalCluster, topic: str, scenario: str, *extra: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(JOB), cluster.bootstrap_servers, topic, scenario, *extra],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_every_message_once(result: dict[str, Any]) -> None:
    assert result["produced"] == result["distinct_produced"] > 0
    assert result["reports"] == result["produced"], result
    assert result["multi_reported"] == 0 and result["unreported"] == 0, result
    assert result["left"] == 0 and result["missing"] == 0 and result["duplicated"] == 0, result


class TestCallbacksReenter:
    def test_a_callback_that_produces(self, kafka_cluster: LocalCluster, topic_factory: Any) -> None:
        """6,000 reports served by one poll, each callback producing a follow-up: every message (12,000) gets
        exactly one report and is written once, as with the plain client (on the C path this aborted)."""
        result = run_job(kafka_cluster, topic_factory(partitions=6, replication_factor=1), "produce")
        assert_every_message_once(result)
        assert result["produced"] == 12_000

    @pytest.mark.parametrize("action", ["poll", "flush"])
    def test_a_callback_that_polls_or_flushes(
        self, kafka_cluster: LocalCluster, topic_factory: Any, action: str
    ) -> None:
        """poll()/flush() from inside a delivery callback neither aborts (the plain client does) nor deadlocks;
        every message is reported once."""
        result = run_job(kafka_cluster, topic_factory(partitions=6, replication_factor=1), action, "--messages", "2000")
        assert_every_message_once(result)
        assert result["nested"][action] == 2000

    def test_a_callback_that_asks_len_or_raises(
        self, kafka_cluster: LocalCluster, topic_factory: Any
    ) -> None:
        """len() works inside a callback; a raising callback's exception surfaces from poll(), and the other
        messages are still reported once."""
        topic = topic_factory(partitions=6, replication_factor=1)
        assert_every_message_once(run_job(kafka_cluster, topic, "len", "--messages", "2000"))
        topic = topic_factory(partitions=6, replication_factor=1)
        result = run_job(kafka_cluster, topic, "raise", "--messages", "2000")
        assert_every_message_once(result)
        # 40 callbacks raised; each poll surfaces one exception (confluent-kafka keeps the first of a batch), so
        # several in one poll surface as one, as with the plain client
        assert 1 <= result["raised"] <= 40


class TestPlainClientAgrees:
    @pytest.mark.parametrize("scenario", ["produce", "raise"])
    def test_the_plain_client_gives_the_same_outcome(
        self, kafka_cluster: LocalCluster, topic_factory: Any, scenario: str
    ) -> None:
        """The reference: confluent_kafka.Producer in the same job reports every message once as well."""
        result = run_job(
            kafka_cluster, topic_factory(partitions=6, replication_factor=1), scenario, "--messages", "2000", "--plain"
        )
        assert_every_message_once(result)


def test_stress_threads_mutes_and_reentrant_callbacks(
    kafka_cluster: LocalCluster, topic_factory: Any
) -> None:
    """Four producing threads (keyed and unkeyed), two polling threads, partitions muted and unmuted by hand every
    50 ms, callbacks that sometimes produce and sometimes raise: produced == reports, none twice, none lost, none
    written twice."""
    topic = topic_factory(partitions=6, replication_factor=1)
    result = run_job(kafka_cluster, topic, "stress", "--messages", "3000")
    print(f"stress: {result}")
    assert_every_message_once(result)
    assert result["produced"] >= 12_000 and result["failed"] == 0
