"""What a round says about brokers: the broker rule (:class:`BrokerJudge`), its input per leader -- the partitions
muted by their own evidence and the partitions written to -- and which broker a waiting partition's messages wait
on.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Mapping

from mutepro.detect.broker import BrokerDetector
from mutepro.detect.model import MuteReason, Verdict
from mutepro.detect.stats import StatsSnapshot
from mutepro.logs import get_logger
from mutepro.mute.answered import last_delivery_by_leader
from mutepro.mute.events import plain_fields
from mutepro.mute.records import Candidate, TopicRecord
from mutepro.mute.transitions import BreakerState
from mutepro.policy.schema import BrokerConfig

log = get_logger("mutepro.producer")


class BrokerJudge:
    """The broker rule of each round: which brokers are bad (:class:`~mutepro.detect.broker.BrokerDetector`, off
    when ``config.enabled`` is false), and which of their closed partitions that mutes. :attr:`verdicts` holds the
    last round's bad brokers."""

    def __init__(self, config: BrokerConfig) -> None:
        self._detector = (
            BrokerDetector(
                config.min_bad_partitions, config.latency_factor, config.min_latency_ms,
                down_grace_s=config.down_grace_ms / 1000.0, latency_snapshots=config.latency_snapshots,
                latency_hold_s=config.latency_hold_ms / 1000.0, latency_max_hold_s=config.latency_max_hold_ms / 1000.0,
                min_bad_pct=config.min_bad_pct,
            )
            if config.enabled
            else None
        )
        self._verdicts: dict[int, Verdict] = {}

    @property
    def verdicts(self) -> Mapping[int, Verdict]:
        """Broker id -> the verdict that made it bad in the last round."""
        return self._verdicts

    def judge(self, topics: Collection[TopicRecord], stats: StatsSnapshot | None, now: float) -> Iterator[Candidate]:
        """The partitions the round's broker verdicts mute, one at a time: the caller trips each before the next
        is looked at (a generator, so a broker's partitions are judged after the ones before them were tripped,
        and its log line comes before its partitions' mutes)."""
        if self._detector is None:
            return
        bad = own_evidence_by_leader(topics)
        shown = shown_by_leader(topics, bad, now) if bad else None  # only the bad ones' share needs it
        verdicts = self._detector.evaluate(stats, bad, now, shown)
        for broker, verdict in verdicts.items():
            if broker not in self._verdicts:
                log.warning("broker_muted", broker=broker, reason=verdict.describe(), **plain_fields(verdict.detail))
            causes = str(verdict.detail.get("cause", "")).split(",")
            only_counts = causes == ["bad_partitions"]
            # A partition that passed its probes after every piece of evidence a broker verdict rests on is fresher
            # evidence than the verdict: its neighbours' state (counts, taken as at most breaker.retry_interval_ms
            # old) or librdkafka's statistics emission (a latency verdict is given every round from the last
            # emission, and held from it for latency_hold_ms once the broker is muted and has no round trips to
            # measure); a broker down now is never outweighed. Without it a limp over 300 partitions let its last
            # partitions go 9.3 s after the fault: they passed their probes after it ended, and the verdict from
            # its last slow emission muted each again for another 4 s of backoff (trace limp_300p_saturated).
            for t in topics:
                evidence: list[float] = []
                if "bad_partitions" in causes:
                    evidence.append(now - t.runtime.retry_interval_s)
                if "latency" in causes:
                    evidence.append(now - float(verdict.detail.get("evidence_age_s", 0.0)))
                if "down" in causes:
                    evidence.append(now)
                evidence_at = max(evidence, default=now)
                for part in t.partitions.values():
                    if part.leader != broker or part.breaker.state is not BreakerState.CLOSED:
                        continue
                    if part.closed_at is not None and part.closed_at > evidence_at:
                        continue  # it passed its probes since: direct evidence beats an inference
                    if not only_counts and t.waiting is not None and part.partition not in t.waiting:
                        # a broker slow or down by its statistics: only the partitions whose own messages wait
                        # beyond normal are its doing (an overloaded cluster's slow rtt mutes nothing)
                        continue
                    yield t, part, verdict
        for broker in set(self._verdicts) - set(verdicts):
            log.info("broker_unmuted", broker=broker)
        self._verdicts = verdicts


