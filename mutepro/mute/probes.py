"""The probe slots of half-open partitions (KIP-693's "unmute after a successful probe"): which partitions wait for
a probe, reserving and giving back a slot, and the answer a probe brought back.

Producing threads ask :meth:`ProbeDesk.try_probe` before sending a message to a half-open partition and the
report path gives the outcome to :meth:`ProbeDesk.probe_result`; each partition's
:class:`~mutepro.mute.breaker.MuteBreaker` keeps the slots, so the desk only finds the breaker.
"""

from __future__ import annotations

import math

from mutepro.mute.registry import TopicRegistry


class ProbeDesk:
    """``registry``: the manager's topic and partition records (read only here)."""

    def __init__(self, registry: TopicRegistry) -> None:
        self._registry = registry
        self._topics = registry.topics

    def probing(self, topic: str) -> frozenset[int]:
        """Half-open partitions of ``topic`` that are waiting for probe messages."""
        t = self._topics.get(topic)
        return t.probing if t is not None else frozenset()

    def try_probe(self, topic: str, partition: int) -> bool:
        """Reserve one probe slot on a half-open partition (False: none free, or not half-open)."""
        part = self._registry.find(topic, partition)
        return part is not None and part.breaker.try_probe()

    def probe_unsent(self, topic: str, partition: int) -> None:
        """Give back a slot :meth:`try_probe` reserved for a message that could not be sent."""
        part = self._registry.find(topic, partition)
        if part is not None:
            part.breaker.probe_unsent()

    def probe_wait(self, topic: str) -> float:
        """Seconds until some half-open partition of ``topic`` could take a probe: 0 now, ``inf`` when none can
        before a probe result comes back (or none is half-open)."""
        t = self._topics.get(topic)
        if t is None:
            return math.inf
        waits = (w for p in t.probing if (part := t.partitions.get(p)) and (w := part.breaker.probe_wait()) is not None)
        return min(waits, default=math.inf)

    def probe_result(self, topic: str, partition: int, ok: bool, latency_s: float | None = None) -> None:
        """A granted probe's outcome: ``ok`` False for a failed delivery; a delivered one (``latency_s`` given)
        passes only within the partition's probe limit (:meth:`~mutepro.mute.records.TopicRecord.probe_limit_of`)."""
        t = self._topics.get(topic)
        part = t.partitions.get(partition) if t is not None else None
        if t is not None and part is not None:
            part.breaker.probe_result(ok and (latency_s is None or latency_s <= t.probe_limit_of(part)))

