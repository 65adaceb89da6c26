"""Counters a user can read as a dict or scrape with Prometheus.

Counters are plain integers bumped on the producer's threads (a lost increment under a race would only skew a
figure, never a message, but every bump happens under the producer lock or on the single driver thread anyway).
The Prometheus collector reads them at scrape time, so nothing is paid per message for Prometheus.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import Any

COUNTER_HELP = {
    "produced": "Messages accepted by produce()",
    "delivered": "Messages with a successful final delivery report",
    "failed": "Messages with a failed final delivery report (including keyed_policy=fail)",
    "rerouted": "Keyed messages sent to a fallback partition because their partition was muted",
    "held": "Keyed messages held because their partition was muted (keyed_policy=hold)",
    "released": "Held messages released to their partition after it was unmuted",
    "muted_fail": "Keyed messages failed at once because their partition was muted (keyed_policy=fail)",
    "rescued": "Queued or timed-out messages re-sent to a writable partition",
    "requeued": "Queued messages purged and re-sent to the same partition during a rescue",
    "probes": "Probe messages sent to half-open partitions",
    "buffer_errors": "BufferError (local queue full) raised to the application",
    "mutes": "Partition mute decisions",
    "unmutes": "Partition unmute decisions",
}


@dataclass
class ProducerCounters:
    produced: int = 0
    delivered: int = 0
    failed: int = 0
    rerouted: int = 0
    held: int = 0
    released: int = 0
    muted_fail: int = 0
    rescued: int = 0
    requeued: int = 0
    probes: int = 0
    buffer_errors: int = 0
    mutes: int = 0
    unmutes: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


_registered_lock = threading.Lock()
_servers: dict[int, Any] = {}


class MuteproCollector:
    """A prometheus_client collector over one producer's counters and mute state."""

    def __init__(self, name: str, read: Callable[[], dict[str, Any]], namespace: str = "mutepro") -> None:
        self._name = name
        self._read = read
        self._ns = namespace

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        data = self._read()
        for key, value in data["counters"].items():
            fam = CounterMetricFamily(f"{self._ns}_{key}", COUNTER_HELP.get(key, key), labels=["producer"])
            fam.add_metric([self._name], value)
            yield fam
        muted = GaugeMetricFamily(
            f"{self._ns}_partition_muted", "1 if the partition is muted (open, half-open or forced)",
            labels=["producer", "topic", "partition", "state"],
        )
        outstanding = GaugeMetricFamily(
            f"{self._ns}_partition_outstanding", "Messages handed to librdkafka without a delivery report",
            labels=["producer", "topic", "partition"],
        )
        for topic, parts in data["partitions"].items():
            for partition, info in parts.items():
                muted.add_metric(
                    [self._name, topic, str(partition), info["state"]], 0.0 if info["state"] == "closed" else 1.0
                )
                outstanding.add_metric([self._name, topic, str(partition)], float(info["outstanding"]))
        yield muted
        yield outstanding
        held = GaugeMetricFamily(f"{self._ns}_held", "Messages held for muted partitions", labels=["producer"])
        held.add_metric([self._name], float(data["held"]))
        yield held


def register_prometheus(collector: MuteproCollector, port: int | None) -> None:
    """Register the collector in the default registry and serve /metrics on ``port`` (once per process)."""
    from prometheus_client import REGISTRY, start_http_server

    REGISTRY.register(collector)
    if port is not None:
        with _registered_lock:
            if port not in _servers:
                _servers[port] = start_http_server(port, addr="127.0.0.1")


def unregister_prometheus(collector: MuteproCollector) -> None:
    from prometheus_client import REGISTRY

    try:
        REGISTRY.unregister(collector)
    except KeyError:
        pass