def own_evidence_by_leader(topics: Iterable[TopicRecord]) -> dict[int, int]:
    """Per leader, how many of its partitions are muted by their *own* detectors against it (the broker rule's
    input): those whose messages waited on a follower count against no broker (:func:`blamed_broker`).

    Half-open ones are on probation, and ones muted because of the broker verdict itself would make the verdict
    self-sustaining: after a limp, two groups of its partitions probing at different times would keep re-muting
    each other forever.
    """
    bad: dict[int, int] = {}
    for t in topics:
        # after a round only its not-closed partitions can count (see TopicRecord.not_closed)
        parts = t.partitions.values() if t.not_closed is None else (t.partitions[p] for p in t.not_closed)
        for part in parts:
            reason = part.breaker.reason
            if (
                part.breaker.state is BreakerState.OPEN
                and part.leader >= 0
                and (reason is None or reason.reason != MuteReason.BROKER)
            ):
                broker = blamed_broker(reason, part.leader)
                if broker is not None:
                    bad[broker] = bad.get(broker, 0) + 1
    return bad


def shown_by_leader(topics: Iterable[TopicRecord], bad: Mapping[int, int], now: float) -> dict[int, int]:
    """Per leader, how many of its partitions count towards the broker rule's share (``min_bad_pct``): every
    partition the producer has written to (sent to, or not closed) of a broker that delivered some message
    within ``slow_call.threshold_ms`` (the topic's ``active_s``); of a *silent* broker, one that delivered none
    meanwhile, only its partitions muted by their own evidence against it (``bad``,
    :func:`own_evidence_by_leader`).

    Why: the share asks whether it is the broker or its partitions. A broker answering on other partitions is
    alive, and 2 muted of 400 written is the partitions' matter (a saturated start over 1,200 partitions had a
    few of every broker's wait past 1 s in its own queue); a broker that answers nothing is the matter itself, and
    its partitions the producer has not sent to lately cannot say otherwise. Counted over every partition ever
    written, a stall of the broker leading 111 of a topic's 300 partitions (open loop, 20,000 msg/s, sticky) was
    judged only once 28 of them were muted one by one, 3.1 s in, while the messages sent meanwhile to its other
    partitions went into the stalled broker's socket, in flight until it came back: 5,661 of them, so the p99 of
    the messages sent in the fault was the stall's length, 18.9 s (trace ``stall_300p_open``). Counted only over
    partitions that delivered lately, a broker still delivering thousands of messages a round after a limp, 4 of
    its partitions slow among the ~12 a sticky saturated loop had it deliver within the second, was muted whole:
    99 partitions (trace ``limp_300p_saturated``, the fault matrix's run).
    """
    shown = written_by_leader(topics)
    answering: set[int] = set()
    for t in topics:
        since = now - t.runtime.active_s
        answering.update(b for b, at in last_delivery_by_leader(t).items() if at >= since)
    for broker, count in bad.items():
        if broker not in answering:
            shown[broker] = count
    return shown


def written_by_leader(topics: Iterable[TopicRecord]) -> dict[int, int]:
    """Per leader, how many of its partitions this producer has written to (sent to, or not closed)."""
    written: dict[int, int] = {}
    for t in topics:
        for part in t.partitions.values():
            if part.leader >= 0 and (part.active_at is not None or part.breaker.state is not BreakerState.CLOSED):
                written[part.leader] = written.get(part.leader, 0) + 1
    return written


def acks_wait_for_isr(acks: object) -> bool:
    """Whether a producer with this ``acks`` (or ``request.required.acks``) setting waits for every in-sync
    replica: ``all`` / ``-1``, and librdkafka's default (``None``: not set); not ``1`` or ``0``."""
    return acks is None or str(acks).strip().lower() in ("all", "-1")


