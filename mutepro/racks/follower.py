"""KIP-392 follower fetching: is the cluster ready, which ``client.rack`` is this process, and does it work.

Follower fetching needs three things; miss one and consumers silently read cross-zone from leaders:

1. every broker has ``broker.rack``;
2. every broker has ``replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector``
   (the default selector always answers "the leader");
3. the consumer sets ``client.rack`` to a value equal to some ``broker.rack``.

:func:`check_follower_fetching` checks 1-2 (and 3 for a given rack); :func:`resolve_client_rack` derives 3
from the environment; :class:`LocalityReport` reads librdkafka's statistics, where each partition shows the
broker it is fetched from (``broker``) next to its ``leader``: ``broker != leader`` on the consumer's own
rack is follower fetching observed, not assumed.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutepro.errors import ClusterError, ConfigError

RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
CLIENT_RACK_ENV = "MUTEPRO_CLIENT_RACK"
ZONE_MAP_ENV = "MUTEPRO_ZONE_MAP"
#: Where the process's zone is read from, first set wins. AWS_AVAILABILITY_ZONE is what ECS/EKS tooling and
#: many launch templates export; MUTEPRO_ZONE is for everything else.
ZONE_ENV_VARS = ("MUTEPRO_ZONE", "AWS_AVAILABILITY_ZONE")


# -- client.rack ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RackResolution:
    """The derived ``client.rack`` and where it came from (for logs: "rack-a (from zone map ...)")."""

    rack: str | None
    source: str

    def __str__(self) -> str:
        return f"{self.rack} ({self.source})" if self.rack else f"no client.rack ({self.source})"


def load_zone_map(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a zone → rack mapping from YAML or JSON: ``{zone: rack}`` or ``{"zones": {zone: rack}}``.

    Zone keys may be zone names (``us-east-1a``) or zone ids (``use1-az1``); list both if processes may
    report either. Broker racks are usually zone ids, because names are shuffled per AWS account.
    """
    import yaml

    file = Path(path)
    try:
        doc = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(f"zone map {file}: cannot read it ({err}); fix {ZONE_MAP_ENV} or zone_map=") from err
    except yaml.YAMLError as err:
        raise ConfigError(f"zone map {file}: not valid YAML/JSON ({err})") from err
    if isinstance(doc, Mapping) and "zones" in doc:
        doc = doc["zones"]
    if not isinstance(doc, Mapping) or not doc:
        raise ConfigError(f"zone map {file}: expected a mapping of zone → rack (optionally under 'zones')")
    result: dict[str, str] = {}
    for zone, rack in doc.items():
        if not isinstance(rack, str | int) or isinstance(rack, bool) or str(rack).strip() == "":
            raise ConfigError(f"zone map {file}: zone {zone!r} must map to a non-empty rack name, not {rack!r}")
        result[str(zone)] = str(rack)
    return result


def resolve_client_rack(
    explicit: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    zone_map: str | os.PathLike[str] | Mapping[str, str] | None = None,
) -> RackResolution:
    """Derive ``client.rack``: explicit > ``$MUTEPRO_CLIENT_RACK`` > zone (mapped through the zone map).

    The zone is read from :data:`ZONE_ENV_VARS`. With a zone map (``zone_map=`` or ``$MUTEPRO_ZONE_MAP``)
    the zone must be in it (an unmapped zone is an error: a wrong rack is worse than none); without one the
    zone itself is the rack, which is right when brokers use zone names as ``broker.rack``.
    """
    env = os.environ if env is None else env
    if explicit:
        return RackResolution(explicit, "explicit")
    if env.get(CLIENT_RACK_ENV, "").strip():
        return RackResolution(env[CLIENT_RACK_ENV].strip(), f"env {CLIENT_RACK_ENV}")
    zone_var = next((v for v in ZONE_ENV_VARS if env.get(v, "").strip()), None)
    if zone_map is None and env.get(ZONE_MAP_ENV, "").strip():
        zone_map = env[ZONE_MAP_ENV].strip()
    if zone_var is None:
        return RackResolution(None, f"none of explicit, {CLIENT_RACK_ENV}, {', '.join(ZONE_ENV_VARS)} is set")
    zone = env[zone_var].strip()
    if zone_map is None:
        return RackResolution(zone, f"env {zone_var} (zone used as rack, no zone map)")
    mapping = dict(zone_map) if isinstance(zone_map, Mapping) else load_zone_map(zone_map)
    where = "zone map" if isinstance(zone_map, Mapping) else f"zone map {zone_map}"
    if zone not in mapping:
        raise ConfigError(
            f"{zone_var}={zone!r} is not in the {where} (zones: {sorted(mapping)}); add it, or set "
            f"{CLIENT_RACK_ENV} explicitly"
        )
    return RackResolution(mapping[zone], f"{where}[{zone}] via env {zone_var}")


def client_rack(
    explicit: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    zone_map: str | os.PathLike[str] | Mapping[str, str] | None = None,
) -> str | None:
    """The ``client.rack`` to set, or ``None`` (see :func:`resolve_client_rack`)."""
    return resolve_client_rack(explicit, env=env, zone_map=zone_map).rack


