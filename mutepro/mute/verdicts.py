"""Which detector verdicts become mutes: the topic-wide rules a single partition's detectors cannot see.

A detector judges one partition alone. Two things only the whole topic shows: whether a slow partition is an
outlier or the producer/cluster is saturated, and whether a congested partition holds more than its peers or
the buffer is simply full everywhere. The broker detector likewise needs the per-leader count of partitions
muted by their own evidence. These are pure functions of the topic's records, so the manager stays a
bookkeeper and the rules are unit-tested on plain values.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from mutepro.detect.model import MuteReason, Verdict
from mutepro.detect.slow_call import COLD_START_S
from mutepro.logs import get_logger
from mutepro.mute.records import PartitionRecord, TopicRecord
from mutepro.mute.states import BreakerState

log = get_logger("mutepro.producer")

Candidate: TypeAlias = tuple[TopicRecord, PartitionRecord, Verdict]


def congestion_outliers(
    candidates: list[Candidate], outstanding: Mapping[int, int], factor: float,
    peers: Collection[int] | None = None,
) -> list[Candidate]:
    """Keep a congestion verdict only while its partition holds more than ``factor`` times the median of its
    peers' outstanding messages (``outstanding``: every closed partition's); every other verdict passes.

    The peers are the other closed partitions the producer is writing to now (``peers``: those that took a
    message within the last ``ACTIVE_S``; ``None``: every closed partition), as for the age rule: a partition
    the producer sends nothing to holds nothing, and its zero says nothing about how full a fair share is. That
    matters whenever traffic goes to a subset on purpose -- rack-aware partitioning sends a saturated loop's whole
    queue to the 4 partitions led in its rack, 25 % each, against 8 idle zeros: without this every one of them
    was a 'congestion outlier' and the producer muted its own rack. With no peer at all, the share alone decides.

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
      message within ``ACTIVE_S``, with their oldest undelivered message's age) still delivering (a report
      within ``ACTIVE_S`` before ``now``) but holding a message older than the slow threshold: messages waiting
      behind the producer's own backlog, not behind a stopped leader (a stopped one delivers nothing).

    Example: 12 partitions on 3 brokers, one broker stalled -> 4 slow partitions (a third), delivering nothing:
    muted. A closed loop pushing more than the cluster takes -> all 12 slow at once: none muted. With RF=3 and
    acks=all a stalled broker is in every ISR, so all 12 are slow until it leaves them
    (replica.lag.time.max.ms): none muted then either, nothing would be gained; its own partitions are muted once
    the others recover. Rack-aware partitioning sends a saturated loop to the 4 partitions led in its rack: they
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
            if (at := t.partitions[p].delivered_at) is not None and now - at <= ACTIVE_S
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


#: How far a leader's oldest undelivered message must be behind every other leader's for a slow partition to be
#: its leader's doing rather than the producer's own queue (see :func:`slow_on_its_own`).
LEADER_FACTOR = 2.0


def oldest_by_leader(t: TopicRecord, ages: Mapping[int, float]) -> dict[int, float]:
    """Per known leader, the oldest undelivered age among its partitions in ``ages`` (partition -> age)."""
    oldest: dict[int, float] = {}
    for p, age in ages.items():
        leader = t.partitions[p].leader
        if leader >= 0 and age >= oldest.get(leader, 0.0):
            oldest[leader] = age
    return oldest


def leader_behind(leader: int, oldest: Mapping[int, float], floor_s: float = 0.0) -> bool:
    """Whether ``leader``'s oldest message is more than :data:`LEADER_FACTOR` x the youngest other leader's
    oldest, and more than ``floor_s``; also True with nothing to compare (an unknown leader, or no other leader
    with traffic)."""
    others = [a for n, a in oldest.items() if n != leader]
    if leader < 0 or leader not in oldest or not others:
        return True
    return oldest[leader] > max(floor_s, LEADER_FACTOR * min(others))


def lower_quartile(values: Collection[float]) -> float:
    """The lower quartile, exclusive method: 12 values -> a quarter of the way from the 3rd smallest to the 4th;
    3 values -> the smallest (so with three partitions, two stalled, the third is the reference)."""
    return statistics.quantiles(values, n=4, method="exclusive")[0]


