"""Which detector verdicts become mutes: the topic-wide rules a single partition's detectors cannot see.

A detector judges one partition alone. Two things only the whole topic shows: whether a slow partition is an
outlier or the producer/cluster is saturated, and whether a congested partition holds more than its peers or
the buffer is simply full everywhere. These are pure functions of the topic's records, so the manager stays a
bookkeeper and the rules are unit-tested on plain values. The relative age rule is :mod:`mutepro.mute.outliers`,
what counts as a normal wait :mod:`mutepro.mute.normal`, the per-broker evidence :mod:`mutepro.mute.brokers`.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping

from mutepro.detect.model import MuteReason
from mutepro.logs import get_logger
from mutepro.mute.answered import delivered_since, drained_by_leader, drained_since, last_delivery_by_leader
from mutepro.mute.brokers import waits_for_others
from mutepro.mute.records import Candidate, TopicRecord
from mutepro.mute.transitions import BreakerState

log = get_logger("mutepro.producer")


def congestion_outliers(
    candidates: list[Candidate], outstanding: Mapping[int, int], factor: float,
    peers: Collection[int] | None = None,
) -> list[Candidate]:
    """Keep a congestion verdict only while its partition holds more than ``factor`` times the median of its
    peers' outstanding messages (``outstanding``: every closed partition's); every other verdict passes.

    The peers are the other closed partitions the producer is writing to now (``peers``: those that took a
    message within the last ``slow_call.threshold_ms``; ``None``: every closed partition), as for the age rule: a
    partition the producer sends nothing to holds nothing, and its zero says nothing about how full a fair share
    is. That matters whenever traffic goes to a subset on purpose -- rack-aware partitioning sends a saturated
    loop's whole queue to the 4 partitions led in its rack, 25 % each, against 8 idle zeros: without this every
    one of them was a 'congestion outlier' and the producer muted its own rack. With no peer at all, the share
    alone decides.

    The median, not the mean, so a stalled broker's other partitions do not hide it. Worked numbers, 12
    partitions, 50,000-message buffer, share 10 % (5,000): a closed loop filling the buffer evenly leaves the
    fullest partition at ~5,200 against ~4,100 for the others (1.3x): not muted; one CPU-starved broker's
    partitions at ~5,400 against ~2,000 elsewhere (2.7x, still draining): not muted at the default 3x. A stalled
    broker's 4 partitions at ~10,000 each against a median of ~100 for the others (3 of the 11 others are its
    own): 100x, muted -- also when it leads half the partitions.
    """
    if factor <= 1.0 or len(outstanding) <= 1:
        return candidates
    kept = []
    for cand in candidates:
        if cand[2].reason == MuteReason.CONGESTION:
            me = cand[1].partition
            others = [n for p, n in outstanding.items() if p != me and (peers is None or p in peers)]
            if others and outstanding.get(me, 0) <= factor * statistics.median(others):
                continue
        kept.append(cand)
    return kept


def without_saturation(
    t: TopicRecord, candidates: list[Candidate], ages: Mapping[int, float] | None = None, now: float | None = None,
) -> list[Candidate]:
    """Drop the slow-call verdicts when the producer or the cluster is saturated rather than a partition bad, as
    muting would only shuffle load around. Sets ``t.saturated`` and logs once per burst. Saturated is either:

    - more than half of the topic's partitions slow at once (with a slow-call verdict or muted for one), or
    - more than half of the partitions the producer writes to (``ages``: the closed partitions that took a
      message within ``slow_call.threshold_ms``, with their oldest undelivered message's age) still delivering (a report
      within as long before ``now``) but holding a message older than the slow threshold: messages waiting
      behind the producer's own backlog, not behind a stopped leader (a stopped one delivers nothing).

    Example: 12 partitions on 3 brokers, one broker stalled -> 4 slow partitions (a third), delivering nothing:
    muted. A closed loop pushing more than the cluster takes -> all 12 slow at once: none muted. With RF=3 and
    acks=all a stalled broker is in every ISR, so all 12 are slow until it leaves them
    (replica.lag.time.max.ms): none muted then either, nothing would be gained (and its own partitions, which
    waited no longer than the others meanwhile, are not muted afterwards either: mutepro.mute.normal's look back).
    Rack-aware partitioning sends a saturated loop to the 4 partitions led in its rack: they
    deliver ~30,000 messages a second each while their oldest waits ~1.5 s (acks=all, RF 3) against a 1 s
    threshold -- 4 of the 4 written to: none muted (by the first count alone, a third of 12, the producer muted
    its own rack). The same 4 partitions with their broker stopped deliver nothing: muted.
    """
    slow_now = {c[1].partition for c in candidates if c[2].reason == MuteReason.SLOW_CALL}
    if not slow_now:
        return candidates
    already = sum(
        1 for part in t.partitions.values()
        if part.breaker.state is not BreakerState.CLOSED and part.breaker.reason is not None
        and part.breaker.reason.reason == MuteReason.SLOW_CALL
    )
    slow, of = already + len(slow_now), len(t.partitions)
    saturated = 2 * slow > of and of > 1
    if not saturated and ages is not None and now is not None:
        limit = t.runtime.slow_threshold_s
        writing = slow_now | ages.keys()
        queued = {
            p for p in slow_now | {p for p, age in ages.items() if age > limit}
            if (at := t.partitions[p].delivered_at) is not None and now - at <= t.runtime.active_s
        }
        saturated = 2 * len(queued) > len(writing) and len(writing) > 1
        slow, of = len(queued), len(writing)
    if not saturated:
        t.saturated = False
        return candidates
    if not t.saturated:
        log.warning(
            "slow_calls_everywhere", topic=t.name, slow_partitions=slow, partitions=of,
            action="not muting: the producer or cluster is saturated",
        )
    t.saturated = True
    return [c for c in candidates if c[2].reason != MuteReason.SLOW_CALL]


def slow_rates_still_waiting(candidates: list[Candidate]) -> list[Candidate]:
    """Drop the slow-call *rate* verdicts of partitions that hold no message older than the threshold now: their
    slow calls are delivered history, and the partition is not waiting on its leader any more.

    Why: a saturated producer over many partitions writes each partition in rare sticky batches (1,200 partitions,
    10 ms each: one batch per partition every ~12 s). One batch of 1,954 messages that took 1.1 s behind the
    producer's own full queue filled a partition's whole window, "1,954 of 1,954 calls slow", and muted a healthy
    partition after it had delivered (11-45 mutes in half the runs at 1,200 partitions, 0.46-0.71x). A partition
    that is slow *now* still holds messages past the threshold (counted as ``stuck``): its verdict stands, and a
    stalled one is judged by the stall rule anyway. Rate verdicts from a window of independent calls (an open
    loop sending steadily to a slow partition) come with stuck messages too, since new ones keep waiting.
    """
    return [
        c for c in candidates
        if c[2].reason != MuteReason.SLOW_CALL or "slow_call_rate" not in c[2].detail or c[2].detail.get("stuck")
    ]


def cold_stalls_of_silent_leaders(t: TopicRecord, candidates: list[Candidate], now: float) -> list[Candidate]:
    """Keep the stall verdicts of partitions still in their warm-up (``cold``: their only reports so far were
    the first, unjudged ones) only where the whole leader is silent: no partition of the topic it leads delivered
    anything within the slow-call threshold.

    Why: a broker stalled right after start-up must be muted at the threshold (1 s), not after the 5 s warm-up,
    and it delivers nothing at all. A saturated producer's start over 1,200 partitions is the other case: each
    partition's second batch waited 1-2 s behind the brokers' start-up work while every broker kept delivering
    other partitions' batches; judging those partitions one by one muted 88-423 healthy partitions (broker 3's
    400 at once through the broker rule) and cost 55-70 % of the throughput. Warm partitions are judged alone:
    one partition stuck behind a slow follower while its leader serves the others is what KIP-693 is about.
    """
    cold = [c for c in candidates if c[2].reason == MuteReason.SLOW_CALL and c[2].detail.get("cold")]
    if not cold:
        return candidates
    threshold = t.runtime.slow_threshold_s
    live = {
        part.leader for part in t.partitions.values()
        if part.delivered_at is not None and now - part.delivered_at <= threshold
    }
    dropped = [c for c in cold if c[1].leader in live]
    if not dropped:
        return candidates
    log.debug(
        "cold_stalls_ignored", topic=t.name, partitions=len(dropped), leaders=sorted({c[1].leader for c in dropped}),
        reason="their leaders deliver other partitions' messages: start-up, not a stall",
    )
    gone = {id(c) for c in dropped}
    return [c for c in candidates if id(c) not in gone]


def served_elsewhere(
    t: TopicRecord, candidates: list[Candidate], held: Mapping[int, float], active: Collection[int], now: float,
) -> list[Candidate]:
    """Keep a slow-call verdict only when some broker other than the partition's leader delivered something while
    its oldest undelivered message (``held``: its age) waited: evidence that the producer could be served
    elsewhere (:mod:`mutepro.mute.answered`). Other verdicts pass. So does every verdict whose leader leads all the
    partitions the producer waits on (those holding an undelivered message, and the partitions muted by
    detection, which held them until then) and is the only broker its writes wait on (acks=1, or no other
    replica in sync): nothing else is waited on, so no other broker could answer -- a rack-aware producer writing
    only to its rack's broker, which stalls; a Spark task whose 1,000 rows all went to the stalled broker's three
    partitions (RF 1), written 0.8 s after a task whose rows broker 1 and 3 delivered. Counting the partitions
    *written to lately* instead, that earlier task's kept broker 2 from being the sole leader, and no broker
    answered meanwhile, since nothing was sent to them: the stall was muted only when its leadership moved, 15 s
    in, and the task's rows timed out at the test's ``message.timeout.ms`` of 15 s. A partition written to
    lately that holds nothing still counts as an answer (``active``, see below). With acks=all and other replicas in
    sync the sole leader's wait may be any of them: nothing says it is the leader's, and it does not stand (a
    Spark task writing one partition of an RF 3 topic, broker 2 stalled as its follower, muted the healthy
    leader 5 s in and re-sent its rows to partitions waiting on the same follower).

    Why: with RF 3 on 3 brokers and acks=all a stalled broker follows every partition and holds up every
    acks=all write until the leaders drop it from their ISRs (``replica.lag.time.max.ms``, 10 s on the local
    cluster). A producer writing two partitions lately (a Spark task's last rows), led by brokers 1 and 2 with
    broker 2 stalled, sees both wait 1 s with no delivery anywhere: both stall verdicts have no reference to be
    judged against (fewer than 3 active partitions) and, without this rule, both were muted, broker 1's a
    healthy leader's, and the broker rule followed -- mutes that move messages to partitions waiting as long.
    Here neither stands. Once the ISRs shrink (9.4 s into the recorded stall, tests/traces/
    stall_rf3_acks_all_two_partitions_20), broker 1's partition delivers again while broker 2's still waits:
    broker 1 has answered meanwhile, and broker 2's verdict stands. Broker 1's partition then drains a 9 s
    backlog of slow calls: broker 2, muted, delivered nothing since, and broker 1's is not muted. A leader stall
    with RF 1: the other two brokers deliver every round, and the verdicts stand (muted 1.06 s in).
    """
    slow = [c for c in candidates if c[2].reason == MuteReason.SLOW_CALL]
    if not slow:
        return candidates
    parts = t.partitions
    leaders = {parts[p].leader for p, age in held.items() if age > 0 and p in parts}
    for p in t.not_closed or ():
        reason = parts[p].breaker.reason
        if reason is not None and reason.reason != MuteReason.MANUAL and parts[p].forced_by is None:
            leaders.add(parts[p].leader)
    last = last_delivery_by_leader(t)
    drained = drained_by_leader(t, active, held)
    dropped: list[Candidate] = []
    for c in slow:
        leader, p = c[1].leader, c[1].partition
        if leader < 0 or (leaders <= {leader} and not waits_for_others(t, p)):
            continue  # the sole leader of what the producer waits on, and the only broker its writes wait on
        since = now - held.get(p, 0.0)
        if not (delivered_since(last, since, (leader,)) or drained_since(drained, since, (leader,))):
            dropped.append(c)
    if not dropped:
        return candidates
    log.debug(
        "slow_calls_unanswered", topic=t.name, partitions=sorted(c[1].partition for c in dropped),
        reason="no other broker delivered while they waited: nothing says another partition would serve sooner",
    )
    gone = {id(c) for c in dropped}
    return [c for c in candidates if id(c) not in gone]
