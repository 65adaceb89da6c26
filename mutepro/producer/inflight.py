"""The Spark sink's end of task: the hedge that mutes the brokers its last messages wait on
(:meth:`InFlightWatch.mute_stragglers`), and when the rescue of messages already *in flight* to muted partitions
is due (:meth:`InFlightWatch.all_stuck_on_muted`; the rescue itself is :meth:`Rescuer.rescue_in_flight
<mutepro.producer.rescue.Rescuer.rescue_in_flight>`). Only for producers whose rows can be told apart (the sink's
identity headers): what is in flight is re-sent, and the stalled broker may still write the originals."""

from __future__ import annotations

import math

from mutepro.detect.model import MuteReason, Verdict
from mutepro.logs import get_logger
from mutepro.policy.runtime import runtime_of
from mutepro.policy.schema import KeyedPolicy, TopicPolicy
from mutepro.producer.core import Core

log = get_logger("mutepro.producer")


class InFlightWatch:
    """Judges the in-flight messages of one producer at the end of a sink task (see the module docstring)."""

    def __init__(self, core: Core, *, idempotent: bool) -> None:
        self._core = core
        self._idempotent = idempotent

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
        if self._idempotent:
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
        muted = self.mute_leaders(leaders, {"rule": "flush_hedge", "waited_s": after_s})
        if muted:
            log.info("flush_hedge", partitions=muted, after_s=after_s,
                     detail="the task's last messages waited on these brokers alone: muted, in-flight re-sent")
        return len(muted)

    def mute_leaders(self, leaders: dict[str, set[int]], detail: dict[str, float | int | str]) -> list[str]:
        """Mute every partition of ``topic`` led by a broker in ``leaders[topic]`` (a slow-call verdict with
        ``detail``), unless fewer than half of the topic's partitions would stay writable; returns the partitions
        muted now ("topic:p"). Why whole leaders: what is taken back from one of a leader's partitions must not
        be re-sent to its neighbour, which waits on the same broker (the sink's rows rescued from a stalled
        broker's partition 5 went to its partition 0 and waited there another 5 s)."""
        manager = self._core.manager
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
                if manager.leader(topic, p) in bad and p not in snap.muted:
                    manager.trip(topic, p, Verdict(MuteReason.SLOW_CALL, dict(detail)))
                    muted.append(f"{topic}:{p}")
        return muted

    def stuck_leaders(self) -> dict[str, set[int]]:
        """The leaders of the muted partitions that hold messages, per topic; producer lock held."""
        core = self._core
        leaders: dict[str, set[int]] = {}
        for topic, tally in core.tracker.topics.items():
            snap = core.manager.snapshot(topic)
            if snap is None:
                continue
            for p in range(tally.count):
                if tally.sent[p] > tally.reported[p] and p in snap.muted:
                    leader = core.manager.leader(topic, p)
                    if leader >= 0:
                        leaders.setdefault(topic, set()).add(leader)
        return leaders

    def all_stuck_on_muted(self, now: float, slow_calls: float, overdue_s: float | None = None) -> bool:
        """Whether an in-flight rescue is due (see :meth:`Rescuer.rescue_in_flight
        <mutepro.producer.rescue.Rescuer.rescue_in_flight>`); producer lock held."""
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


def _reroutes(policy: TopicPolicy) -> bool:
    """Whether a topic's stuck messages may be re-sent elsewhere: rescue on, keyed messages rerouted too."""
    return policy.rescue.enabled and policy.keyed_policy == KeyedPolicy.REROUTE
