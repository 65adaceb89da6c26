"""The relative slow rule: a leader whose partitions' oldest messages stand out from their peers' is steered
around, and muted when it does so again (see :mod:`mutepro.mute.suspicion`); and the probe limit it sets.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping

from mutepro.detect.model import MuteReason, Verdict
from mutepro.logs import get_logger
from mutepro.mute.normal import MIN_ACTIVE
from mutepro.mute.records import Candidate, TopicRecord
from mutepro.mute.transitions import BreakerState

log = get_logger("mutepro.producer")


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
    When the partitions standing out at once are led by more than half of the active partitions' leaders, that is
    saturation, not a bad leader: no episode begins. Nor for a leader no further behind than every other
    (:func:`leader_behind`). A partition none of whose tracked messages has had its report yet is steered around
    but not muted for its first
    ``slow_call.cold_start_ms`` (5 s): a producer started on a topic just created waits for the brokers to create the
    partitions' logs (seen: first messages 4 s old on one broker of a 1,200-partition topic, confirmed on their
    own as a 1.5 s episode). Nor is any partition muted by this rule in the topic's own first ``cold_start_ms``
    of being written to: the brokers are creating its logs then, and on 300 fresh partitions at 20,000 msg/s broker
    2 paused twice for 0.45 s within 2 s, 4 s in -- a limp's pattern, muted as one (trace
    ``healthy_start_300p``). A stall is still muted then (slow_call's own rule), and a limp already under way
    when the producer starts is muted in its first deep stop after the cold start. RF=3 acks=all with a stalled
    follower: every partition waits, none stands out, none
    muted.
    """
    rt = t.runtime
    if not rt.slow_outlier_enabled:
        return []
    held = ages if held is None else held
    avoid_s = rt.avoid_floor_s
    standing_out: dict[int, list[tuple[int, float, float]]] = {}  # leader key -> [(partition, age, median)]
    if len(ages) >= MIN_ACTIVE:
        # A partition's peers are the other leaders' partitions: a broker leading 7 of 12 partitions made the
        # median of "every other partition" its own partitions' age, and its limp never stood out.
        by_leader: dict[int, list[float]] = {}  # built when a partition first needs it: most rounds none does
        medians: dict[int, float | None] = {}
        for p, age in ages.items():
            if p in judged or age <= avoid_s:
                continue
            key = leader_key(t, p)
            if not by_leader:
                for q, a in peaks.items():
                    by_leader.setdefault(leader_key(t, q), []).append(a)
            if key not in medians:
                others = [a for k, vs in by_leader.items() if k != key for a in vs]
                medians[key] = statistics.median(others) if len(others) >= MIN_ACTIVE - 1 else None
            median = medians[key]
            if median is not None and age > rt.slow_outlier_factor * median:
                standing_out.setdefault(key, []).append((p, age, median))
    if standing_out and 2 * len(standing_out) > len({leader_key(t, p) for p in ages}):
        # most of the brokers the producer writes to stand out: the producer or the cluster is saturated, not a
        # broker bad. Counted in brokers, not partitions: a broker leading 7 of 12 partitions limped unseen when
        # more than half the partitions standing out meant saturation (fault matrix quick limp_short_saturated,
        # tests/traces/limp_majority_leader_saturated), while a saturated producer slows every broker's partitions.
        standing_out = {}
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
        if t.first_write_at is None or now - t.first_write_at < rt.cold_start_s:
            continue  # the topic's cold start: steered around, not muted (see the docstring)
        for p, age, median in outs:
            if age <= rt.slow_outlier_min_s or (age <= rt.cold_start_s and not t.partitions[p].reported_ever):
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


def probe_limit(t: TopicRecord, peaks: Mapping[int, float], normal_s: float | None = None) -> float:
    """How long a probe may take before it counts as failed: the slow threshold, or -- with the outlier rule on
    and peers to compare with -- ``outlier_factor`` times the peers' median recent peak, between half the outlier
    floor and the floor itself (and never above the threshold). A probe goes alone to an empty partition queue,
    so on a healthy broker it takes about one round trip, or what the peers' batches wait in a saturated loop.
    Never below ``normal_s``, the round's recent normal limit (:attr:`mutepro.mute.normal.Normal.limit`).

    A limping broker answers a probe sent during its up-time at once and one sent while it is stopped after up to
    0.8 s: a probe passes when sent in the 0.2 s up-time or in the last ``bar`` seconds of a stop. The five
    probes, 250 ms apart, sit at phases spanning 0.75 s of the 1 s cycle, so all five pass only when 0.2 + bar
    exceeds 0.75. With a 1 s bar they always did; with 200 ms (peers at ~1 ms) each passes with p ~0.4 and all
    five never. Without the upper bound a saturated loop's peers (median peak 0.12 s) raised the bar to 0.6 s:
    probes passed, the partition came back during the limp and was muted again 1.6 s later. Capped at the floor
    (0.4 s: 0.6 < 0.75) five never pass.
    """
    rt = t.runtime
    if not rt.slow_outlier_enabled or len(peaks) < MIN_ACTIVE - 1:  # the probed partition is muted: peers only
        return rt.slow_threshold_s
    scaled = rt.slow_outlier_factor * statistics.median(peaks.values())
    bar = min(rt.slow_threshold_s, rt.slow_outlier_min_s, max(rt.slow_outlier_min_s / 2, scaled))
    # ... but never below what counts as normal (beyond_normal): in an overloaded cluster whose better-served
    # quarter waits 1 s, a probe answered in 1.2 s is as good as any partition's message
    return max(bar, normal_s or 0.0)


def oldest_by_leader(t: TopicRecord, ages: Mapping[int, float]) -> dict[int, float]:
    """Per known leader, the oldest undelivered age among its partitions in ``ages`` (partition -> age)."""
    oldest: dict[int, float] = {}
    for p, age in ages.items():
        leader = t.partitions[p].leader
        if leader >= 0 and age >= oldest.get(leader, 0.0):
            oldest[leader] = age
    return oldest


def leader_behind(leader: int, oldest: Mapping[int, float]) -> bool:
    """Whether ``leader``'s oldest message is older than some other leader's oldest (``oldest``: per leader with
    traffic), i.e. another broker is serving the producer better; also True with nothing to compare (an unknown
    leader, or no other leader with traffic). It was a 2x margin over the youngest other leader's until the trace
    corpus showed the same decisions with none (the wide 1,200-partition start, the one trace where this rule
    decides anything: 9 false mutes either way, 11 without the rule)."""
    others = [a for n, a in oldest.items() if n != leader]
    if leader < 0 or leader not in oldest or not others:
        return True
    return oldest[leader] > min(others)
