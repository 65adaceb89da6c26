"""Rack-aware partitioning (KIP-1123): the producer's rack, each broker's, and which of a topic's partitions are
led in the producer's rack."""

from __future__ import annotations

from collections.abc import Mapping

from mutepro.mute.records import TopicRecord


class RackLocator:
    """``client_rack``: the producer's rack (``None``: rack-aware partitioning off); ``rack_aware_all``: on for
    every topic, not only those whose policy asks for it."""

    def __init__(self, client_rack: str | None, rack_aware_all: bool) -> None:
        self.client_rack = client_rack
        self._rack_aware_all = rack_aware_all
        self._broker_racks: dict[int, str] = {}

    def broker_racks(self) -> dict[int, str]:
        """Each broker's rack as last described by the cluster (empty until then, or when rack-aware is off)."""
        return dict(self._broker_racks)

    def update(self, racks: Mapping[int, str]) -> bool:
        """Take the brokers' racks; True when they changed (and rack-aware partitioning is on)."""
        if self.client_rack is None or dict(racks) == self._broker_racks:
            return False
        self._broker_racks = dict(racks)
        return True

    def locate(self, t: TopicRecord) -> bool:
        """Recompute which of the topic's partitions are led in the producer's rack; True when that moved.

        Off (``local`` stays None) unless the producer has a rack and the topic's policy is rack-aware. Until the
        brokers' racks are known every partition counts as remote, which is the plain sticky choice."""
        if self.client_rack is None or not (self._rack_aware_all or t.policy.partitioner.rack_aware):
            return False
        racks, mine = self._broker_racks, self.client_rack
        local = frozenset(p for p, part in t.partitions.items() if racks.get(part.leader) == mine)
        if local == t.local:
            return False
        t.local = local
        return True


class RackView:
    """What the producer reads of rack-aware partitioning (``producer.mute_manager.racks``): its rack, the
    brokers', and the partitions led in its rack now. Read only; the driver's metadata rounds change them."""

    def __init__(self, locator: RackLocator, topics: Mapping[str, TopicRecord]) -> None:
        self._locator = locator
        self._topics = topics

    @property
    def client_rack(self) -> str | None:
        """The producer's rack when rack-aware partitioning is on, else ``None``."""
        return self._locator.client_rack

    def broker_racks(self) -> dict[int, str]:
        """Each broker's rack as last described by the cluster (empty until then, or when rack-aware is off)."""
        return self._locator.broker_racks()

    def local_partitions(self, topic: str) -> frozenset[int] | None:
        """The topic's partitions led in the producer's rack (``None`` when rack-aware partitioning is off)."""
        t = self._topics.get(topic)
        return t.local if t is not None else None
