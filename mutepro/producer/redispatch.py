"""Purge, drain and redispatch: take librdkafka's queues back (purge), collect the purge reports (drain) and send
each message on again -- around a muted partition, into its hold queue, failed, or to the same partition, as the
topic's policy says -- in the order the application produced them (:class:`Redispatcher`). The rescue of a newly
muted partition's queue (:mod:`~mutepro.producer.rescue`), of a timed-out message
(:mod:`~mutepro.producer.timeouts`) and of the Spark sink's in-flight messages (:mod:`~mutepro.producer.inflight`)
all re-send through it.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message

from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.schema import KeyedPolicy
from mutepro.producer.core import Core
from mutepro.producer.holds import HoldKey, HoldQueues
from mutepro.producer.message import (
    EXPLICIT,
    PROBE,
    RESCUED,
    UNCOUNTED,
    DeliveryCallback,
    OutMessage,
    create_time,
    partition_of,
    topic_of,
    with_header,
)
from mutepro.producer.routing import Router

_RESCUE_DRAIN_S = 0.025  # the drain ends once librdkafka's poll has had this long with nothing more to report
# A rescue moves unkeyed messages in runs of this many to one partition the partitioner picks: one pick per run
# instead of one per message, and the moved messages still fill whole batches (512 B messages: ~256 KB a run).
_MOVE_RUN = 500

Moves = dict[tuple[str, int], dict[int, int]]


def note_placed(core: Core, kind: int, msg: Message) -> None:
    """A report of an uncounted message with a partition: librdkafka has placed its topic's unassigned queue, so
    the topic is routed here from now on (see ``Core.unassigned_topics``). For every report of one, purged or
    not."""
    if kind & UNCOUNTED and core.unassigned_topics and (msg.partition() or 0) >= 0:
        core.placed_topics.add(msg.topic())  # type: ignore[arg-type]  # a report always has a topic
        core.unassigned_topics.discard(msg.topic())


class Redispatcher:
    """Purge, drain and the re-send of each message taken back, for one producer (see the module docstring)."""

    def __init__(self, core: Core, router: Router, holds: HoldQueues) -> None:
        self._core = core
        self._router = router
        self._holds = holds
        # When the last rescue purged: a purge report after it and after the application's own purge is a
        # straggler of that rescue (see Rescuer.on_purged).
        self.rescue_purge_at = float("-inf")
        self.in_hand = 0  # > 0 while a rescue holds messages taken back from librdkafka (see __len__ of MuteProducer)
        # messages moved by rescues since the last tick, (topic, origin, why) -> {target: count}
        self.moves: dict[tuple[str, int, str], dict[int, int]] = {}

    def purge_and_redispatch(self, moved: Moves, *, in_flight: bool = False) -> list[Any]:
        """Purge librdkafka's queues (``in_flight``: what is in flight too), collect the purge reports and re-send
        each message as :meth:`redispatch` would; ``moved`` gets (topic, origin) -> {target: count}. Returns the
        batch (cb, kind, msg) in enqueue order. The caller holds the report serving quiet (see
        :class:`~mutepro.producer.serving.DirectServing`)."""
        core = self._core
        with core.lock:
            # Between a purge report (its message no longer counted as outstanding) and the message's re-send, it
            # is only here: len() must not reach 0 meanwhile, or a flush() on another thread (the C path's does
            # not take the lock) returns before its callbacks ran.
            self.in_hand = 1
            one_step: dict[tuple[str, int, int], int] = {}  # (topic, origin, target) -> messages moved in one step
            try:
                batch = in_enqueue_order(self._collect(in_flight))
                held_back: dict[HoldKey, list[OutMessage]] = {}
                requeued = 0
                topics = {topic_of(msg) for _, _, msg in batch}
                staying = self._staying_partitions(topics)
                leaving = self._leaving_partitions(topics)
                runs: dict[str, list[int]] = {}  # topic -> [target, messages left to send there]
                fallbacks: dict[tuple[str, Any], int] = {}  # (topic, key) -> where keyed_policy reroute sends it
                send = core.send
                for cb, kind, msg in batch:
                    before = partition_of(msg)
                    topic = topic_of(msg)
                    move = leaving.get((topic, before)) if requeued >= 0 else None
                    if move is not None and not kind & (PROBE | EXPLICIT):
                        # A message of a muted partition, what a stall's rescue is made of (93,500 of 93,500 moved
                        # in one saturated run): sent on in one step, where redispatch + move cost ~8 us a message
                        # unkeyed and ~19 us keyed (a routing decision, a header list and an OutMessage each; a
                        # keyed stall's rescue of 94,361 held the application 1.76 s). Same result: an unkeyed
                        # message goes where the partitioner picks (once per run of _MOVE_RUN messages), a keyed
                        # one where keyed_policy reroute sends its key (a pure function of key and snapshot,
                        # decided once per key), each with the rescue header.
                        snap, header, reroute_keys = move
                        key, value = msg.key(), msg.value()
                        if key is None:
                            run = runs.get(topic)
                            if run is None or run[1] <= 0:
                                target = self._router.pick(topic, None, len(value or b""), snap)
                                run = runs[topic] = [target if target is not None else -1, _MOVE_RUN]
                            target = run[0]
                        elif reroute_keys:
                            run = None
                            found = fallbacks.get((topic, key))
                            if found is None:
                                home = self._router.home(key, snap.partition_count)
                                # no home (a custom partitioner): redispatch decides, as for any other message
                                chosen = self._router.reroute(key, home, snap) if home is not None else None
                                found = fallbacks[(topic, key)] = chosen if chosen is not None else -1
                            target = found
                        else:
                            target = -1  # hold, fail or ignore: redispatch applies the keyed policy
                        if target >= 0 and target != before:
                            headers = msg.headers()
                            if header is not None:
                                headers = with_header(headers, *header)
                            try:
                                send(topic, value, key, headers, create_time(msg), cb, target, RESCUED)
                            except BufferError:
                                core.counters.requeued += requeued
                                requeued = -1  # the queue is full: the rest go the long way (retried in order)
                            except KafkaException as err:  # e.g. _UNKNOWN_TOPIC, as _move -> Core.resend
                                core.counters.rescued += 1
                                core.refused(OutMessage.from_report(msg, cb, headers=headers), err, target, RESCUED)
                                continue
                            else:
                                if run is not None:
                                    run[1] -= 1
                                step = (topic, before, target)
                                one_step[step] = one_step.get(step, 0) + 1  # counted once a rescue (below)
                                continue
                    if requeued >= 0 and (topic, before) in staying and not kind & PROBE:
                        # Most of a purge is the healthy partitions' queue, going straight back where it was:
                        # sent here without the per-message routing below (a rescue holds every caller of
                        # produce() and every report, so its cost per message is everyone's latency).
                        try:
                            send(topic, msg.value(), msg.key(), msg.headers(), create_time(msg), cb, before,
                                 kind & ~UNCOUNTED)
                            requeued += 1
                            continue
                        except BufferError:
                            core.counters.requeued += requeued
                            requeued = -1  # the queue is full: the rest go the long way (retried in order)
                        except KafkaException as err:  # e.g. _UNKNOWN_TOPIC (see Core.resend)
                            core.refused(OutMessage.from_report(msg, cb), err, before, kind)
                            continue
                    target = self.redispatch(cb, kind, msg, held_back)
                    if target is not None and target != before:
                        counts = moved.setdefault((topic, before), {})
                        counts[target] = counts.get(target, 0) + 1
                if requeued > 0:
                    core.counters.requeued += requeued
                self._holds.put_front(held_back)
            finally:
                self.in_hand = 0
                self._count_one_step(one_step, moved)
        return batch

    def _collect(self, in_flight: bool) -> list[tuple[float | None, DeliveryCallback | None, int, Message]]:
        """Purge and drain: every purge report, (enqueued, cb, kind, msg), as the C reporters collect it
        (``_fastpath.c`` ``purge_report``: every message went out through ``FastPath.send`` or the C produce, so
        every report comes to a C reporter, uncounted ones too)."""
        core = self._core
        sink: list[tuple[float | None, DeliveryCallback | None, int, Message]] = []
        self.rescue_purge_at = core.clock()
        core.fast.purge_sink = sink
        try:
            core.inner.purge(in_queue=True, in_flight=in_flight, blocking=True)
            # drain until librdkafka has had a moment with nothing more to report (a report still on its way when
            # the drain ends would be re-sent late, behind newer messages)
            while core.inner.poll(_RESCUE_DRAIN_S) > 0:
                pass
        finally:
            core.fast.purge_sink = None
        if core.unassigned_topics:
            for _, _, kind, msg in sink:
                note_placed(core, kind, msg)
        return sink

    def _count_one_step(self, steps: dict[tuple[str, int, int], int], moved: Moves) -> None:
        """Count the messages the rescue moved in one step, per (topic, origin, target) rather than per message
        (the counters' attribute hook and two dict updates a message were ~1.5 us of a keyed stall's ~15)."""
        for (topic, before, target), n in steps.items():
            self.count_move(topic, before, target, "muted", n)
            counts = moved.setdefault((topic, before), {})
            counts[target] = counts.get(target, 0) + n

    def _staying_partitions(self, topics: set[str]) -> set[tuple[str, int]]:
        """The (topic, partition) pairs of ``topics`` whose messages :meth:`redispatch` sends back where they
        were: known partitions that are not muted."""
        manager = self._core.manager
        staying: set[tuple[str, int]] = set()
        for topic in topics:
            snap = manager.snapshot(topic)
            if snap is not None:
                staying.update((topic, p) for p in range(snap.partition_count) if p not in snap.muted)
        return staying

    def _leaving_partitions(
        self, topics: set[str]
    ) -> dict[tuple[str, int], tuple[TopicSnapshot, tuple[str, bytes] | None, bool]]:
        """The (topic, partition) pairs of ``topics`` whose unkeyed messages :meth:`redispatch` moves (muted, the
        topic's rescue enabled), each with the snapshot, the rescue header to add (None: the policy adds none) and
        whether it moves keyed messages too (``keyed_policy: reroute``)."""
        core = self._core
        leaving: dict[tuple[str, int], tuple[TopicSnapshot, tuple[str, bytes] | None, bool]] = {}
        for topic in topics:
            snap = core.manager.snapshot(topic)
            policy = core.policy_for(topic)
            rescue = policy.rescue
            if snap is None or not snap.muted or not rescue.enabled:
                continue
            reroute_keys = policy.keyed_policy == KeyedPolicy.REROUTE
            for p in snap.muted:
                header = (rescue.header, str(p).encode()) if rescue.header else None
                leaving[(topic, p)] = (snap, header, reroute_keys)
        return leaving

    def redispatch(
        self, cb: DeliveryCallback | None, kind: int, msg: Message, held_back: dict[HoldKey, list[OutMessage]]
    ) -> int | None:
        """Re-send one purged message; returns its new partition (None if held or failed)."""
        core = self._core
        router = self._router
        topic, current = topic_of(msg), partition_of(msg)
        key = msg.key()
        if kind & PROBE:
            # A probe taken back has no result of its own: counted as failed (the partition opens again, with
            # backoff), or its half-open partition would wait forever for the result of a probe nobody sends.
            core.manager.probes.probe_result(topic, current, False)
        snap = core.manager.snapshot(topic)
        if current < 0 and snap is not None:
            # Purged from librdkafka's unassigned queue (sent before the topic's metadata was known). Sent there
            # again it would wait for librdkafka's next metadata refresh, while the key's newer messages go
            # straight to its partition: written after them (sequence 56 before 55). Its home is known now.
            home = router.home(key, snap.partition_count)
            if home is not None:
                current = home
                kind &= ~UNCOUNTED
        if kind & EXPLICIT or snap is None or current not in snap.muted:
            core.counters.requeued += 1
            self._resend(OutMessage.from_report(msg, cb), current, kind)
            return current
        policy = core.policy_for(topic)
        home = router.home(key, snap.partition_count)
        if home is None:
            enabled = policy.rescue.enabled
            target = router.pick(topic, None, len(msg.value() or b""), snap) if enabled else None
            if target is None or target < 0:
                self._resend(OutMessage.from_report(msg, cb), current, kind)
                return current
            self.move(cb, msg, target, "muted")
            return target
        keyed = policy.keyed_policy
        if keyed == KeyedPolicy.HOLD:
            held_back.setdefault((topic, home), []).append(OutMessage.from_report(msg, cb, purged=True))
            return None
        if keyed == KeyedPolicy.REROUTE and policy.rescue.enabled:
            target = router.reroute(key, home, snap)
            if target is not None:
                self.move(cb, msg, target, "muted")
                return target
        if keyed == KeyedPolicy.FAIL:
            core.counters.muted_fail += 1
            error = KafkaError(KafkaError._STATE, f"mutepro: {topic}[{current}] was muted; keyed_policy=fail")
            core.fail(OutMessage.from_report(msg, cb), error, current)
            return None
        self._resend(OutMessage.from_report(msg, cb), current, kind)
        return current

    def move(self, cb: DeliveryCallback | None, msg: Message, target: int, why: str) -> None:
        """Re-send a reported (purged or timed-out) message to ``target``, marked with the rescue header."""
        topic, origin = topic_of(msg), partition_of(msg)
        headers = msg.headers()
        header = self._core.policy_for(topic).rescue.header
        if header:
            headers = with_header(headers, header, str(origin).encode())
        self.count_move(topic, origin, target, why)
        self._resend(OutMessage.from_report(msg, cb, headers=headers), target, RESCUED)

    def count_move(self, topic: str, origin: int, target: int, why: str, n: int = 1) -> None:
        """Count ``n`` messages moved from ``origin`` to ``target``: the ``rescued`` counter and the driver's
        aggregate (one event per partition and tick, never one per message: a rescue moves thousands)."""
        self._core.counters.rescued += n
        moves = self.moves.setdefault((topic, origin, why), {})
        moves[target] = moves.get(target, 0) + n

    def _resend(self, m: OutMessage, partition: int, kind: int) -> None:
        if not self._core.resend(m, partition, kind & ~(PROBE | UNCOUNTED)):
            self._holds.retry_later(m, partition)



def in_enqueue_order(
    batch: list[tuple[float | None, DeliveryCallback | None, int, Message]],
) -> list[tuple[DeliveryCallback | None, int, Message]]:
    """The rescue batch in the order its messages were produced (a report without a latency keeps the place of
    the report before it). Stable: equal times keep report order.

    Why: librdkafka reports a purge in parts (the partition's queue first, then each broker's transmit queue,
    which holds the OLDER messages), so report order is not produce order: re-sent as reported, a key's messages
    came out of order (e.g. sequences 201-205 written after 213). The enqueue time is now - latency, both on
    CLOCK_MONOTONIC, read by the C reporter in the report itself."""
    times: list[float] = []
    last = float("-inf")
    for entry in batch:
        enqueued = entry[0]
        if enqueued is not None:
            last = enqueued
        times.append(last)
    # sorted() is stable (equal times keep report order); the key is a C method, not a Python frame a message:
    # 0.28-0.41 us a message against 0.43-0.69 for (time, index, payload) tuples (94,000 purged, scratch probe)
    order = sorted(range(len(batch)), key=times.__getitem__)
    return [(batch[i][1], batch[i][2], batch[i][3]) for i in order]

