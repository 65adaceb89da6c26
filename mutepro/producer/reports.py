"""Delivery reports: what librdkafka's final report of each message does -- count it for its partition's
detectors (success, slow, failure), answer a probe, hand a purge report to the rescue, re-send a timed-out
message, and queue the application's callback.

The common report -- a success on a warm, tracked partition -- is handled by the C reporter
(``_fastpath.c`` ``Reporter_vectorcall``); everything else comes to :meth:`ReportHandler.on_report`.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError, Message

from mutepro.detect.errors import counts_against_partition
from mutepro.producer.core import Core
from mutepro.producer.message import PROBE, UNCOUNTED, DeliveryCallback, topic_of
from mutepro.producer.redispatch import note_placed
from mutepro.producer.rescue import Rescuer

#: Final errors after which an unkeyed (or keyed ``reroute``) message is re-sent to another partition.
_RESCUABLE = frozenset({KafkaError._MSG_TIMED_OUT, KafkaError._TIMED_OUT})
_PURGED = frozenset({KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT})


class ReportHandler:
    """Handles the delivery reports of one producer."""

    def __init__(self, core: Core, rescuer: Rescuer) -> None:
        self._core = core
        self._rescuer = rescuer

    def on_report(self, cb: DeliveryCallback | None, kind: int, err: KafkaError | None, msg: Message) -> None:
        """A report the C reporter did not finish (probes, uncounted and failed messages, cold partitions), or
        one of a message Python sent. Reports are not served under the producer lock: this takes it."""
        with self._core.lock:
            self._on_report_locked(cb, kind, err, msg)

    def _on_report_locked(self, cb: DeliveryCallback | None, kind: int, err: KafkaError | None, msg: Message) -> None:
        core = self._core
        core.totals.reported_total += 1
        tally = None
        p = -1
        note_placed(core, kind, msg)
        if not kind & UNCOUNTED:
            tally = core.tracker.topics.get(msg.topic())  # type: ignore[arg-type]  # a report always has a topic
            p = msg.partition()  # type: ignore[assignment]
            if tally is not None:
                tally.reported[p] += 1
        elif err is None and msg.topic() not in core.tracker.topics:
            early = msg.partition()
            if early is not None and early >= 0:
                core.early_delivered.setdefault(msg.topic(), set()).add(early)  # type: ignore[arg-type]
        if err is None:
            core.totals.delivered += 1
            # A counted success reaches Python only as a probe's (the C reporter judges the others: warm-up,
            # ok, slow): its breaker is answered here.
            if tally is not None and kind & PROBE:
                core.manager.probes.probe_result(topic_of(msg), p, True, msg.latency() or 0.0)
            if cb is not None and not core.only_errors:
                core.callbacks.put_report(cb, msg)
            else:
                core.callbacks.wake()  # flush() may be waiting for the count to reach zero
            return
        self._on_error_report(cb, kind, err, msg, tally, p)

    def _on_error_report(
        self, cb: DeliveryCallback | None, kind: int, err: KafkaError, msg: Message, tally: Any, p: int
    ) -> None:
        core = self._core
        code = err.code()
        if code in _PURGED:
            if self._rescuer.on_purged(cb, kind, msg):
                return
        else:
            if not counts_against_partition(code):
                # the message's or the application's error (too large, invalid, not authorized, ...): the broker
                # answered, so a probe shows a responsive partition; nothing is judged against it
                if kind & PROBE:
                    core.manager.probes.probe_result(topic_of(msg), p, True)
            elif kind & PROBE:
                core.manager.probes.probe_result(topic_of(msg), p, False)
            elif tally is not None:
                tally.failed[p] += 1
            if code in _RESCUABLE and self._rescuer.may_rescue(kind, msg):
                with core.lock:
                    self._rescuer.rescue_timed_out(cb, msg)
                return
        core.counters.failed += 1
        if cb is not None:
            core.callbacks.put(cb, err, msg)
        else:
            core.callbacks.wake()
