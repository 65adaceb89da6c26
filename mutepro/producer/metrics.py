"""Counters a user can read as a dict or scrape with Prometheus.

Counters are plain integers bumped on the producer's threads (a lost increment under a race would only skew a
figure, never a message, but every bump happens under the producer lock or on the single driver thread anyway).
The Prometheus collector reads them at scrape time, so nothing is paid per message for Prometheus.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from mutepro.producer.accel import fastpath

if TYPE_CHECKING:  # prometheus_client is imported only when metrics are exported
    from wsgiref.simple_server import WSGIServer

    from prometheus_client.metrics_core import Metric
    from prometheus_client.registry import CollectorRegistry


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
    "avoids": "Times unkeyed messages began avoiding a broker whose partitions stood out (not muted yet)",
    "mutes": "Partition mute decisions",
    "unmutes": "Partition unmute decisions",
}


class ProducerCounters:
    """The producer's counters (:data:`COUNTER_HELP` lists them), readable as attributes or :meth:`as_dict`.

    ``produced``, ``delivered``, ``buffer_errors`` and ``rerouted`` are bumped once per message, by the C
    extension: they live in ``totals`` (its ``Counts``, the tracker's) and are read through from here.
    """

    _TOTALS = ("produced", "delivered", "buffer_errors", "rerouted")

    def __init__(self, totals: fastpath.Counts | None = None, **values: int) -> None:
        if totals is None:
            totals = fastpath.Counts()
        object.__setattr__(self, "_totals", totals)
        for name in COUNTER_HELP:
            if name not in self._TOTALS:
                object.__setattr__(self, name, 0)
        for name, value in values.items():
            if name not in COUNTER_HELP:
                raise TypeError(f"ProducerCounters: unknown counter {name!r}; known: {', '.join(COUNTER_HELP)}")
            setattr(self, name, value)

    def __getattr__(self, name: str) -> int:  # only called for the totals (the rest are instance attributes)
        if name in ProducerCounters._TOTALS:
            return int(getattr(self._totals, name))
        raise AttributeError(name)

    def __setattr__(self, name: str, value: int) -> None:
        if name in self._TOTALS:
            setattr(self._totals, name, value)
        else:
            object.__setattr__(self, name, value)

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in COUNTER_HELP}

    def __repr__(self) -> str:
        return "ProducerCounters(" + ", ".join(f"{k}={v}" for k, v in self.as_dict().items()) + ")"


_registered_lock = threading.Lock()
_servers: dict[int, tuple[WSGIServer, threading.Thread]] = {}


class MuteproCollector:
    """A prometheus_client collector over one producer's counters and mute state.

    Register it with :func:`register_prometheus`, not directly: every producer's collector yields the same
    family names (``mutepro_produced``, ... with a ``producer`` label), and a registry rejects a second
    collector with names it already has.
    """

    def __init__(self, name: str, read: Callable[[], dict[str, Any]], namespace: str = "mutepro") -> None:
        self._name = name
        self._read = read
        self._ns = namespace

    def collect(self) -> Iterator[Metric]:
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
        # Not "<ns>_held": that is the family of the "held" counter (OpenMetrics names a counter family without
        # its _total suffix), and one name with two types is rejected by OpenMetrics parsers.
        held = GaugeMetricFamily(
            f"{self._ns}_held_messages", "Messages held for muted partitions right now", labels=["producer"]
        )
        held.add_metric([self._name], float(data["held"]))
        yield held
        rack = data.get("rack")
        if rack is not None:  # rack-aware partitioning on: value bytes to leaders in the producer's rack and not
            produced = CounterMetricFamily(
                f"{self._ns}_rack_bytes", "Value bytes produced, by whether the partition's leader was in the "
                "producer's rack (client.rack)", labels=["producer", "client_rack", "leader"],
            )
            produced.add_metric([self._name, rack["client_rack"], "local"], float(rack["local_bytes"]))
            produced.add_metric([self._name, rack["client_rack"], "remote"], float(rack["remote_bytes"]))
            yield produced


class _CollectorHub:
    """The one collector registered per registry: merges every producer's families by name.

    Registering each producer's collector directly fails for the second producer of a process ("Duplicated
    timeseries": same family names), and would otherwise print each family's HELP/TYPE once per producer.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._members: list[MuteproCollector] = []

    def add(self, collector: MuteproCollector) -> None:
        with self._lock:
            if not any(m is collector for m in self._members):
                self._members.append(collector)

    def remove(self, collector: MuteproCollector) -> None:
        with self._lock:
            self._members = [m for m in self._members if m is not collector]

    def describe(self) -> list[Metric]:
        # Names change as producers come and go; describing none keeps the registry from checking them.
        return []

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            members = list(self._members)
        merged: dict[str, Metric] = {}
        for member in members:
            for fam in member.collect():
                have = merged.get(fam.name)
                if have is None:
                    merged[fam.name] = fam
                else:
                    have.samples.extend(fam.samples)
        yield from merged.values()


_hubs: dict[int, tuple[CollectorRegistry, _CollectorHub]] = {}


def _hub_for(registry: CollectorRegistry) -> _CollectorHub:
    entry = _hubs.get(id(registry))
    if entry is None:
        hub = _CollectorHub()
        registry.register(hub)
        entry = _hubs[id(registry)] = (registry, hub)
    return entry[1]


def register_prometheus(
    collector: MuteproCollector, port: int | None, registry: CollectorRegistry | None = None
) -> None:
    """Add the collector to ``registry`` (default: prometheus_client's global one) and serve /metrics on
    ``port`` (one server per port per process)."""
    from prometheus_client import REGISTRY, start_http_server

    with _registered_lock:
        _hub_for(REGISTRY if registry is None else registry).add(collector)
        if port is not None and port not in _servers:
            _servers[port] = start_http_server(port, addr="127.0.0.1")


def unregister_prometheus(collector: MuteproCollector, registry: CollectorRegistry | None = None) -> None:
    """Stop exporting the collector (nothing happens if it was never registered)."""
    from prometheus_client import REGISTRY

    with _registered_lock:
        entry = _hubs.get(id(REGISTRY if registry is None else registry))
        if entry is not None:
            entry[1].remove(collector)
