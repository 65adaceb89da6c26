"""Producer metrics: the counters dict and the Prometheus collector (on fresh registries, never the global one)."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families

from mutepro.producer.metrics import (
    COUNTER_HELP,
    MuteproCollector,
    ProducerCounters,
    register_prometheus,
    unregister_prometheus,
)


def reading(held: int = 2, **counters: int) -> dict[str, Any]:
    """What MuteProducer.metrics() returns, for topic t with 3 partitions in different states."""
    return {
        "counters": ProducerCounters(**counters).as_dict(),
        "partitions": {
            "t": {
                0: {"state": "closed", "outstanding": 4, "held": 0},
                1: {"state": "open", "outstanding": 9, "held": 2},
                2: {"state": "half_open", "outstanding": 0, "held": 0},
            },
            "u": {0: {"state": "forced_open", "outstanding": 1, "held": 0}},
        },
        "muted": {"t": [1, 2], "u": [0]},
        "muted_brokers": {},
        "held": held,
        "outstanding": 14,
    }


def samples(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the text exposition as (name, sorted labels) -> value."""
    out = {}
    for fam in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


class TestProducerCounters:
    def test_defaults_zero(self) -> None:
        """Every counter starts at 0 and as_dict lists them all, in declaration order."""
        d = ProducerCounters().as_dict()
        assert set(d.values()) == {0}
        assert list(d) == list(COUNTER_HELP)

    def test_as_dict_reflects_bumps(self) -> None:
        """as_dict returns the current values, as a copy."""
        c = ProducerCounters()
        c.produced += 3
        c.mutes += 1
        d = c.as_dict()
        assert (d["produced"], d["mutes"], d["delivered"]) == (3, 1, 0)
        d["produced"] = 99
        assert c.produced == 3

    def test_every_counter_has_help(self) -> None:
        """Each counter has a HELP text (the collector falls back to the bare name otherwise)."""
        assert set(ProducerCounters().as_dict()) == set(COUNTER_HELP)


class TestCollector:
    @pytest.fixture
    def registry(self) -> CollectorRegistry:
        registry = CollectorRegistry()
        registry.register(MuteproCollector("p1", lambda: reading(held=2, produced=10, mutes=2)))
        return registry

    def test_counter_families(self, registry: CollectorRegistry) -> None:
        """Each counter is a <namespace>_<name>_total sample labelled with the producer name."""
        got = samples(registry)
        assert got[("mutepro_produced_total", (("producer", "p1"),))] == 10.0
        assert got[("mutepro_mutes_total", (("producer", "p1"),))] == 2.0
        assert got[("mutepro_delivered_total", (("producer", "p1"),))] == 0.0

    def test_partition_muted_gauge(self, registry: CollectorRegistry) -> None:
        """partition_muted is 0 only for closed partitions, with topic/partition/state labels."""
        got = samples(registry)

        def muted(topic: str, p: str, state: str) -> float:
            labels = (("partition", p), ("producer", "p1"), ("state", state), ("topic", topic))
            return got[("mutepro_partition_muted", labels)]

        assert muted("t", "0", "closed") == 0.0
        assert muted("t", "1", "open") == 1.0
        assert muted("t", "2", "half_open") == 1.0
        assert muted("u", "0", "forced_open") == 1.0

    def test_outstanding_and_held_gauges(self, registry: CollectorRegistry) -> None:
        """partition_outstanding per partition and the producer's current held messages are exported."""
        got = samples(registry)
        assert got[("mutepro_partition_outstanding", (("partition", "1"), ("producer", "p1"), ("topic", "t")))] == 9.0
        assert got[("mutepro_held_messages", (("producer", "p1"),))] == 2.0

    def test_family_types(self, registry: CollectorRegistry) -> None:
        """Counters are counters, the per-partition figures and held messages gauges."""
        types = {f.name: f.type for f in text_string_to_metric_families(generate_latest(registry).decode())}
        assert types["mutepro_produced"] == "counter"
        assert types["mutepro_held"] == "counter"
        assert types["mutepro_partition_muted"] == "gauge"
        assert types["mutepro_partition_outstanding"] == "gauge"
        assert types["mutepro_held_messages"] == "gauge"

    def test_openmetrics_parses(self, registry: CollectorRegistry) -> None:
        """The OpenMetrics exposition parses: no family name is used twice (the held counter vs gauge)."""
        names = [f.name for f in parse_openmetrics(generate_openmetrics(registry).decode())]
        assert len(names) == len(set(names))
        assert "mutepro_held" in names and "mutepro_held_messages" in names

    def test_rack_bytes_when_rack_aware(self) -> None:
        """Rack-aware partitioning's figure: value bytes to local and remote leaders, a counter per side."""
        registry = CollectorRegistry()
        rack = {"client_rack": "rack-a", "local_bytes": 900, "remote_bytes": 100, "local_share": 0.9}
        registry.register(MuteproCollector("p1", lambda: {**reading(), "rack": rack}))
        got = samples(registry)
        key = (("client_rack", "rack-a"), ("leader", "local"), ("producer", "p1"))
        assert got[("mutepro_rack_bytes_total", key)] == 900.0
        assert got[("mutepro_rack_bytes_total", (*key[:1], ("leader", "remote"), key[2]))] == 100.0

    def test_no_rack_family_when_off(self, registry: CollectorRegistry) -> None:
        assert not any(name.startswith("mutepro_rack") for name, _ in samples(registry))

    def test_namespace(self) -> None:
        """The namespace prefixes every family."""
        registry = CollectorRegistry()
        registry.register(MuteproCollector("p1", lambda: reading(), namespace="jobx"))
        names = {name for name, _ in samples(registry)}
        assert names and all(n.startswith("jobx_") for n in names)

    def test_reads_at_scrape_time(self) -> None:
        """Values are read when scraped, not when the collector is built."""
        counters = ProducerCounters()
        registry = CollectorRegistry()
        registry.register(
            MuteproCollector("p1", lambda: {"counters": counters.as_dict(), "partitions": {}, "held": 0})
        )
        counters.delivered = 5
        assert samples(registry)[("mutepro_delivered_total", (("producer", "p1"),))] == 5.0

    def test_no_partitions(self) -> None:
        """A producer that knows no topic yet still exports counters and empty gauge families."""
        registry = CollectorRegistry()
        registry.register(MuteproCollector("p1", lambda: {"counters": {}, "partitions": {}, "held": 0}))
        fams = {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}
        assert fams["mutepro_partition_muted"].samples == []
        assert fams["mutepro_held_messages"].samples[0].value == 0.0


