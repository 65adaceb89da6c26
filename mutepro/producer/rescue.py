"""Rescue: when partitions are muted, take their queued messages back from librdkafka (purge), collect the purge
reports (drain), and send each message on again (redispatch) -- around the muted partition, into its hold queue,
failed, or to the same partition, as the topic's policy says -- in the order the application produced them.
Also the re-send of a message that timed out on a partition (``rescue.enabled``), and -- for mutepro's Spark sink,
whose rows carry identity headers -- the rescue of messages already *in flight* to a muted partition
(:meth:`Rescuer.rescue_in_flight`).

Idempotent and transactional producers are never purged: librdkafka numbers a partition's messages when they are
queued, so a purge leaves a gap in the sequence, the broker answers OUT_OF_ORDER_SEQUENCE_NUMBER, librdkafka bumps
the epoch and can no longer rule out duplicates (keys came out of order on the real cluster).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Message

from mutepro.detect.model import MuteReason, Verdict
from mutepro.logs import get_logger
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.runtime import runtime_of
from mutepro.policy.schema import KeyedPolicy, TopicPolicy
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
    enqueued_at,
    partition_of,
    topic_of,
    with_header,
)
from mutepro.producer.routing import Router

log = get_logger("mutepro.producer")

_RESCUE_DRAIN_S = 0.025  # a rescue waits at most this long for other threads to leave librdkafka's poll
# A rescue moves unkeyed messages in runs of this many to one partition the partitioner picks: one pick per run
# instead of one per message, and the moved messages still fill whole batches (512 B messages: ~256 KB a run).
_MOVE_RUN = 500

Moves = dict[tuple[str, int], dict[int, int]]


class Quiescing(Protocol):
    """What a rescue asks of the report serving (:class:`~mutepro.producer.serving.DirectServing`)."""

    def quiesce(self) -> None: ...

    def resume(self) -> None: ...


class _Unwired:
    """The serving until MuteProducer wires the real one in (nothing to keep out yet)."""

    def quiesce(self) -> None:
        pass

    def resume(self) -> None:
        pass


class Rescuer:
    """Purge, drain and redispatch for one producer (see the module docstring)."""

    def __init__(self, core: Core, router: Router, holds: HoldQueues, *, idempotent: bool, transactional: bool) -> None:
        self._core = core
        self._router = router
        self._holds = holds
        self.idempotent = idempotent
        self.transactional = transactional
        self._skip_logged = False
        # how reports are served: a rescue keeps other threads out of librdkafka's poll while it collects its purge
        self.serving: Quiescing = _Unwired()
        self.rescuing = False
        # (enqueue time, cb, kind, msg) of each message our rescue purged, re-sent in enqueue order
        self.batch: list[tuple[float | None, DeliveryCallback | None, int, Message]] = []
        # Whose purge a purge report belongs to: the application's (report it) or our rescue's (re-send it).
        # A report outside a rescue belongs to whichever purged last.
        self.user_purge_at = float("-inf")
        self.rescue_purge_at = float("-inf")
        self.in_hand = 0  # > 0 while a rescue holds messages taken back from librdkafka (see __len__ of MuteProducer)
        self.stragglers = 0  # purge reports of a rescue that reached us after it (see on_purged)
        # messages moved by rescues since the last tick, (topic, origin, why) -> {target: count}
        self.moves: dict[tuple[str, int, str], dict[int, int]] = {}
        # newly muted partitions whose queue a rescue may take back, (topic, partition) -> (when muted, the
        # application's BufferError count then) (see due())
        self.pending: dict[tuple[str, int], tuple[float, int]] = {}

    # -- purge reports (report handler) ----------------------------------------------------------------

    def on_purged(self, cb: DeliveryCallback | None, kind: int, msg: Message) -> bool:
        """A purge report: True when it is our rescue's (kept and re-sent), False when the application's."""
        if self.rescuing:
            # Purged by our own rescue: batched and re-sent in enqueue order. librdkafka reports a purge in
            # parts (the partition's queue first, then each broker's transmit queue, which holds the OLDER
            # messages), so report order is not produce order: re-sent as reported, a key's messages came out
            # of order (e.g. sequences 201-205 written after 213). The enqueue time is now - latency, both on
            # CLOCK_MONOTONIC, read here in the report itself.
            self.batch.append((enqueued_at(msg), cb, kind, msg))
            return True
        if self.rescue_purge_at > self.user_purge_at:
            # A straggler of our rescue (served on another thread after the rescue ran): re-sent on its own.
            self.stragglers += 1
            with self._core.lock:
                held_back: dict[HoldKey, list[OutMessage]] = {}
                self.redispatch(cb, kind, msg, held_back)
                self._holds.put_front(held_back, straggler=True)
            return True
        return False

    def may_rescue(self, kind: int, msg: Message) -> bool:
        """Whether a message that timed out may be re-sent to another partition.

        Never for an idempotent (or transactional) producer: a message that timed out in flight may have been
        written, and re-sending it would give the duplicate those producers are configured to rule out (the soak
        saw 2 in 72,000 per acks=all producer before this rule). The plain client reports the timeout, and so
        does mutepro there."""
        if kind & (EXPLICIT | RESCUED) or self.idempotent:
            return False
        policy = self._core.policy_for(topic_of(msg))
        if not policy.rescue.enabled:
            return False
        return msg.key() is None or policy.keyed_policy == KeyedPolicy.REROUTE

    def rescue_timed_out(self, cb: DeliveryCallback | None, msg: Message) -> None:
        """Re-send a timed-out message to a writable partition other than its own, if there is one."""
        core = self._core
        topic, current = topic_of(msg), partition_of(msg)
        snap = core.manager.snapshot(topic)
        target = None
        if snap is not None:
            key = msg.key()
            home = self._router.home(key, snap.partition_count)
            if home is not None:
                target = self._router.reroute(key, home, snap)
            else:
                target = self._router.pick(topic, None, len(msg.value() or b""), snap)
        if target is None or target < 0 or target == current:
            # librdkafka's own error, as the plain client reports it ("Local: Message timed out")
            err = msg.error() or KafkaError(KafkaError._MSG_TIMED_OUT)
            core.counters.failed += 1
            if cb is not None:
                core.callbacks.put(cb, err, msg)
            return
        self._move(cb, msg, target, "timeout")

    # -- the rescue of newly muted partitions (driver thread) ------------------------------------------

    def schedule(self, opened: Sequence[tuple[str, int]], now: float) -> None:
        """Note the partitions muted (or re-muted) at ``now``: :meth:`due` says when their queue is worth a rescue."""
        refused = self._core.totals.buffer_errors
        for key in opened:
            self.pending.setdefault(key, (now, refused))

    def due(self, now: float) -> bool:
        """Whether a rescue is due: a partition muted at least its topic's ``rescue.after_ms`` ago still holds a
        message sent before the mute. Partitions unmuted or drained meanwhile leave the schedule.

        Why wait: librdkafka purges producer-wide, so a rescue takes back and re-sends every queued message, not
        the muted partition's alone, and holds produce() meanwhile. A saturated keyed loop on a healthy cluster
        had a partition muted for congestion during one of its broker's 0.3-0.4 s pauses: the rescue purged
        39,555 messages to move 11,499 and held the application 651 ms, longer than the pause it rescued from.
        Waiting ``after_ms`` (1 s) lets such a pause end and the queue drain by itself; a stalled broker's
        messages are still stuck then, and only then moved. Messages sent to a muted partition after its mute
        (explicit partitions, keyed ``ignore``) are younger than the mute and do not count.

        Unless the application is blocked on them: when its produce() met a full queue (BufferError) since the
        mute and the stuck messages are at least ``rescue.blocked_share_pct`` of everything queued, the rescue
        is due at once. Waiting then frees nothing the application could use -- the buffer is theirs -- and
        costs it all its throughput: a saturated writer with one broker of three stalled ran at 0 msg/s for the
        whole second of ``after_ms`` (5 % of a 20 s stall), with 93,500 of ~100,000 queued stuck. The pause the
        delay is for (39,555 queued to move 11,499: 29 %) is far below that share.
        """
        manager = self._core.manager
        tracker = self._core.tracker
        refused = self._core.totals.buffer_errors
        stuck = 0
        share_pct = 100
        early = 0  # stuck on partitions not due by after_ms yet, muted since the application last met a full queue
        early_share_pct = 100
        for key, (at, refused_then) in list(self.pending.items()):
            topic, partition = key
            snap = manager.snapshot(topic)
            if snap is None or partition not in snap.muted:
                del self.pending[key]  # unmuted (or probing) before its rescue: its queue went on to its broker
                continue
            waited = now - at
            rescue = self._core.policy_for(topic).rescue
            waiting = waited * 1000.0 < rescue.after_ms
            blocked = rescue.blocked_share_pct is not None and refused > refused_then
            if waiting and not blocked:
                continue
            oldest = tracker.load(topic, partition, now).oldest_age_s
            if oldest is None or oldest < waited:
                del self.pending[key]  # what it held when muted was delivered meanwhile
                continue
            if waiting:
                early += tracker.count(topic, partition)
                early_share_pct = min(early_share_pct, rescue.blocked_share_pct or 100)
                continue
            stuck += tracker.count(topic, partition)
            share_pct = min(share_pct, rescue.min_share_pct)
        if early and (stuck + early) * 100 >= early_share_pct * tracker.total:
            return True
        # Worth a producer-wide purge only while the stuck messages are a real share of the queue
        # (rescue.min_share_pct). Seen without it: a saturated writer over 1,200 partitions, three busy brokers at
        # the topic's start, partitions muted one after another with 39 or 359 messages stuck each among ~100,000
        # queued -- every rescue re-sent the whole queue, and the run fell to 73k msg/s. A broker stall's rescue
        # moves tens of thousands with the healthy partitions drained: 80-99 % of what is queued. Kept pending
        # meanwhile: once the rest has drained, the same messages are a share worth taking back.
        return stuck > 0 and stuck * 100 >= share_pct * tracker.total

    def rescue(self) -> None:
        """Purge librdkafka's queues and re-send what was queued, routed around the muted partitions."""
        self.pending.clear()  # the purge takes every queue back: nothing is left to schedule
        if self.idempotent:
            self._say_skipped()
            return
        moved: Moves = {}
        began = self._core.clock()
        self.serving.quiesce()
        try:
            batch = self._purge_and_redispatch(moved)
        finally:
            self.serving.resume()
        took_ms = round((self._core.clock() - began) * 1000, 1)
        manager = self._core.manager
        for (topic, partition), targets in moved.items():
            log.info(
                "partition_rescue", topic=topic, partition=partition, broker=manager.leader(topic, partition),
                rescued=sum(targets.values()), to_partitions=targets,
            )
        if batch:
            # took_ms: how long reports and this producer's callers waited on the rescue (it holds both)
            log.info("rescue_done", purged=len(batch), moved=sum(sum(t.values()) for t in moved.values()),
                     took_ms=took_ms)

    def _say_skipped(self) -> None:
        # New messages still go around the muted partitions (or wait in the hold); what librdkafka already
        # queued for them waits for their broker, as in the plain client. Said once, not on every mute.
        if not self._skip_logged:
            self._skip_logged = True
            log.info(
                "rescue_skipped",
                reason="transactional producer" if self.transactional else "enable.idempotence=true",
                detail="messages already queued for a muted partition stay queued (a purge would break the "
                "idempotent sequence); new messages are routed or held as the policy says",
            )

    # -- the rescue of messages in flight to muted partitions (the Spark sink's end of task) ---------------

    def mute_stragglers(self, now: float, after_s: float) -> int:
        """The sink's hedge at the end of a task: mute the brokers its last messages wait on; returns how many
        partitions it muted.

        Due when every message still outstanding has waited ``after_s`` or more while the others were all
        answered, none of them on a muted partition yet -- and some partition led by another broker delivered
        while they waited. That is the evidence that the wait is their leaders' own: with RF 3 and acks=all a
        stalled follower holds up every partition it replicates, nothing is delivered anywhere until the leaders
        drop it from their ISR (10-30 s), and "nothing else outstanding" only meant the task had sent its last
        rows there (a sticky producer writes one partition at a time): the hedge then muted brokers 3 and 1 in
        turn, healthy leaders, and the broker rule followed them. The stall rule would mute them too, but only once they
        are the slow-call threshold old (5 s for the sink), and the task waits that long: with micro-batches
        written in 0.2 s, a stalled broker made one batch take 5.4 s. Each such message's leader has all its
        partitions of the topic muted (as the broker rule does: the rows rescued from one must not land on its
        neighbour), provided that at least half of the topic's partitions stay writable. The mutes are ordinary ones
        (backoff, probes, unmute). Only for producers whose rows can be told apart (the sink's identity
        headers), since what is in flight is then re-sent (see :meth:`rescue_in_flight`); never idempotent.
        """
        if self.idempotent:
            return 0
        core = self._core
        manager = core.manager
        leaders: dict[str, set[int]] = {}
        with core.lock:
            tracker = core.tracker
            if tracker.total <= 0:
                return 0
            counted = 0
            youngest = math.inf  # the age of the youngest waiting message
            for topic, tally in tracker.topics.items():
                snap = manager.snapshot(topic)
                for p in range(tally.count):
                    n = tally.sent[p] - tally.reported[p]
                    if n <= 0:
                        continue
                    counted += n
                    if snap is not None and p in snap.muted:
                        continue
                    age = tracker.load(topic, p, now).oldest_age_s
                    leader = manager.leader(topic, p)
                    if age is None or age < after_s or leader < 0:
                        return 0  # something young is still on its way: let it
                    if not _reroutes(core.policy_for(topic)):
                        return 0  # its rows could not go elsewhere: nothing to gain
                    leaders.setdefault(topic, set()).add(leader)
                    youngest = min(youngest, age)
            if counted != tracker.total:
                return 0  # messages librdkafka partitions itself: where they wait is unknown
        if not any(manager.answered_meanwhile(topic, bad, now - youngest) for topic, bad in leaders.items()):
            return 0  # no other broker delivered anything while they waited: no evidence against their leaders
        muted: list[str] = []
        for topic, bad in leaders.items():
            snap = manager.snapshot(topic)
            if snap is None:
                continue
            count = snap.partition_count
            left = sum(1 for p in range(count) if p not in snap.muted and manager.leader(topic, p) not in bad)
            if left * 2 < count:
                # Never more than half of the topic muted (nowhere else to go counts too): the task waits, as a
                # plain flush would. Seen without this rule: broker 2 stalled and muted, the remaining two
                # carried everything on a loaded box, broker 1's last messages trailed broker 3's by 1 s, and
                # the hedge muted broker 1 too -- a healthy broker, and all rows crowded onto broker 3.
                continue
            for p in range(count):
                leader = manager.leader(topic, p)
                if leader in bad and p not in snap.muted:
                    detail: dict[str, float | int | str] = {"rule": "flush_hedge", "waited_s": after_s}
                    manager.trip(topic, p, Verdict(MuteReason.SLOW_CALL, detail))
                    muted.append(f"{topic}:{p}")
        if muted:
            log.info("flush_hedge", partitions=muted, after_s=after_s,
                     detail="the task's last messages waited on these brokers alone: muted, in-flight re-sent")
        return len(muted)

    def _answered_meanwhile(self, topic: str, bad: set[int], since: float) -> bool:
        """Whether a partition of ``topic`` led by a broker outside ``bad`` delivered something after ``since``
        (strictly: the round that first counted the waiting messages may also have counted reports that came
        before they were sent)."""
        manager = self._core.manager
        snap = manager.snapshot(topic)
        if snap is None:
            return False
        for p in range(snap.partition_count):
            at = manager.delivered_at(topic, p)
            if at is not None and at > since and manager.leader(topic, p) not in bad:
                return True
        return False

    def rescue_in_flight(self, now: float, slow_calls: float, overdue_s: float | None = None) -> int | None:
        """Take back what librdkafka holds for muted partitions, in flight included, and re-send it elsewhere;
        returns how many messages moved off a muted partition, or None when the rescue was not due.

        Due only when every message librdkafka still holds is on a muted partition (purging is producer-wide:
        the healthy partitions must have drained first, or their in-flight messages would be sent twice) and
        one of them is overdue: older than ``slow_calls`` times its topic's slow-call threshold, or sent before
        its partition was muted again after a failed probe (a probe the manager has judged, or older messages
        the partition failed to deliver twice: waiting longer for them only holds the caller), each such topic
        rerouting keyed messages (``rescue.enabled`` and ``keyed_policy: reroute``) and having a writable
        partition. The stalled broker may still write the originals: only a writer whose rows can be told
        apart (the sink's identity headers) may ask for this. Never for an idempotent or transactional
        producer (see the module docstring). A copy that gets stuck again may be rescued again by a later
        call; the caller bounds how often.
        """
        if self.idempotent:
            self._say_skipped()
            return None
        with self._core.lock:  # a cheap look first: the sink asks every few hundred ms while it flushes
            if not self._all_stuck_on_muted(now, slow_calls, overdue_s):
                return None
        moved: Moves = {}
        self.serving.quiesce()
        try:
            with self._core.lock:  # checked again and purged under one hold of the lock: nothing sent in between
                if not self._all_stuck_on_muted(now, slow_calls, overdue_s):
                    return None
                batch = self._purge_and_redispatch(moved, in_flight=True)
        finally:
            self.serving.resume()
        count = sum(sum(t.values()) for t in moved.values())
        log.info(
            "rescue_in_flight", purged=len(batch), moved=count,
            partitions=sorted(f"{topic}:{partition}" for topic, partition in moved),
        )
        return count

    def _all_stuck_on_muted(self, now: float, slow_calls: float, overdue_s: float | None = None) -> bool:
        core = self._core
        tracker = core.tracker
        total = tracker.total
        if total <= 0:
            return False
        on_muted = 0
        overdue = False
        remuted: dict[tuple[str, int], float] | None = None
        for topic, tally in tracker.topics.items():
            snap = core.manager.snapshot(topic)
            for p in range(tally.count):
                n = tally.sent[p] - tally.reported[p]
                if n <= 0:
                    continue
                if snap is None or p not in snap.muted:
                    return False  # a partition that is not muted still has messages to deliver: let it
                policy = core.policy_for(topic)
                if not (_reroutes(policy) and snap.writable):
                    return False  # its messages would go back where they are (or into a hold): no use
                on_muted += n
                if overdue:
                    continue
                age = tracker.load(topic, p, now).oldest_age_s
                if age is None:
                    continue
                if age > (slow_calls * runtime_of(policy).slow_threshold_s if overdue_s is None else overdue_s):
                    overdue = True
                    continue
                if remuted is None:
                    remuted = self._remuted_at()
                at = remuted.get((topic, p))
                overdue = at is not None and age >= now - at
        # Messages librdkafka partitions itself (sent before the topic's metadata) are in no partition's count:
        # where they wait is unknown, so nothing is purged while there are any.
        return overdue and on_muted == total

    def _remuted_at(self) -> dict[tuple[str, int], float]:
        """When each partition whose latest mute event is a re-mute (a failed probe) was re-muted."""
        latest: dict[tuple[str, int], float] = {}
        seen: set[tuple[str, int]] = set()
        for event in reversed(self._core.manager.events):
            key = (event.topic, event.partition)
            if key in seen:
                continue
            seen.add(key)
            if event.kind == "remute":
                latest[key] = event.at
        return latest

    def _purge_and_redispatch(self, moved: Moves, *, in_flight: bool = False) -> list[Any]:
        core = self._core
        with core.lock:
            # Between a purge report (its message no longer counted as outstanding) and the message's re-send, it
            # is only here: len() must not reach 0 meanwhile, or a flush() on another thread (the C path's does
            # not take the lock) returns before its callbacks ran.
            self.in_hand = 1
            one_step: dict[tuple[str, int, int], int] = {}  # (topic, origin, target) -> messages moved in one step
            try:
                self.rescuing = True
                self.batch = []
                self.rescue_purge_at = core.clock()
                if core.fast is not None:
                    core.fast.purge_sink = self.batch  # the C reporters append fast-path messages themselves
                try:
                    core.inner.purge(in_queue=True, in_flight=in_flight, blocking=True)
                    # drain until librdkafka has had a moment with nothing more to report (a report still on its
                    # way when the drain ends would be re-sent late, behind newer messages)
                    while core.inner.poll(_RESCUE_DRAIN_S) > 0:
                        pass
                finally:
                    self.rescuing = False
                    if core.fast is not None:
                        core.fast.purge_sink = None
                batch, self.batch = in_enqueue_order(self.batch), []
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
                        # in one saturated run): sent on in one step, where redispatch + _move cost ~8 us a message
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

    def _count_one_step(self, steps: dict[tuple[str, int, int], int], moved: Moves) -> None:
        """Count the messages the rescue moved in one step, per (topic, origin, target) rather than per message
        (the counters' attribute hook and two dict updates a message were ~1.5 us of a keyed stall's ~15)."""
        for (topic, before, target), n in steps.items():
            self._count_move(topic, before, target, "muted", n)
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
            core.manager.probe_result(topic, current, False)
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
            self._move(cb, msg, target, "muted")
            return target
        keyed = policy.keyed_policy
        if keyed == KeyedPolicy.HOLD:
            held_back.setdefault((topic, home), []).append(OutMessage.from_report(msg, cb, purged=True))
            return None
        if keyed == KeyedPolicy.REROUTE and policy.rescue.enabled:
            target = router.reroute(key, home, snap)
            if target is not None:
                self._move(cb, msg, target, "muted")
                return target
        if keyed == KeyedPolicy.FAIL:
            core.counters.muted_fail += 1
            error = KafkaError(KafkaError._STATE, f"mutepro: {topic}[{current}] was muted; keyed_policy=fail")
            core.fail(OutMessage.from_report(msg, cb), error, current)
            return None
        self._resend(OutMessage.from_report(msg, cb), current, kind)
        return current

    def _move(self, cb: DeliveryCallback | None, msg: Message, target: int, why: str) -> None:
        """Re-send a reported (purged or timed-out) message to ``target``, marked with the rescue header."""
        topic, origin = topic_of(msg), partition_of(msg)
        headers = msg.headers()
        header = self._core.policy_for(topic).rescue.header
        if header:
            headers = with_header(headers, header, str(origin).encode())
        self._count_move(topic, origin, target, why)
        self._resend(OutMessage.from_report(msg, cb, headers=headers), target, RESCUED)

    def _count_move(self, topic: str, origin: int, target: int, why: str, n: int = 1) -> None:
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
    the report before it). Stable: equal times keep report order."""
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


def _reroutes(policy: TopicPolicy) -> bool:
    """Whether a topic's stuck messages may be re-sent elsewhere: rescue on, keyed messages rerouted too."""
    return policy.rescue.enabled and policy.keyed_policy == KeyedPolicy.REROUTE
