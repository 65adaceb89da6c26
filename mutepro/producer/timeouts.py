"""The re-send of a message that timed out on its partition (``rescue.enabled``): to a writable partition other
than its own, marked with the rescue header, when its kind and the topic's policy allow it."""

from __future__ import annotations

from confluent_kafka import KafkaError, Message

from mutepro.policy.schema import KeyedPolicy
from mutepro.producer.core import Core
from mutepro.producer.message import EXPLICIT, RESCUED, DeliveryCallback, partition_of, topic_of
from mutepro.producer.redispatch import Redispatcher
from mutepro.producer.routing import Router


class TimeoutResender:
    """Re-sends timed-out messages for one producer (see the module docstring)."""

    def __init__(self, core: Core, router: Router, redispatcher: Redispatcher, *, idempotent: bool) -> None:
        self._core = core
        self._router = router
        self._redispatcher = redispatcher
        self._idempotent = idempotent

    def may_rescue(self, kind: int, msg: Message) -> bool:
        """Whether a message that timed out may be re-sent to another partition.

        Never for an idempotent (or transactional) producer: a message that timed out in flight may have been
        written, and re-sending it would give the duplicate those producers are configured to rule out (the soak
        saw 2 in 72,000 per acks=all producer before this rule). The plain client reports the timeout, and so
        does mutepro there."""
        if kind & (EXPLICIT | RESCUED) or self._idempotent:
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
        self._redispatcher.move(cb, msg, target, "timeout")
