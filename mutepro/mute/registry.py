"""The mute manager's records: every known topic and partition, built with its breaker and detectors, and the
delivery reports fed to those detectors.

The registry is the only writer of the topic table; the other parts of the manager are handed a read-only view
of it. A partition's breaker is built here with the transition sink given at construction (the manager's
:class:`~mutepro.mute.reactions.Reactions`), so every breaker announces its transitions the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeGuard

from mutepro.detect.model import Delivery
from mutepro.detect.protocols import BulkPartitionDetector, PartitionDetector
from mutepro.errors import ConfigError
from mutepro.mute.breaker import Clock, MuteBreaker
from mutepro.mute.factory import DetectorFactory
from mutepro.mute.records import PartitionRecord, TopicRecord
from mutepro.mute.store import BreakerStore
from mutepro.mute.transitions import PartitionKey, Transition
from mutepro.policy.runtime import runtime_of
from mutepro.policy.schema import TopicPolicy


def _bulk(det: PartitionDetector) -> TypeGuard[BulkPartitionDetector]:
    """Whether ``det`` takes reports in bulk, decided once per detector class: ``isinstance`` against a runtime
    Protocol walks the Protocol's attributes on every call (4 ms a tick at 1,200 partitions)."""
    kind = type(det)
    known = _BULK.get(kind)
    if known is None:
        known = _BULK[kind] = isinstance(det, BulkPartitionDetector)
    return known


_BULK: dict[type, bool] = {}


class TopicRegistry:
    """Topic name -> :class:`TopicRecord`, each partition with its breaker, detectors and leader.

    ``policy_for`` gives a new topic's policy; ``clock``, ``wall_clock`` and ``store`` go to every breaker;
    ``on_transition`` hears every breaker's transitions.
    """

    def __init__(
        self,
        policy_for: Callable[[str], TopicPolicy],
        *,
        clock: Clock,
        wall_clock: Clock,
        store: BreakerStore,
        detector_factory: DetectorFactory,
        on_transition: Callable[[Transition], None],
        topics: dict[str, TopicRecord],
        acks_all: bool = True,
    ) -> None:
        self._acks_all = acks_all
        self._policy_for = policy_for
        self._clock = clock
        self._wall_clock = wall_clock
        self._store = store
        self._detector_factory = detector_factory
        self._on_transition = on_transition
        # built by the manager, which hands a read-only view of the same table to the parts that only read it
        self._topics = topics
        self.topics: Mapping[str, TopicRecord] = MappingProxyType(topics)

    def find(self, topic: str, partition: int) -> PartitionRecord | None:
        t = self._topics.get(topic)
        return t.partitions.get(partition) if t is not None else None

    def require(self, topic: str, partition: int) -> PartitionRecord:
        """The partition's record; :class:`ConfigError` for one this producer has no metadata of."""
        t = self._topics.get(topic)
        part = t.partitions.get(partition) if t is not None else None
        if part is None:
            known = sorted(t.partitions) if t is not None else []
            raise ConfigError(
                f"partition: {topic}[{partition}] is not known to this producer (known partitions: {known}); "
                "produce to the topic first so its metadata is loaded"
            )
        return part

    def policy(self, topic: str) -> TopicPolicy:
        t = self._topics.get(topic)
        return t.policy if t is not None else self._policy_for(topic)

    def ensure(
        self, topic: str, partition_count: int, replicas: Mapping[int, Sequence[int]] | None = None,
        isrs: Mapping[int, Sequence[int]] | None = None,
    ) -> TopicRecord:
        """The topic's record, created or grown to ``partition_count`` partitions (new ones without a leader)."""
        t = self._topics.get(topic)
        if t is None:
            t = TopicRecord(topic, self._policy_for(topic), acks_all=self._acks_all)
            self._topics[topic] = t
        for p in range(partition_count):
            if p not in t.partitions:
                t.partitions[p] = self.fresh(topic, p, t.policy)
        if replicas is not None:
            t.replicas = {p: tuple(r) for p, r in replicas.items()}
        if isrs is not None:
            t.isrs = {p: tuple(r) for p, r in isrs.items()}
        return t

    def fresh(self, topic: str, partition: int, policy: TopicPolicy) -> PartitionRecord:
        """A new record for the partition: a CLOSED breaker (after adopting what the shared store holds for it)
        and fresh detectors. Not entered in the table: :meth:`ensure` does that, a reset keeps the old record."""
        br = policy.breaker
        rt = runtime_of(policy)
        breaker = MuteBreaker(
            PartitionKey(topic, partition),
            retry_interval_s=rt.retry_interval_s,
            max_retry_interval_s=rt.max_retry_interval_s,
            backoff_multiplier=br.backoff_multiplier,
            half_open_probes=br.half_open_probes,
            probe_spacing_s=rt.probe_spacing_s,
            clock=self._clock,
            store=self._store,
            on_transition=self._on_transition,
            wall_clock=self._wall_clock,
            sync_interval_s=1.0,
        )
        breaker.tick()  # adopt a state other processes already published (shared store)
        return PartitionRecord(
            partition, breaker, self._detector_factory(topic, policy), history_s=rt.normal_window_s,
        )

    def leaders(self) -> set[int]:
        """Every known leader of every known topic's partitions."""
        return {part.leader for t in self._topics.values() for part in t.partitions.values() if part.leader >= 0}

    def record(self, topic: str, partition: int, delivery: Delivery) -> None:
        """Feed one final delivery report of a non-probe message to the partition's detectors."""
        t = self._topics.get(topic)
        if t is None or (part := t.partitions.get(partition)) is None:
            return
        part.reports += 1
        part.reported_ever = True
        if delivery.ok:
            t.delivered(part, delivery.now, judged=True)
        for det in part.detectors:
            det.record(delivery)

    def record_many(self, topic: str, partition: int, calls: int, failures: int, slow: int, now: float) -> None:
        """Feed a tick's tally of reports to the partition's detectors (``slow``: over the topic's threshold)."""
        t = self._topics.get(topic)
        if t is None or (part := t.partitions.get(partition)) is None:
            return
        part.reports += calls
        part.reported_ever = part.reported_ever or calls > 0
        if calls > failures:
            t.delivered(part, now, judged=True)
        for det in part.detectors:
            if _bulk(det):
                det.record_many(calls, failures, slow, now)
                continue
            # a custom detector without record_many: one synthetic report per call
            threshold = t.runtime.slow_threshold_s if t.runtime.slow_call_enabled else 0.0
            for i in range(calls):
                failed = i < failures
                is_slow = i >= calls - slow
                det.record(Delivery(not failed, threshold * 2 if is_slow else 0.0, now))

    def describe(self) -> tuple[dict[str, Any], dict[str, list[int]]]:
        """Every partition's breaker as JSON-ready values (topic -> partition -> fields), and the avoided
        partitions per topic (only topics with some)."""
        topics: dict[str, Any] = {}
        avoided: dict[str, list[int]] = {}
        for name, t in list(self._topics.items()):
            parts = {}
            for p, part in sorted(t.partitions.items()):
                snap = part.breaker.snapshot()
                parts[p] = {
                    "state": snap.state.value,
                    "leader": part.leader,
                    "reason": snap.reason.describe() if snap.reason else None,
                    "opens": snap.opens,
                }
            topics[name] = parts
            if t.avoided:
                avoided[name] = sorted(t.avoided)
        return topics, avoided