class TestRegistration:
    def test_two_producers_in_one_registry(self) -> None:
        """Two producers' collectors register in one registry; each family is exported once with both producers."""
        registry = CollectorRegistry(auto_describe=True)  # like prometheus_client's global REGISTRY
        c1 = MuteproCollector("p1", lambda: reading(produced=1))
        c2 = MuteproCollector("p2", lambda: reading(produced=2))
        register_prometheus(c1, None, registry=registry)
        register_prometheus(c2, None, registry=registry)
        text = generate_latest(registry).decode()
        fams = list(text_string_to_metric_families(text))
        names = [f.name for f in fams]
        assert len(names) == len(set(names))
        produced = next(f for f in fams if f.name == "mutepro_produced")
        assert {s.labels["producer"]: s.value for s in produced.samples} == {"p1": 1.0, "p2": 2.0}

    def test_unregister(self) -> None:
        """An unregistered producer disappears from the exposition; unregistering twice is harmless."""
        registry = CollectorRegistry(auto_describe=True)
        c1 = MuteproCollector("p1", lambda: reading())
        c2 = MuteproCollector("p2", lambda: reading())
        register_prometheus(c1, None, registry=registry)
        register_prometheus(c2, None, registry=registry)
        unregister_prometheus(c1, registry=registry)
        unregister_prometheus(c1, registry=registry)
        producers = {dict(labels)["producer"] for _, labels in samples(registry)}
        assert producers == {"p2"}

    def test_register_twice_exports_once(self) -> None:
        """Registering the same collector twice does not duplicate its samples."""
        registry = CollectorRegistry()
        c1 = MuteproCollector("p1", lambda: reading(produced=1))
        register_prometheus(c1, None, registry=registry)
        register_prometheus(c1, None, registry=registry)
        fams = {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}
        assert len(fams["mutepro_produced"].samples) == 1

    def test_unregister_unknown_registry(self) -> None:
        """Unregistering from a registry nothing was registered in does nothing."""
        registry = CollectorRegistry()
        unregister_prometheus(MuteproCollector("p1", lambda: reading()), registry=registry)
        assert generate_latest(registry) == b""