# -- readiness ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerReadiness:
    """One broker's rack and replica selector, and what is wrong with them."""

    broker_id: int
    rack: str | None
    replica_selector_class: str | None
    problems: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        """True when the broker serves follower fetches for a matching client.rack."""
        return not self.problems


@dataclass(frozen=True)
class ReadinessReport:
    """Whether follower fetching will happen, and the fix for every reason it would not."""

    brokers: tuple[BrokerReadiness, ...]
    client_rack: str | None = None
    problems: tuple[str, ...] = field(default=())

    @property
    def ready(self) -> bool:
        """True when every broker is ready and the client rack (if given) matches a broker rack."""
        return bool(self.brokers) and not self.problems and all(b.ready for b in self.brokers)

    @property
    def all_problems(self) -> tuple[str, ...]:
        """Cluster-level problems followed by each broker's."""
        return (*self.problems, *(p for b in self.brokers for p in b.problems))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {
            "ready": self.ready,
            "client_rack": self.client_rack,
            "problems": list(self.all_problems),
            "brokers": [
                {
                    "id": b.broker_id,
                    "rack": b.rack,
                    "replica_selector_class": b.replica_selector_class,
                    "ready": b.ready,
                }
                for b in self.brokers
            ],
        }


def evaluate_readiness(
    brokers: Mapping[int, Mapping[str, str | None]], client_rack: str | None = None
) -> ReadinessReport:
    """Judge ``{broker id: {"broker.rack": ..., "replica.selector.class": ...}}`` (pure; no cluster)."""
    results: list[BrokerReadiness] = []
    for broker_id, cfg in sorted(brokers.items()):
        rack = cfg.get("broker.rack") or None
        selector = cfg.get("replica.selector.class") or None
        problems = []
        if not rack:
            problems.append(f"broker {broker_id}: broker.rack is not set; set it to the broker's zone and restart")
        if selector != RACK_AWARE_SELECTOR:
            problems.append(
                f"broker {broker_id}: replica.selector.class is {selector or 'unset (leader only)'}; set "
                f"replica.selector.class={RACK_AWARE_SELECTOR} and restart"
            )
        results.append(BrokerReadiness(broker_id, rack, selector, tuple(problems)))
    cluster_problems: list[str] = []
    if not results:
        cluster_problems.append("no brokers were described; check bootstrap.servers")
    racks = {b.rack for b in results if b.rack}
    if client_rack is not None and racks and client_rack not in racks:
        cluster_problems.append(
            f"client.rack={client_rack!r} matches no broker.rack ({sorted(racks)}); every fetch goes to the "
            "leader. Use the brokers' rack names (a zone map can translate zone names to them)"
        )
    return ReadinessReport(tuple(results), client_rack, tuple(cluster_problems))


def check_follower_fetching(admin: Any, client_rack: str | None = None, *, timeout_s: float = 15.0) -> ReadinessReport:
    """Describe every live broker's rack and ``replica.selector.class`` and judge them."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import ConfigResource, ResourceType

    try:
        cluster = admin.describe_cluster(request_timeout=timeout_s).result(timeout=timeout_s + 5)
        nodes = {int(n.id): n.rack for n in cluster.nodes}
        brokers: dict[int, dict[str, str | None]] = {}
        for broker_id in sorted(nodes):
            # librdkafka allows one BROKER resource per DescribeConfigs call (it is sent to that broker).
            resource = ConfigResource(ResourceType.BROKER, str(broker_id))
            entries = admin.describe_configs([resource], request_timeout=timeout_s)[resource].result(
                timeout=timeout_s + 5
            )
            selector = entries.get("replica.selector.class")
            rack_entry = entries.get("broker.rack")
            brokers[broker_id] = {
                "broker.rack": nodes.get(broker_id) or (rack_entry.value if rack_entry is not None else None),
                "replica.selector.class": selector.value if selector is not None else None,
            }
    except KafkaException as err:
        raise ClusterError(
            f"could not describe brokers for the follower-fetching check: {err}",
            kafka_error=err.args[0] if err.args else None,
        ) from err
    return evaluate_readiness(brokers, client_rack)


# -- live locality --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionLocality:
    """Where one partition is fetched from, compared with its leader and the consumer's rack."""

    topic: str
    partition: int
    fetching_from: int
    leader: int
    fetch_rack: str | None
    leader_rack: str | None
    client_rack: str | None

    @property
    def local(self) -> bool:
        """Fetched from a broker on the consumer's own rack."""
        return self.client_rack is not None and self.fetch_rack == self.client_rack

    @property
    def from_follower(self) -> bool:
        """Fetched from a broker that is not the leader (KIP-392 in action)."""
        return self.fetching_from >= 0 and self.fetching_from != self.leader


