"""Parsing librdkafka statistics JSON into StatsSnapshot / BrokerStats / PartitionStats."""

from __future__ import annotations

import json
from typing import Any

import confluent_kafka
import pytest

from mutepro.detect.stats import StatsParseError, parse_stats


def window(p99_us: int, avg_us: int, cnt: int) -> dict[str, int]:
    """A librdkafka window-stats object (microseconds)."""
    return {
        "min": 1,
        "max": p99_us,
        "avg": avg_us,
        "sum": avg_us * cnt,
        "cnt": cnt,
        "p50": avg_us,
        "p99": p99_us,
    }


def broker_doc(node: int, state: str = "UP", rtt_p99_us: int = 3391, **extra: Any) -> dict[str, Any]:
    """A librdkafka broker object with the counters mutepro reads."""
    doc: dict[str, Any] = {
        "name": f"localhost:909{node}/{node}",
        "nodeid": node,
        "nodename": f"localhost:909{node}",
        "source": "learned",
        "state": state,
        "stateage": 9_057_234,
        "outbuf_cnt": 2,
        "waitresp_cnt": 3,
        "waitresp_msg_cnt": 40,
        "req_timeouts": 1,
        "connects": 5,
        "disconnects": 4,
        "int_latency": window(48_639, 23_726, 240_012),
        "rtt": window(rtt_p99_us, 2_349, 34),
        "toppars": {},
    }
    doc.update(extra)
    return doc


def partition_doc(pid: int, leader: int, **extra: Any) -> dict[str, Any]:
    """A librdkafka partition object."""
    doc: dict[str, Any] = {
        "partition": pid,
        "leader": leader,
        "msgq_cnt": 7,
        "msgq_bytes": 700,
        "xmit_msgq_cnt": 3,
        "xmit_msgq_bytes": 300,
        "msgs_inflight": 11,
    }
    doc.update(extra)
    return doc


def stats_doc() -> dict[str, Any]:
    """A producer statistics document shaped like librdkafka's STATISTICS.md example."""
    return {
        "name": "rdkafka#producer-1",
        "type": "producer",
        "ts": 5_016_483_227_792,
        "time": 1_527_060_869,
        "msg_cnt": 22_710,
        "msg_size": 704_010,
        "msg_max": 500_000,
        "msg_size_max": 1_073_741_824,
        "brokers": {
            "localhost:9092/bootstrap": broker_doc(-1, name="localhost:9092/bootstrap"),
            "localhost:9092/2": broker_doc(2),
            "localhost:9093/3": broker_doc(3, state="DOWN", rtt_p99_us=0),
        },
        "topics": {
            "test": {
                "topic": "test",
                "partitions": {
                    "0": partition_doc(0, 3),
                    "1": partition_doc(1, 2),
                    "-1": partition_doc(-1, -1),
                },
            }
        },
    }


class TestParseStats:
    def test_top_level_fields(self) -> None:
        """Buffer use and limits come from the top level; ts (µs) becomes seconds."""
        s = parse_stats(json.dumps(stats_doc()))
        assert (s.msg_cnt, s.msg_max, s.msg_size, s.msg_size_max) == (22_710, 500_000, 704_010, 1_073_741_824)
        assert s.ts_s == pytest.approx(5_016_483.227792)

    def test_skips_bootstrap_brokers(self) -> None:
        """Brokers with nodeid -1 are left out; the others are keyed by node id."""
        assert sorted(parse_stats(json.dumps(stats_doc())).brokers) == [2, 3]

    def test_broker_fields_and_units(self) -> None:
        """Window stats in µs become ms; counters and state are copied."""
        b = parse_stats(json.dumps(stats_doc())).brokers[2]
        assert (b.node_id, b.name, b.state) == (2, "localhost:9092/2", "UP")
        assert (b.rtt_p99_ms, b.rtt_avg_ms, b.int_latency_p99_ms) == (3.391, 2.349, 48.639)
        assert (b.outbuf_cnt, b.waitresp_cnt, b.waitresp_msg_cnt) == (2, 3, 40)
        assert (b.req_timeouts, b.connects, b.disconnects, b.rtt_samples) == (1, 5, 4, 34)
        assert b.state_age_s == pytest.approx(9.057234)

    def test_skips_unassigned_partition(self) -> None:
        """The internal UA partition (-1) is left out."""
        assert sorted(parse_stats(json.dumps(stats_doc())).partitions) == [("test", 0), ("test", 1)]

    def test_partition_fields(self) -> None:
        """Leader and queue gauges are copied per partition."""
        p = parse_stats(json.dumps(stats_doc())).partitions[("test", 0)]
        assert (p.topic, p.partition, p.leader) == ("test", 0, 3)
        assert (p.msgq_cnt, p.xmit_msgq_cnt, p.msgs_inflight, p.msgq_bytes, p.xmit_msgq_bytes) == (
            7,
            3,
            11,
            700,
            300,
        )

    def test_leadership_helpers(self) -> None:
        """partitions_led_by and leaders read the partition leaders."""
        s = parse_stats(json.dumps(stats_doc()))
        assert s.partitions_led_by(3) == (("test", 0),)
        assert s.leaders() == {("test", 0): 3, ("test", 1): 2}

    def test_missing_counters_read_as_zero(self) -> None:
        """Older librdkafka versions lack msgs_inflight: it reads as 0."""
        doc = stats_doc()
        del doc["topics"]["test"]["partitions"]["0"]["msgs_inflight"]
        assert parse_stats(json.dumps(doc)).partitions[("test", 0)].msgs_inflight == 0

    def test_accepts_bytes(self) -> None:
        """stats_cb may hand over bytes; they parse the same."""
        assert parse_stats(json.dumps(stats_doc()).encode()).msg_cnt == 22_710

    def test_snapshot_is_immutable(self) -> None:
        """The broker and partition mappings are read-only."""
        s = parse_stats(json.dumps(stats_doc()))
        with pytest.raises(TypeError):
            s.brokers[9] = s.brokers[2]  # type: ignore[index]

    @pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"brokers": {"x": {"nodeid": "abc"}}}'])
    def test_rejects_garbage(self, text: str) -> None:
        """Invalid JSON or an unexpected shape raises StatsParseError."""
        with pytest.raises(StatsParseError, match="librdkafka statistics"):
            parse_stats(text)

    def test_parses_real_librdkafka_output(self) -> None:
        """A real emission of the installed librdkafka (no broker reachable) parses to no brokers."""
        got: list[str] = []
        producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": "127.0.0.1:1",
                "statistics.interval.ms": 100,
                "stats_cb": got.append,
                "log_level": 0,
                "message.timeout.ms": 60_000,
            }
        )
        producer.produce("mutepro-stats-test", b"v")
        for _ in range(100):  # waits for the callback event, not for time: returns at the first emission
            producer.poll(0.1)
            if got:
                break
        producer.purge()
        snap = parse_stats(got[0])
        assert (snap.brokers, snap.partitions, snap.msg_cnt, snap.msg_max) == ({}, {}, 1, 100_000)
