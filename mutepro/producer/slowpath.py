"""The slow path of ``produce()``: everything the inlined fast path does not take -- explicit partitions, topics
whose metadata is not known yet, muted partitions, held keys. It asks the :class:`~mutepro.producer.routing.Router`
where the message goes and carries the :class:`~mutepro.producer.routing.Decision` out (producer lock held)."""

from __future__ import annotations

import math
import time
from typing import Any

from mutepro.partition.snapshot import TopicSnapshot
from mutepro.producer import compat
from mutepro.producer.core import Core
from mutepro.producer.holds import HoldQueues
from mutepro.producer.message import EXPLICIT, PROBE, UNCOUNTED, DeliveryCallback, OutMessage
from mutepro.producer.routing import Action, Router
from mutepro.producer.tracker import UNASSIGNED

#: Keys remembered per snapshot with their fallback partition (TopicSnapshot.reroute_memo): a job with more keys
#: behind a muted partition than this sends the rest through this path, as before the memo.
REROUTE_MEMO_MAX = 65_536
#: While every probe slot of a topic's half-open partitions is taken (no probe before a result comes back), the C
#: fast path still comes back here this often to ask: a result that frees a slot changes no snapshot.
PROBE_RECHECK_S = 0.25
_MEMO = (bytes, str)  # exactly these (hashing them runs no Python code): the C side looks keys up itself


class SlowPath:
    """``produce()`` beyond the fast path, for one producer."""

    def __init__(self, core: Core, router: Router, holds: HoldQueues) -> None:
        self._core = core
        self._router = router
        self._holds = holds
        self.closed = False

    def produce(
        self, topic: str, value: Any, key: Any, partition: int, cb: DeliveryCallback | None, timestamp: int,
        headers: Any, snap: TopicSnapshot | None,
    ) -> None:
        if not isinstance(topic, str):
            raise TypeError(f"topic must be a str, got {type(topic).__name__}")
        if self.closed:
            raise compat.closed_error()
        compat.check_partition(partition)
        core = self._core
        if snap is None:
            # Metadata not known yet: the driver thread loads it in the background; meanwhile librdkafka
            # partitions the message exactly as the plain client would.
            core.want_metadata(topic)
        try:
            core.fast.check_queue()  # reports queued for the application's poll hold their places (FastPath)
            if partition is not None and partition != -1:
                # as given, also when negative: librdkafka answers with the plain client's error (-1 alone means
                # "choose for me")
                core.send(topic, value, key, headers, timestamp, cb, partition, EXPLICIT)
            elif snap is None:
                if topic not in core.placed_topics:
                    core.unassigned_topics.add(topic)
                core.send(topic, value, key, headers, timestamp, cb, UNASSIGNED, UNCOUNTED)
            else:
                self._route(topic, value, key, cb, timestamp, headers, snap)
        except BufferError:
            core.totals.buffer_errors += 1
            raise
        core.totals.produced += 1

    def _route(
        self, topic: str, value: Any, key: Any, cb: DeliveryCallback | None, timestamp: int, headers: Any,
        snap: TopicSnapshot,
    ) -> None:
        core = self._core
        holds = self._holds
        decision = self._router.route(
            topic, key, len(value) if value is not None else 0, snap, holding=bool(holds.queues),
            held_before=holds.holds_before, outstanding=core.tracker.count, stick=core.tracker.topics.get(topic),
        )
        counters = core.counters
        if decision.action is Action.DISPATCH:
            try:
                core.send(topic, value, key, headers, timestamp, cb, decision.partition, decision.kind)
            except BufferError:
                if decision.kind & PROBE:
                    core.manager.probes.probe_unsent(topic, decision.partition)
                raise
            if decision.kind & PROBE:
                counters.probes += 1
            if decision.rerouted_from >= 0:
                core.fast.count_reroute(topic, decision.rerouted_from, decision.partition)
                memo = snap.reroute_memo
                if not decision.kind & PROBE and len(memo) < REROUTE_MEMO_MAX and (key is None or type(key) in _MEMO):
                    memo[key] = decision.partition  # the C fast path sends the key's next messages there itself
        elif decision.action is Action.HOLD:
            holds.hold(OutMessage(topic, value, key, headers, timestamp, cb), decision.partition)
        else:
            assert decision.error is not None
            counters.muted_fail += 1
            core.fail(OutMessage(topic, value, key, headers, timestamp, cb), decision.error, decision.partition)
        if snap.probing:
            self._defer_probes(topic, snap)

    def _defer_probes(self, topic: str, snap: TopicSnapshot) -> None:
        """Tell the topic's tally how long no probe can be granted, so the C fast path keeps its messages until
        then (the probes of a half-open round go 250 ms apart: without this every message of the topic came
        here for the whole round, to be told "no probe now")."""
        core = self._core
        if core.clock is not time.monotonic:
            return  # the fast path times the deferral on CLOCK_MONOTONIC: an injected clock would not move it
        wait = core.manager.probes.probe_wait(topic)
        if wait <= 0.0:
            return
        tally = core.tracker.topics.get(topic)
        if tally is not None:
            tally.defer_probes(snap, wait if wait != math.inf else PROBE_RECHECK_S)


class ClosedPath:
    """The slow path of an instance whose ``__init__`` never ran: closed, like an uninitialised
    ``confluent_kafka.Producer``."""

    closed = True

    def produce(self, topic: str, *args: Any, **kwargs: Any) -> None:
        if not isinstance(topic, str):
            raise TypeError(f"topic must be a str, got {type(topic).__name__}")
        raise compat.closed_error()
