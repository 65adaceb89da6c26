"""Rescue: when partitions are muted, take their queued messages back from librdkafka and send them on again
(:class:`Rescuer`, what the producer, its driver thread and its report handler call). The work is split by job:
purge, drain and redispatch in :mod:`~mutepro.producer.redispatch`; the re-send of a message that timed out on a
partition (``rescue.enabled``) in :mod:`~mutepro.producer.timeouts`; the Spark sink's end-of-task hedge and the
rescue of messages already *in flight* to a muted partition in :mod:`~mutepro.producer.inflight`. This module
keeps when a newly muted partition's queue is worth a rescue (:meth:`Rescuer.due`) and runs it.

Idempotent and transactional producers are never purged: librdkafka numbers a partition's messages when they are
queued, so a purge leaves a gap in the sequence, the broker answers OUT_OF_ORDER_SEQUENCE_NUMBER, librdkafka bumps
the epoch and can no longer rule out duplicates (keys came out of order on the real cluster).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from confluent_kafka import Message

from mutepro.logs import get_logger
from mutepro.producer.core import Core
from mutepro.producer.holds import HoldKey, HoldQueues
from mutepro.producer.inflight import InFlightWatch
from mutepro.producer.message import DeliveryCallback, OutMessage
from mutepro.producer.redispatch import Moves, Redispatcher
from mutepro.producer.routing import Router
from mutepro.producer.timeouts import TimeoutResender

log = get_logger("mutepro.producer")


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
    """The rescues of one producer (see the module docstring)."""

    def __init__(self, core: Core, router: Router, holds: HoldQueues, *, idempotent: bool, transactional: bool) -> None:
        self._core = core
        self._holds = holds
        self.idempotent = idempotent
        self.transactional = transactional
        self._redispatcher = Redispatcher(core, router, holds)
        self._timeouts = TimeoutResender(core, router, self._redispatcher, idempotent=idempotent)
        self._in_flight = InFlightWatch(core, idempotent=idempotent)
        self._skip_logged = False
        # how reports are served: a rescue keeps other threads out of librdkafka's poll while it collects its purge
        self.serving: Quiescing = _Unwired()
        # Whose purge a purge report belongs to: the application's (report it) or our rescue's (re-send it).
        # A report outside a rescue belongs to whichever purged last.
        self.user_purge_at = float("-inf")
        self.stragglers = 0  # purge reports of a rescue that reached us after it (see on_purged)
        # newly muted partitions whose queue a rescue may take back, (topic, partition) -> (when muted, the
        # application's BufferError count then) (see due())
        self.pending: dict[tuple[str, int], tuple[float, int]] = {}

    @property
    def in_hand(self) -> int:
        """> 0 while a rescue holds messages taken back from librdkafka (see ``len()`` of MuteProducer)."""
        return self._redispatcher.in_hand

    @property
    def moves(self) -> dict[tuple[str, int, str], dict[int, int]]:
        """Messages moved by rescues since the driver's last tick, (topic, origin, why) -> {target: count}."""
        return self._redispatcher.moves

    @moves.setter
    def moves(self, value: dict[tuple[str, int, str], dict[int, int]]) -> None:
        self._redispatcher.moves = value  # the driver takes the aggregate once per tick

    # -- purge reports (report handler) ----------------------------------------------------------------

    def on_purged(self, cb: DeliveryCallback | None, kind: int, msg: Message) -> bool:
        """A purge report outside a rescue's collection: True when it is a straggler of our rescue (re-sent),
        False when the application's. (While a rescue collects, every purge report goes to its ``purge_sink`` in C,
        ``_fastpath.c`` ``purge_report``: every message is sent through ``FastPath.send`` with a C reporter.)"""
        if self._redispatcher.rescue_purge_at > self.user_purge_at:
            # A straggler of our rescue (served on another thread after the rescue ran): re-sent on its own.
            self.stragglers += 1
            with self._core.lock:
                held_back: dict[HoldKey, list[OutMessage]] = {}
                self._redispatcher.redispatch(cb, kind, msg, held_back)
                self._holds.put_front(held_back, straggler=True)
            return True
        return False

    def may_rescue(self, kind: int, msg: Message) -> bool:
        """Whether a message that timed out may be re-sent (see :meth:`TimeoutResender.may_rescue
        <mutepro.producer.timeouts.TimeoutResender.may_rescue>`)."""
        return self._timeouts.may_rescue(kind, msg)

    def rescue_timed_out(self, cb: DeliveryCallback | None, msg: Message) -> None:
        """Re-send a timed-out message to a writable partition other than its own, if there is one."""
        self._timeouts.rescue_timed_out(cb, msg)

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
            batch = self._redispatcher.purge_and_redispatch(moved)
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
    def mute_stragglers(self, now: float, after_s: float) -> int:
        """The sink's hedge at the end of a task (see :meth:`InFlightWatch.mute_stragglers
        <mutepro.producer.inflight.InFlightWatch.mute_stragglers>`); returns how many partitions it muted."""
        return self._in_flight.mute_stragglers(now, after_s)

    def rescue_in_flight(self, now: float, slow_calls: float, overdue_s: float | None = None) -> int | None:
        """Take back what librdkafka holds for muted partitions, in flight included, and re-send it elsewhere;
        returns how many messages moved off a muted partition, or None when the rescue was not due.

        Due only when every message librdkafka still holds is on a muted partition (purging is producer-wide:
        the healthy partitions must have drained first, or their in-flight messages would be sent twice) and
        one of them is overdue: older than ``slow_calls`` times its topic's slow-call threshold, or sent before
        its partition was muted again after a failed probe (a probe the manager has judged, or older messages
        the partition failed to deliver twice: waiting longer for them only holds the caller), each such topic
        rerouting keyed messages (``rescue.enabled`` and ``keyed_policy: reroute``) and having a writable
        partition. The leaders of the stuck partitions have their other partitions muted first
        (:meth:`InFlightWatch.mute_leaders <mutepro.producer.inflight.InFlightWatch.mute_leaders>`): the copies
        must not wait on the same broker again. The stalled broker may still write the originals: only a writer
        whose rows can be told apart (the sink's identity headers) may ask for this. Never for an idempotent or
        transactional producer (see the module docstring). A copy that gets stuck again may be rescued again by
        a later call; the caller bounds how often.
        """
        if self.idempotent:
            self._say_skipped()
            return None
        with self._core.lock:  # a cheap look first: the sink asks every few hundred ms while it flushes
            if not self._in_flight.all_stuck_on_muted(now, slow_calls, overdue_s):
                return None
            leaders = self._in_flight.stuck_leaders()
        # what is taken back from a leader's partitions goes to other brokers, not to its neighbours
        self._in_flight.mute_leaders(leaders, {"rule": "in_flight_rescue"})
        moved: Moves = {}
        self.serving.quiesce()
        try:
            with self._core.lock:  # checked again and purged under one hold of the lock: nothing sent in between
                if not self._in_flight.all_stuck_on_muted(now, slow_calls, overdue_s):
                    return None
                batch = self._redispatcher.purge_and_redispatch(moved, in_flight=True)
        finally:
            self.serving.resume()
        count = sum(sum(t.values()) for t in moved.values())
        log.info(
            "rescue_in_flight", purged=len(batch), moved=count,
            partitions=sorted(f"{topic}:{partition}" for topic, partition in moved),
        )
        return count
