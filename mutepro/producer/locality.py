"""Rack-aware partitioning's two inputs and its one figure: where the brokers are, and how many bytes stayed local.

librdkafka's metadata carries each broker's rack, but confluent-kafka does not expose it (``BrokerMetadata`` has
id, host and port only), so the brokers' racks come from a DescribeCluster request through an ``AdminClient``
built from the producer's own connection settings, once per metadata refresh (10 s), on the metadata thread,
and only when rack-aware partitioning is on. The figure, :class:`LocalityMeter`, splits the value bytes handed
to librdkafka by whether the partition's leader was in the producer's rack when they were counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from confluent_kafka import KafkaException

from mutepro.logs import get_logger

log = get_logger("mutepro.producer")

#: Keys of the producer's config an admin client must not get: the application's callbacks and settings that
#: only mean something for a producing handle. Everything else (bootstrap, security, SASL/OAuth, socket, DNS,
#: client.id, logger) is what reaching the same cluster the same way takes.
_NOT_FOR_ADMIN = frozenset({
    "on_delivery", "dr_cb", "dr_msg_cb", "delivery.report.only.error", "error_cb", "stats_cb", "throttle_cb",
    "statistics.interval.ms", "transactional.id", "enable.idempotence", "partitioner", "partitioner_cb",
})  # fmt: skip


class RackSource(Protocol):
    """Where each broker is: ``{broker id: broker.rack}`` (brokers without a rack left out), or ``None`` when
    the cluster cannot be asked right now (the last answer then stands)."""

    def broker_racks(self) -> Mapping[int, str] | None: ...

    def close(self) -> None:
        """Release what asking needed (the producer is closing)."""


class AdminRackSource:
    """:class:`RackSource` through DescribeCluster, with an ``AdminClient`` made on first use and kept."""

    def __init__(self, producer_config: Mapping[str, Any], timeout_s: float = 1.0) -> None:
        self._config = {k: v for k, v in producer_config.items() if k not in _NOT_FOR_ADMIN}
        self._timeout_s = timeout_s
        self._admin: Any = None

    def broker_racks(self) -> Mapping[int, str] | None:
        from confluent_kafka.admin import AdminClient

        try:
            if self._admin is None:
                self._admin = AdminClient(self._config)
            future = self._admin.describe_cluster(request_timeout=self._timeout_s)
            nodes = future.result(timeout=self._timeout_s + 1.0).nodes
        except (KafkaException, TimeoutError, ValueError, TypeError) as err:
            log.debug("broker_racks_unavailable", error=str(err))
            return None
        return {n.id: n.rack for n in nodes if n.rack}

    def close(self) -> None:
        """Drop the admin client: its handle, connections and log lines go with the last reference."""
        self._admin = None


class LocalityMeter:
    """Value bytes produced to partitions led in the producer's rack, and to the others.

    Fed the cumulative per-partition byte counts now and then (:meth:`update`, once a second from the driver):
    each partition's growth since the last update is counted as local or remote by where its leader is at that
    moment. A leader that moves between two updates can put up to one second of that partition's bytes on the
    wrong side; leaders move rarely, and the broker-side figure in the benchmark checks this one.
    """

    __slots__ = ("_seen", "local_bytes", "remote_bytes")

    def __init__(self) -> None:
        self.local_bytes = 0
        self.remote_bytes = 0
        self._seen: dict[str, list[int]] = {}

    def update(self, topic: str, sent_bytes: list[int], local: frozenset[int] | None) -> None:
        """Count ``topic``'s growth per partition since the last call (``local`` None: the topic is not
        rack-aware, its bytes are not counted)."""
        seen = self._seen.setdefault(topic, [])
        if len(seen) < len(sent_bytes):
            seen.extend([0] * (len(sent_bytes) - len(seen)))
        if local is None:
            seen[:] = sent_bytes
            return
        for p, now in enumerate(sent_bytes):
            grown = now - seen[p]
            if grown > 0:
                if p in local:
                    self.local_bytes += grown
                else:
                    self.remote_bytes += grown
            seen[p] = now

    def as_dict(self, client_rack: str | None) -> dict[str, Any]:
        total = self.local_bytes + self.remote_bytes
        return {
            "client_rack": client_rack,
            "local_bytes": self.local_bytes,
            "remote_bytes": self.remote_bytes,
            "local_share": self.local_bytes / total if total else None,
        }