def waits_for_others(t: TopicRecord, partition: int) -> bool:
    """Whether a write to ``partition`` may wait on a broker other than its leader: acks=all and another
    replica in sync (as the last metadata listed them; all replicas when none is known)."""
    if not t.acks_all:
        return False
    part = t.partitions.get(partition)
    leader = part.leader if part is not None else -1
    in_sync = t.isrs.get(partition) or t.replicas.get(partition) or ()
    return any(b != leader for b in in_sync)


def waits_on(
    t: TopicRecord, partition: int, waiting: Collection[int], active: Collection[int],
    since: float | None = None, last: Mapping[int, float] | None = None,
) -> tuple[str, int]:
    """Which broker a waiting partition's messages wait on, and as what (``"leader"`` or ``"replica"``).

    The candidates are the brokers its acks wait for: its in-sync replicas as the last metadata listed them
    (``TopicRecord.isrs``; all its replicas when none is known), the leader always among them. Of those, a
    broker that delivered something as a leader after ``since`` (the partition's oldest undelivered message was
    sent; ``last``: :func:`mutepro.mute.answered.last_delivery_by_leader`) is answering and is not the one
    holding it up, unless every candidate did. Of the rest, the one whose active partitions are most often
    waiting now (ties: the leader, else the first listed). With acks=all a stopped follower holds up every
    partition it replicates; the broker they have in common, and the one not answering, is the cause.

    Worked numbers, 5 brokers, RF 3, broker 4 stopped as a follower: the 12 partitions with a replica on broker 4
    wait, the other 8 do not; a waiting partition led by broker 1 with replicas (1, 4, 5) has broker 1 at 4 of
    its 12 active partitions waiting, broker 4 at 12 of 12, broker 5 at 7 of 12: it waits on broker 4, a replica
    (and brokers 1 and 5 delivered other partitions meanwhile: they are not candidates at all). RF 3 on 3
    brokers, broker 2 stalled: every partition has every broker as a replica and waits; once broker 1 drops it
    from its ISRs and delivers again, a partition broker 2 leads still waits, and of its replicas only broker 2
    (and broker 3, writing nothing) did not answer: it waits on broker 2, its leader. Without replicas known (or
    RF 1) it is its leader.
    """
    leader = t.partitions[partition].leader
    if not t.acks_all:
        return "leader", leader  # acks=1 or 0: a write waits for its leader alone
    replicas = t.replicas.get(partition) or (leader,)
    isr = t.isrs.get(partition)
    candidates = [b for b in replicas if not isr or b in isr or b == leader]
    if since is not None and last is not None:
        silent = [b for b in candidates if not last.get(b, -math.inf) > since]
        candidates = silent or candidates
    best, best_share = candidates[0], -1.0
    for broker in candidates:
        mine = [q for q in active if broker in (t.replicas.get(q) or (t.partitions[q].leader,))]
        share = sum(1 for q in mine if q in waiting) / len(mine) if mine else 0.0
        if share > best_share or (share == best_share and broker == leader):
            best, best_share = broker, share
    return ("leader" if best == leader else "replica"), best


def blamed_broker(verdict: Verdict | None, leader: int) -> int | None:
    """The broker a partition muted with ``verdict`` counts against in the broker rule: its leader, unless a
    slow-call verdict named a follower as what its messages waited on (``waits_on`` ``replica``): then none.

    Why none rather than the follower: the broker rule mutes the partitions a broker *leads*, and a slow
    follower says nothing certain of those (they are judged on their own waits). Counted against the follower,
    the overloaded 5-broker trace without a fault (tests/traces/overloaded_5_brokers_25k_keyed, RF 3, acks=all)
    had 10 partitions name broker 3 as the replica they waited on and broker 3's partitions muted as a whole:
    119 mutes against 81 counted by leader (97 with only its waiting partitions muted); counted against none, 80.
    And not its leader: a partition led by broker 1 that waited on its stopped follower, broker 4, is no
    evidence against broker 1.
    """
    if verdict is not None and verdict.detail.get("waits_on") == "replica":
        return None
    return leader
