"""librdkafka's statistics JSON (``statistics.interval.ms`` + ``stats_cb``) as frozen dataclasses.

Only the fields mutepro reads are kept (see librdkafka's STATISTICS.md). Units are converted once here:
librdkafka's window stats (``rtt``, ``int_latency``) are microseconds and become milliseconds; ``ts`` is
librdkafka's monotonic clock in microseconds and becomes seconds; ``stateage`` (µs) becomes seconds.
Bootstrap and logical brokers (``nodeid`` -1) and the internal unassigned partition (-1, "UA") are skipped:
neither leads anything a producer could mute.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from mutepro.errors import MuteproError


class StatsParseError(MuteproError):
    """A librdkafka statistics document could not be parsed (not JSON, or not a statistics object)."""


@dataclass(frozen=True)
class BrokerStats:
    """One broker as librdkafka sees it. Latencies in ms; ``rtt_samples`` = 0 means no responses in the
    window."""

    node_id: int
    name: str
    state: str  # INIT, DOWN, CONNECT, AUTH, APIVERSION_QUERY, AUTH_HANDSHAKE, UP, UPDATE, ...
    rtt_p99_ms: float
    rtt_avg_ms: float
    int_latency_p99_ms: float
    outbuf_cnt: int
    waitresp_cnt: int
    waitresp_msg_cnt: int
    req_timeouts: int
    connects: int
    disconnects: int
    rtt_samples: int = 0
    state_age_s: float = 0.0


@dataclass(frozen=True)
class PartitionStats:
    """One partition of one topic: its leader and what librdkafka holds for it."""

    topic: str
    partition: int
    leader: int  # -1 while unknown
    msgq_cnt: int  # first-level queue
    xmit_msgq_cnt: int  # transmit queue
    msgs_inflight: int  # sent, awaiting response
    msgq_bytes: int = 0
    xmit_msgq_bytes: int = 0


@dataclass(frozen=True)
class StatsSnapshot:
    """One statistics emission: producer-wide buffer use, brokers by id and partitions by (topic,
    partition)."""

    ts_s: float  # librdkafka's monotonic clock, seconds
    msg_cnt: int
    msg_max: int
    msg_size: int
    msg_size_max: int
    brokers: Mapping[int, BrokerStats]
    partitions: Mapping[tuple[str, int], PartitionStats]

    def partitions_led_by(self, node_id: int) -> tuple[tuple[str, int], ...]:
        """The (topic, partition) pairs whose current leader is ``node_id``, sorted."""
        return tuple(sorted(tp for tp, p in self.partitions.items() if p.leader == node_id))

    def leaders(self) -> dict[tuple[str, int], int]:
        """(topic, partition) -> leader id, for the partitions whose leader is known."""
        return {tp: p.leader for tp, p in self.partitions.items() if p.leader >= 0}


def _int(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key, 0)
    return int(value) if isinstance(value, int | float) else 0


def _window_ms(obj: Mapping[str, Any], window: str, field: str) -> float:
    w = obj.get(window)
    if not isinstance(w, Mapping):
        return 0.0
    return _int(w, field) / 1000.0


def _broker(b: Mapping[str, Any]) -> BrokerStats:
    raw_rtt = b.get("rtt")
    rtt: Mapping[str, Any] = raw_rtt if isinstance(raw_rtt, Mapping) else {}
    return BrokerStats(
        node_id=int(b["nodeid"]),
        name=str(b.get("name", "")),
        state=str(b.get("state", "")),
        rtt_p99_ms=_window_ms(b, "rtt", "p99"),
        rtt_avg_ms=_window_ms(b, "rtt", "avg"),
        int_latency_p99_ms=_window_ms(b, "int_latency", "p99"),
        outbuf_cnt=_int(b, "outbuf_cnt"),
        waitresp_cnt=_int(b, "waitresp_cnt"),
        waitresp_msg_cnt=_int(b, "waitresp_msg_cnt"),
        req_timeouts=_int(b, "req_timeouts"),
        connects=_int(b, "connects"),
        disconnects=_int(b, "disconnects"),
        rtt_samples=_int(rtt, "cnt"),
        state_age_s=_int(b, "stateage") / 1e6,
    )


def parse_stats(json_str: str | bytes) -> StatsSnapshot:
    """Parse one ``stats_cb`` document. Missing counters read as 0 (older librdkafka versions lack some)."""
    try:
        doc = json.loads(json_str)
    except (ValueError, TypeError) as err:
        raise StatsParseError(f"librdkafka statistics are not valid JSON: {err}") from err
    if not isinstance(doc, Mapping):
        raise StatsParseError(f"librdkafka statistics must be a JSON object, got {type(doc).__name__}")
    try:
        brokers: dict[int, BrokerStats] = {}
        for b in (doc.get("brokers") or {}).values():
            if int(b.get("nodeid", -1)) < 0:
                continue  # bootstrap / logical / internal broker handles
            broker = _broker(b)
            brokers[broker.node_id] = broker
        partitions: dict[tuple[str, int], PartitionStats] = {}
        for topic_name, t in (doc.get("topics") or {}).items():
            topic = str(t.get("topic", topic_name))
            for key, p in (t.get("partitions") or {}).items():
                pid = int(p.get("partition", key))
                if pid < 0:
                    continue  # the UA (unassigned) internal partition
                partitions[(topic, pid)] = PartitionStats(
                    topic=topic,
                    partition=pid,
                    leader=int(p.get("leader", -1)),
                    msgq_cnt=_int(p, "msgq_cnt"),
                    xmit_msgq_cnt=_int(p, "xmit_msgq_cnt"),
                    msgs_inflight=_int(p, "msgs_inflight"),
                    msgq_bytes=_int(p, "msgq_bytes"),
                    xmit_msgq_bytes=_int(p, "xmit_msgq_bytes"),
                )
        return StatsSnapshot(
            ts_s=_int(doc, "ts") / 1e6,
            msg_cnt=_int(doc, "msg_cnt"),
            msg_max=_int(doc, "msg_max"),
            msg_size=_int(doc, "msg_size"),
            msg_size_max=_int(doc, "msg_size_max"),
            brokers=MappingProxyType(brokers),
            partitions=MappingProxyType(partitions),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        raise StatsParseError(f"librdkafka statistics have an unexpected shape: {err!r}") from err