#: Active partitions a round needs before what the better-served of them wait means anything (a topic on three
#: brokers written to one partition each).
NORMAL_MIN_PEERS = 3


@dataclass(frozen=True)
class Normal:
    """What counts as normal in one round (see :func:`beyond_normal`): ``limit``, ``slow_call.outlier_factor``
    times the lower quartile of the active partitions' recent peaks (``None`` with fewer than
    :data:`NORMAL_MIN_PEERS` of them), and ``sole_leader``, the broker leading every one of them (``None`` when
    several do): for that broker's own partitions nothing independent says their wait is normal."""

    limit: float | None
    sole_leader: int | None

    def limit_for(self, leader: int) -> float | None:
        """The limit for a partition led by ``leader`` (``None``: no independent reference)."""
        return None if leader >= 0 and leader == self.sole_leader else self.limit


def normal_of(t: TopicRecord, peaks: Mapping[int, float]) -> Normal:
    """The round's :class:`Normal`, computed once (one sort of the peaks)."""
    if len(peaks) < NORMAL_MIN_PEERS:
        return Normal(None, None)
    leaders = {t.partitions[p].leader for p in peaks}
    sole = next(iter(leaders)) if len(leaders) == 1 else None
    return Normal(t.policy.slow_call.outlier_factor * lower_quartile(list(peaks.values())), sole)


def normal_limit(t: TopicRecord, peaks: Mapping[int, float], leader: int | None = None) -> float | None:
    """:func:`normal_of`'s limit, for a partition led by ``leader`` when one is given."""
    normal = normal_of(t, peaks)
    return normal.limit if leader is None else normal.limit_for(leader)


def waiting_beyond_normal(t: TopicRecord, peaks: Mapping[int, float], held: Mapping[int, float]) -> frozenset[int]:
    """The closed partitions whose oldest undelivered message is older than the round's normal limit (every one
    holding a message when there is none): the ones a broker verdict from statistics may mute."""
    normal = normal_of(t, peaks)
    parts = t.partitions
    return frozenset(p for p, age in held.items() if age > (normal.limit_for(parts[p].leader) or 0.0))


def beyond_normal(
    t: TopicRecord, candidates: list[Candidate], peaks: Mapping[int, float], held: Mapping[int, float],
) -> list[Candidate]:
    """Keep a slow-call verdict only while its partition's oldest undelivered message (``held``) is older than
    ``slow_call.outlier_factor`` times what the topic's better-served partitions wait now: the lower quartile of
    the active partitions' recent peaks (``peaks``: their largest oldest-undelivered age over the last 0.5-1 s).
    Other verdicts pass; so does every verdict with fewer than :data:`NORMAL_MIN_PEERS` active partitions, or whose
    leader leads every one of them: a rack-aware producer writes only to the 4 partitions of its rack's broker,
    and when that broker stalls its own partitions are no evidence that the wait is normal. Logs once per burst.

    Why: a partition is slow when *its* messages wait longer than messages the producer sends elsewhere; when
    the better-served quarter of the topic waits as long, the wait is the producer's own queue or the whole
    cluster, and muting only moves it (and scatters keys). One rule for what took three before (a leader no
    further behind than every other, slowness going round every leader within 10 s, a 2x leader factor).

    Worked numbers (the trace corpus, tests/traces/, 12 or 20 partitions, factor 5):

    - one broker of three stalled, RF 1: its 4 partitions age past 1 s, the other 8 peak at ~5 ms: the lower
      quartile is ~5 ms, 5x is 25 ms: the stall verdicts stand (muted 1.06 s in, at 50 msg/s as at 5,000);
    - RF 3, acks=all, the stalled broker in every ISR: all 12 partitions age together until Kafka drops it from
      the ISRs, the lower quartile ages with them and nothing is muted; afterwards the partitions it led still
      wait while the others peak at milliseconds: those are muted;
    - a killed broker, RF 3, idempotent producer: its partitions and its followers' wait together; when
      leadership moves, the new leaders' partitions hold messages 9 s old that were stuck behind the dead
      follower -- and so does the better-served quarter: the new leader is not muted for what it inherited;
    - 5 brokers on 2 cores, 20,000 keyed msg/s: every partition's oldest message climbs to 1-2 s together every
      few seconds; no partition is 5x the lower quartile at those moments, so none is muted for it.
    """
    normal = normal_of(t, peaks)
    kept = []
    for c in candidates:
        limit = normal.limit_for(c[1].leader)
        if c[2].reason != MuteReason.SLOW_CALL or limit is None or held.get(c[1].partition, 0.0) > limit:
            kept.append(c)
    dropped = len(candidates) - len(kept)
    if dropped and not t.shared_slowness:
        log.info(
            "slow_calls_normal", topic=t.name, partitions=dropped,
            normal_wait_s=round((normal.limit or 0.0) / t.policy.slow_call.outlier_factor, 3),
            action="not muting: the topic's better-served partitions wait about as long",
        )
    t.shared_slowness = dropped > 0
    return kept


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


