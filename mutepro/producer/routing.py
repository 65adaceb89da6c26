"""Routing: where a message without an explicit partition goes, as a :class:`Decision` (no side effects but the
probe grant it is handed).

:func:`decide_keyed` is the keyed policy itself -- a message, its home partition, the topic's snapshot and policy,
and whether the home may take a probe -> dispatch to partition N | hold | fail with an error.
:class:`Router` adds the partitioner's choice in front of it. The caller (MuteProducer) carries the decision out.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, NamedTuple

from confluent_kafka import KafkaError

from mutepro.partition.protocols import MutingPartitioner
from mutepro.partition.reroute import reroute_partition
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.schema import KeyedPolicy
from mutepro.producer.message import NORMAL, PROBE, UNCOUNTED
from mutepro.producer.tracker import UNASSIGNED

#: ``grant(topic, partition)``: True when the (half-open) partition may take one probe now (and takes it).
ProbeGrant = Callable[[str, int], bool]
#: ``probing(topic)``: the topic's half-open partitions, in the order probes are offered.
Probing = Callable[[str], Any]
HomeOf = Callable[[Any, int], int | None]


class Action(enum.Enum):
    DISPATCH = "dispatch"
    HOLD = "hold"
    FAIL = "fail"


class Decision(NamedTuple):
    """What to do with one message: ``DISPATCH`` to ``partition`` (report ``kind``), ``HOLD`` behind ``partition``
    (its home) or ``FAIL`` with ``error``. ``rerouted_from`` is the muted home a keyed message was moved away from
    (-1: none)."""

    action: Action
    partition: int
    kind: int = NORMAL
    error: KafkaError | None = None
    rerouted_from: int = -1


def muted_error(topic: str, home: int, reason: str | None) -> KafkaError:
    """The final error of a keyed message whose home is muted under ``keyed_policy: fail``."""
    return KafkaError(
        KafkaError._STATE, f"mutepro: {topic}[{home}] is muted ({reason or 'muted'}); keyed_policy=fail",
        retriable=True,
    )


def decide_keyed(
    topic: str, key: Any, home: int, snap: TopicSnapshot, policy: KeyedPolicy, *, held_before: bool,
    outstanding: int, probing: Probing, grant: ProbeGrant, reason: Callable[[], str | None],
) -> Decision:
    """The keyed policy for a message whose home partition is ``home``.

    ``held_before``: older messages of the home are held (this one queues behind them, so keys keep their order);
    ``outstanding``: messages of the home still in librdkafka (``hold`` waits for them: anything sent now, a probe
    too, could be written before them once librdkafka retries them).
    """
    if held_before:
        return Decision(Action.HOLD, home)
    if home not in snap.muted:
        return Decision(Action.DISPATCH, home)
    if policy == KeyedPolicy.HOLD and outstanding:
        return Decision(Action.HOLD, home)
    # Every policy probes, reroute included: a half-open partition only closes on probe results, and a producer
    # with keyed traffic only (a Spark job writing keyed rows) has no unkeyed message to probe with, so without
    # this its muted partitions never came back (the demo: "not within the run", 0 probes sent).
    if home in probing(topic) and grant(topic, home):
        return Decision(Action.DISPATCH, home, PROBE)
    if policy == KeyedPolicy.HOLD:
        return Decision(Action.HOLD, home)
    if policy == KeyedPolicy.REROUTE:
        target = reroute_partition(key, home, snap)
        if target is None:
            return Decision(Action.DISPATCH, home)  # nothing writable
        return Decision(Action.DISPATCH, target, rerouted_from=home)
    if policy == KeyedPolicy.FAIL:
        return Decision(Action.FAIL, home, error=muted_error(topic, home, reason()))
    return Decision(Action.DISPATCH, home)  # ignore


class Router:
    """The partitioner's choice plus the keyed policy, for messages without an explicit partition."""

    __slots__ = ("_home_of", "_partitioner", "_probing", "_reason", "_sticky", "grant", "keyed_policy")

    def __init__(
        self, partitioner: MutingPartitioner, home_of: HomeOf | None, sticky: Any, *, probing: Probing,
        grant: ProbeGrant, keyed_policy: Callable[[str], KeyedPolicy], reason: Callable[[str, int], str | None],
    ) -> None:
        self._partitioner = partitioner
        self._home_of = home_of
        self._sticky = sticky  # the built-in sticky chooser where librdkafka spreads NULL keys (else None)
        self._probing = probing
        self.grant = grant
        self.keyed_policy = keyed_policy
        self._reason = reason

    def home(self, key: Any, partition_count: int) -> int | None:
        """The key's home partition under the built-in partitioner (None: a custom partitioner, or no key)."""
        return self._home_of(key, partition_count) if (key is not None and self._home_of is not None) else None

    def pick(self, topic: str, key: Any, size: int, snap: TopicSnapshot) -> int | None:
        """The partitioner's own choice for a message (muted partitions avoided by it)."""
        return self._partitioner.partition(topic, key, size, snap)

    def reroute(self, key: Any, home: int, snap: TopicSnapshot) -> int | None:
        """Where a keyed message of muted ``home`` goes under ``keyed_policy: reroute`` (None: nothing writable)."""
        return reroute_partition(key, home, snap)

    def route(
        self, topic: str, key: Any, size: int, snap: TopicSnapshot, *, holding: bool,
        held_before: Callable[[str, int], bool], outstanding: Callable[[str, int], int], stick: Any = None,
    ) -> Decision:
        """Where a message goes. ``holding``: any partition holds messages; ``held_before(topic, p)``: partition
        p does; ``outstanding(topic, p)``: p's messages still in librdkafka; ``stick``: the topic's ``Tally``,
        whose sticky partition the C fast path shares (None: the chooser's own)."""
        if key is None and self._sticky is not None:
            partition = self._sticky.choose(snap, size, stick)  # the common unkeyed case, in one call
        else:
            home = self._home_of(key, snap.partition_count) if self._home_of is not None else None
            if home is not None:
                if not snap.muted and not holding:
                    return Decision(Action.DISPATCH, home)
                return self._keyed(topic, key, home, snap, held_before, outstanding)
            partition = self._partitioner.partition(topic, key, size, snap)
            if partition is not None and partition >= 0 and key is not None and partition in snap.muted:
                # a custom partitioner chose a muted home for a keyed message: the keyed policy applies
                return self._keyed(topic, key, partition, snap, held_before, outstanding)
        if snap.muted:
            # Probes first, also (above all) when nothing is writable: otherwise half-open partitions would
            # never get the messages that can close them.
            for candidate in self._probing(topic):
                if self.grant(topic, candidate):
                    return Decision(Action.DISPATCH, candidate, PROBE)
        if partition is None or partition < 0:
            return Decision(Action.DISPATCH, UNASSIGNED, UNCOUNTED)  # nothing writable
        return Decision(Action.DISPATCH, partition)

    def _keyed(
        self, topic: str, key: Any, home: int, snap: TopicSnapshot, held_before: Callable[[str, int], bool],
        outstanding: Callable[[str, int], int],
    ) -> Decision:
        held = held_before(topic, home)
        policy = self.keyed_policy(topic) if not held and home in snap.muted else KeyedPolicy.IGNORE
        return decide_keyed(
            topic, key, home, snap, policy, held_before=held,
            outstanding=outstanding(topic, home) if policy == KeyedPolicy.HOLD else 0,
            probing=self._probing, grant=self.grant, reason=lambda: self._reason(topic, home),
        )