@dataclass(frozen=True)
class LocalityReport:
    """Per-partition fetch locality of one consumer, from one statistics snapshot."""

    client_rack: str | None
    partitions: tuple[PartitionLocality, ...]

    @property
    def local(self) -> tuple[PartitionLocality, ...]:
        """Partitions fetched on the consumer's rack."""
        return tuple(p for p in self.partitions if p.local)

    @property
    def from_followers(self) -> tuple[PartitionLocality, ...]:
        """Partitions fetched from a follower."""
        return tuple(p for p in self.partitions if p.from_follower)

    @property
    def local_fraction(self) -> float:
        """Share of fetched partitions read on the consumer's rack (0.0 with none)."""
        return len(self.local) / len(self.partitions) if self.partitions else 0.0

    @classmethod
    def from_stats(
        cls,
        stats: str | Mapping[str, Any],
        broker_racks: Mapping[int, str | None],
        client_rack: str | None = None,
        *,
        topics: set[str] | None = None,
    ) -> LocalityReport:
        """Build the report from a librdkafka statistics JSON (the ``stats_cb`` argument).

        Only partitions the consumer fetches count: ``desired`` or a ``fetch_state`` other than
        ``none``/``stopped``; the internal unassigned partition ``-1`` never does.
        """
        doc = json.loads(stats) if isinstance(stats, str) else stats
        entries: list[PartitionLocality] = []
        for topic, tdoc in sorted((doc.get("topics") or {}).items()):
            if topics is not None and topic not in topics:
                continue
            for pdoc in (tdoc.get("partitions") or {}).values():
                partition = int(pdoc.get("partition", -1))
                if partition < 0:
                    continue
                state = pdoc.get("fetch_state", "none")
                if not pdoc.get("desired") and state in ("none", "stopped", "stopping"):
                    continue
                fetching = int(pdoc.get("broker", -1))
                leader = int(pdoc.get("leader", -1))
                entries.append(
                    PartitionLocality(
                        topic,
                        partition,
                        fetching,
                        leader,
                        broker_racks.get(fetching),
                        broker_racks.get(leader),
                        client_rack,
                    )
                )
        entries.sort(key=lambda p: (p.topic, p.partition))
        return cls(client_rack, tuple(entries))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (``mutepro racks locality --json``)."""
        return {
            "client_rack": self.client_rack,
            "local_fraction": round(self.local_fraction, 4),
            "partitions": [
                {
                    "topic": p.topic,
                    "partition": p.partition,
                    "fetching_from": p.fetching_from,
                    "fetch_rack": p.fetch_rack,
                    "leader": p.leader,
                    "leader_rack": p.leader_rack,
                    "local": p.local,
                    "from_follower": p.from_follower,
                }
                for p in self.partitions
            ],
        }


class StatsCollector:
    """A ``stats_cb`` that keeps the latest statistics JSON (set ``statistics.interval.ms`` to use it).

    ``consumer = Consumer({..., "statistics.interval.ms": 1000, "stats_cb": collector})``; then
    ``collector.report(broker_racks, client_rack)`` after a few polls.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: dict[str, Any] | None = None
        self.count = 0

    def __call__(self, stats_json: str) -> None:
        doc = json.loads(stats_json)
        with self._lock:
            self._latest = doc
            self.count += 1

    @property
    def latest(self) -> dict[str, Any] | None:
        """The most recent statistics document, if any arrived."""
        with self._lock:
            return self._latest

    def report(
        self,
        broker_racks: Mapping[int, str | None],
        client_rack: str | None,
        *,
        topics: set[str] | None = None,
    ) -> LocalityReport:
        """The locality of the latest statistics (empty before the first one)."""
        latest = self.latest
        if latest is None:
            return LocalityReport(client_rack, ())
        return LocalityReport.from_stats(latest, broker_racks, client_rack, topics=topics)


def measure_locality(
    bootstrap_servers: str,
    topics: list[str],
    broker_racks: Mapping[int, str | None],
    client_rack: str | None,
    *,
    duration_s: float = 15.0,
    group_id: str | None = None,
    config: Mapping[str, Any] | None = None,
    settle: Any = None,
) -> LocalityReport:
    """Consume ``topics`` with ``client.rack`` for at most ``duration_s`` and report fetch locality.

    The first fetch of each partition goes to its leader; the leader answers with a preferred read replica
    and librdkafka moves the partition to it, so locality shows after a fetch round or two. The loop ends
    early once ``settle(report)`` is true (default: every fetched partition is on the client's rack).
    Messages are read but not committed (``enable.auto.commit=false``).
    """
    import time
    import uuid

    from confluent_kafka import Consumer

    collector = StatsCollector()
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap_servers,
        "group.id": group_id or f"mutepro-locality-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "statistics.interval.ms": 500,
        "stats_cb": collector,
        **dict(config or {}),
    }
    if client_rack:
        conf["client.rack"] = client_rack
    done = settle or (lambda r: bool(r.partitions) and len(r.local) == len(r.partitions))
    wanted = set(topics)
    consumer = Consumer(conf)
    report = LocalityReport(client_rack, ())
    try:
        consumer.subscribe(list(topics))
        deadline = time.monotonic() + duration_s
        seen = 0
        while time.monotonic() < deadline:
            consumer.poll(0.2)
            if collector.count != seen:
                seen = collector.count
                report = collector.report(broker_racks, client_rack, topics=wanted)
                if done(report):
                    break
    finally:
        consumer.close()
    return report