#: A partition sent nothing for longer than this is left out of the outlier rule's reference: a topic whose keys
#: all live on one partition has no peers to compare with, and an idle partition's "nothing outstanding" says
#: nothing about its leader.
ACTIVE_S = 1.0
#: Peers needed for a median worth comparing with (a 3-partition topic on 3 brokers has 2 besides the suspect).
MIN_PEERS = 2


def age_outliers(
    t: TopicRecord,
    ages: Mapping[int, float],
    peaks: Mapping[int, float],
    judged: set[int],
    now: float,
    held: Mapping[int, float] | None = None,
    oldest: Mapping[int, float] | None = None,
) -> list[Candidate]:
    """The relative slow rule: steer around a leader whose partitions stand out, mute it when it does so again.

    A closed partition *stands out* when its oldest undelivered message is older than ``slow_call.outlier_factor``
    times the median of the topic's other active partitions' recent peaks (the largest such age each showed over
    the last 0.5-1 s, 0 when it held nothing) and than ``slow_call.avoid_min_ms``. Its leader's episode begins:
    every partition it leads is avoided by unkeyed messages (``t.avoided``) until none of them holds a message
    older than the avoid floor (``held``: every closed partition's age, active or not; ``ages`` when not given).
    A partition standing out is *muted* (returned) once it is older than ``slow_call.outlier_min_ms`` too and its
    leader's suspicion is confirmed (:mod:`mutepro.mute.suspicion`: its second deep episode -- past the mute floor --
    in a row, each within 5 s of the last, or one of 1.5 s).
    ``ages`` (now) and ``peaks`` hold the active closed partitions; ``judged`` the ones another detector already
    has a verdict for; ``oldest`` the peaks per leader (:func:`oldest_by_leader` of ``peaks``, when the caller
    has it already).

    Why relative: a broker stopped 80 % of every second (a limping disk, a GC-bound JVM) delays its partitions'
    messages by up to 0.8 s and never by 1 s, so the default absolute threshold (1 s) never sees it, and any
    absolute threshold low enough to see it would mute every partition of a cluster that is merely far away or
    acks=all-slow. Against the topic's own median it stands out within a tick. Worked numbers, 12 partitions on
    3 brokers, open loop at 115,000 msg/s or a saturated closed loop at 270,000, linger 5 ms (measured on the
    local cluster): healthy partitions' recent peaks are ~1 ms (median), the limping broker's partitions reach
    150 ms 0.15 s into each stop: avoided; 0.4 s into its second stop: muted (and, two of them, the whole broker).
    When more than half of the active partitions stand out at once, that is saturation, not a bad leader: no
    episode begins. Nor for a leader no further behind than every other (:func:`slow_on_its_own`). A partition
    none of whose tracked messages has had its report yet is steered around but not muted for its first
    ``COLD_START_S`` (5 s): a producer started on a topic just created waits for the brokers to create the
    partitions' logs (seen: first messages 4 s old on one broker of a 1,200-partition topic, confirmed on their
    own as a 1.5 s episode). RF=3 acks=all with a stalled follower: every partition waits, none stands out, none
    muted.
    """
    rt = t.runtime
    if not rt.slow_outlier_enabled:
        return []
    held = ages if held is None else held
    avoid_s = rt.avoid_floor_s
    standing_out: dict[int, list[tuple[int, float, float]]] = {}  # leader key -> [(partition, age, median)]
    if len(ages) > MIN_PEERS:
        for p, age in ages.items():
            if p in judged or age <= avoid_s:
                continue
            median = statistics.median(a for q, a in peaks.items() if q != p)
            if age > rt.slow_outlier_factor * median:
                standing_out.setdefault(leader_key(t, p), []).append((p, age, median))
    if 2 * sum(len(v) for v in standing_out.values()) > len(ages):
        standing_out = {}  # most partitions are slow: the producer or the cluster is saturated
    if standing_out:
        # a leader whose oldest message is no older than the other leaders' stands out only from the many idle
        # partitions of a wide topic (1,200 partitions: the median partition holds nothing), not from its peers
        if oldest is None:
            oldest = oldest_by_leader(t, peaks)
        standing_out = {k: v for k, v in standing_out.items() if leader_behind(k, oldest)}
    for key, outs in standing_out.items():
        if t.suspicion(key).begin(now):
            t.avoid_episodes += 1
            log.info(
                "broker_avoided", topic=t.name, broker=key if key >= 0 else None,
                partitions=sorted(p for p, _, _ in outs), oldest_age_s=round(max(a for _, a, _ in outs), 3),
                chain=t.suspicions[key].chain,
                action="unkeyed messages avoid its partitions; muted if it keeps standing out",
            )
    # each active suspicion's closed partitions, looked up once per round (a scan over the topic's partitions)
    covered = {key: partitions_of(t, key) for key, s in t.suspicions.items() if s.active}
    for key, parts in covered.items():
        suspicion = t.suspicions[key]
        oldest_held = max((held.get(p, 0.0) for p in parts), default=0.0)
        suspicion.peak = max(suspicion.peak, oldest_held)
        if key not in standing_out and oldest_held <= avoid_s:
            # once per episode: whether a limp's episodes end between its stops (and so chain to a mute); peak_age_s
            # over the mute floor with deep False: its partitions got old but no longer stood out from their peers
            log.debug(
                "broker_avoid_ended", topic=t.name, broker=key if key >= 0 else None,
                lasted_s=round(now - (suspicion.since or now), 3),  # active: since is set
                deep=suspicion.deep, chain=suspicion.chain, peak_age_s=round(suspicion.peak, 3),
            )
            suspicion.end(now)
    found: list[Candidate] = []
    for key, outs in standing_out.items():
        suspicion = t.suspicions[key]
        if any(age > rt.slow_outlier_min_s for _, age, _ in outs):
            suspicion.mark_deep()
        if not suspicion.confirmed(now):
            continue
        for p, age, median in outs:
            if age <= rt.slow_outlier_min_s or (age <= COLD_START_S and not t.partitions[p].reported_ever):
                continue  # (a cold partition's first messages also wait for the new partition's log, see above)
            verdict = Verdict(
                MuteReason.SLOW_CALL,
                {
                    "rule": "outlier",
                    "oldest_age_s": round(age, 3),
                    "median_peak_s": round(median, 3),
                    "outlier_factor": rt.slow_outlier_factor,
                    "outlier_min_s": rt.slow_outlier_min_s,
                },
            )
            found.append((t, t.partitions[p], verdict))
    avoided = frozenset(p for key, parts in covered.items() if t.suspicions[key].active for p in parts)
    # Never steer everything away (TopicSnapshot.build would refuse too): with every closed partition avoided
    # there would be nowhere to go. Decided here as well so that t.avoided is what the snapshot holds.
    if avoided and len(avoided) >= sum(1 for q in t.partitions.values() if q.breaker.state is BreakerState.CLOSED):
        avoided = frozenset()
    t.avoided = avoided
    return found


def leader_key(t: TopicRecord, partition: int) -> int:
    """The suspicion key of ``partition``: its leader, or ``-1 - partition`` when the leader is unknown."""
    leader = t.partitions[partition].leader
    return leader if leader >= 0 else -1 - partition


def partitions_of(t: TopicRecord, key: int) -> list[int]:
    """The closed partitions of ``t`` a suspicion key covers (see :func:`leader_key`)."""
    if key < 0:
        part = t.partitions.get(-1 - key)
        return [part.partition] if part is not None and part.breaker.state is BreakerState.CLOSED else []
    return [
        p for p, part in t.partitions.items() if part.leader == key and part.breaker.state is BreakerState.CLOSED
    ]


def probe_limit(t: TopicRecord, peaks: Mapping[int, float]) -> float:
    """How long a probe may take before it counts as failed: the slow threshold, or -- with the outlier rule on
    and peers to compare with -- ``outlier_factor`` times the peers' median recent peak, between half the outlier
    floor and the floor itself (and never above the threshold). A probe goes alone to an empty partition queue,
    so on a healthy broker it takes about one round trip, or what the peers' batches wait in a saturated loop.

    A limping broker answers a probe sent during its up-time at once and one sent while it is stopped after up to
    0.8 s: a probe passes when sent in the 0.2 s up-time or in the last ``bar`` seconds of a stop. The five
    probes, 250 ms apart, sit at phases spanning 0.75 s of the 1 s cycle, so all five pass only when 0.2 + bar
    exceeds 0.75. With a 1 s bar they always did; with 200 ms (peers at ~1 ms) each passes with p ~0.4 and all
    five never. Without the upper bound a saturated loop's peers (median peak 0.12 s) raised the bar to 0.6 s:
    probes passed, the partition came back during the limp and was muted again 1.6 s later. Capped at the floor
    (0.4 s: 0.6 < 0.75) five never pass.
    """
    rt = t.runtime
    if not rt.slow_outlier_enabled or len(peaks) < MIN_PEERS:
        return rt.slow_threshold_s
    scaled = rt.slow_outlier_factor * statistics.median(peaks.values())
    bar = min(rt.slow_threshold_s, rt.slow_outlier_min_s, max(rt.slow_outlier_min_s / 2, scaled))
    # ... but never below what counts as normal (beyond_normal): in an overloaded cluster whose better-served
    # quarter waits 1 s, a probe answered in 1.2 s is as good as any partition's message
    return max(bar, normal_limit(t, peaks) or 0.0)


def own_evidence_by_leader(topics: Iterable[TopicRecord]) -> dict[int, int]:
    """Per leader, how many of its partitions are muted by their *own* detectors (the broker rule's input).

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
                bad[part.leader] = bad.get(part.leader, 0) + 1
    return bad


def written_by_leader(topics: Iterable[TopicRecord]) -> dict[int, int]:
    """Per leader, how many of its partitions this producer has written to (the broker rule's share is of these:
    a producer writing to 2 of a broker's 400 partitions judges the broker on those 2)."""
    written: dict[int, int] = {}
    for t in topics:
        for part in t.partitions.values():
            if part.leader >= 0 and (part.active_at is not None or part.breaker.state is not BreakerState.CLOSED):
                written[part.leader] = written.get(part.leader, 0) + 1
    return written


def waits_on(t: TopicRecord, partition: int, waiting: Collection[int], active: Collection[int]) -> tuple[str, int]:
    """Which broker a waiting partition's messages wait on, and as what (``"leader"`` or ``"replica"``): of its
    replicas, the one whose active partitions are most often waiting now (ties: the leader). With acks=all a
    stopped follower holds up every partition it replicates; the broker they have in common is the cause.

    Worked numbers, 5 brokers, RF 3, broker 4 stopped as a follower: the 12 partitions with a replica on broker 4
    wait, the other 8 do not; a waiting partition led by broker 1 with replicas (1, 4, 5) has broker 1 at 4 of
    its 12 active partitions waiting, broker 4 at 12 of 12, broker 5 at 7 of 12: it waits on broker 4, a replica.
    Without replicas known (or RF 1) it is its leader.
    """
    leader = t.partitions[partition].leader
    replicas = t.replicas.get(partition) or (leader,)
    best, best_share = leader, -1.0
    for broker in replicas:
        mine = [q for q in active if broker in (t.replicas.get(q) or (t.partitions[q].leader,))]
        share = sum(1 for q in mine if q in waiting) / len(mine) if mine else 0.0
        if share > best_share or (share == best_share and broker == leader):
            best, best_share = broker, share
    return ("leader" if best == leader else "replica"), best
