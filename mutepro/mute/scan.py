"""One detection round over one topic: every partition's breaker ticked, every closed partition's load read and
judged by its own detectors, then the topic-wide rules (:mod:`mutepro.mute.verdicts`, :mod:`~mutepro.mute.outliers`,
:mod:`~mutepro.mute.normal`) applied to the candidates.

Kept apart from the manager, which holds the lock, and its registry, which owns the records: this is the round's
arithmetic, a function of the records, the load reader and the time.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from mutepro.detect.model import MuteReason, PartitionLoad, Verdict
from mutepro.mute.answered import last_delivery_by_leader
from mutepro.mute.brokers import waits_on
from mutepro.mute.normal import Normal, beyond_normal, normal_of, waiting_beyond_normal
from mutepro.mute.outliers import age_outliers, probe_limit
from mutepro.mute.records import Candidate, PartitionRecord, TopicRecord, since_reset
from mutepro.mute.transitions import BreakerState
from mutepro.mute.verdicts import (
    cold_stalls_of_silent_leaders,
    congestion_outliers,
    served_elsewhere,
    slow_rates_still_waiting,
    without_saturation,
)

LoadReader = Callable[[str, int, float], PartitionLoad]

# A closed partition with nothing outstanding and no report since its detectors last judged it is judged again
# only after the detection time scale, ``slow_call.threshold_ms`` (``TopicRuntime.active_s``, 1 s): nothing can
# make it a stall faster, and its detectors' windows can only age meanwhile, which at most ends a verdict that was
# not given. One idle for as long (sent nothing) is not even looked at in between (its breaker adopts a shared
# store's record at that round, up to that much later). Why: a wide topic written by a sticky producer is mostly
# idle partitions -- of 1,200, ~40 get messages in one tick -- and judging every one every 50 ms cost 13 ms of a
# 16 ms round, holding the GIL from the producing thread.


@dataclass(frozen=True)
class RoundView:
    """What one round saw of a topic, read-only: the judgements' input besides the verdicts so far.

    ``outstanding``: every closed partition's undelivered messages; ``ages``: the active closed partitions'
    (written to within ``slow_call.threshold_ms``) oldest undelivered age now; ``peaks``: their largest over the
    last 0.5-1 s;
    ``held``: every closed partition's oldest undelivered age now; ``normal``: what counts as a normal wait this
    round (:func:`~mutepro.mute.normal.normal_of`, computed once: judgement 5, the broker rule's waiting
    partitions and the probe limit all read it).
    """

    topic: TopicRecord
    now: float
    outstanding: Mapping[int, int]
    ages: Mapping[int, float]
    peaks: Mapping[int, float]
    held: Mapping[int, float]
    normal: Normal


#: One topic-wide judgement: the round's view and the verdicts so far -> the verdicts that stand (and any new).
Judgement = Callable[[RoundView, list[Candidate]], list[Candidate]]


def _cold_stalls(v: RoundView, found: list[Candidate]) -> list[Candidate]:
    return cold_stalls_of_silent_leaders(v.topic, found, v.now)


def _still_waiting(v: RoundView, found: list[Candidate]) -> list[Candidate]:
    return slow_rates_still_waiting(found)


def _outliers(v: RoundView, found: list[Candidate]) -> list[Candidate]:
    judged = {c[1].partition for c in found}
    return found + age_outliers(v.topic, v.ages, v.peaks, judged, v.now, v.held)


def _congestion(v: RoundView, found: list[Candidate]) -> list[Candidate]:
    return congestion_outliers(found, v.outstanding, v.topic.policy.congestion.outlier_factor, v.ages.keys())


def _normal(v: RoundView, found: list[Candidate]) -> list[Candidate]:
    return beyond_normal(v.topic, found, v.normal, v.held)


def _elsewhere(v: RoundView, found: list[Candidate]) -> list[Candidate]:
    return served_elsewhere(v.topic, found, v.held, v.ages.keys(), v.now)


def _saturation(v: RoundView, found: list[Candidate]) -> list[Candidate]:
    return without_saturation(v.topic, found, v.ages, v.now)


#: The topic-wide judgements of a round, in order, after each partition's own detectors gave their verdicts
#: (see docs/detection.md): cold partitions judged with their leader; slow rates only while messages still wait;
#: the relative age rule (steering, then muting); congestion only for an outlier; slowness only beyond what the
#: topic's better-served partitions wait; slowness only when another broker answered meanwhile; nothing for
#: slowness on most partitions at once.
JUDGEMENTS: tuple[Judgement, ...] = (
    _cold_stalls, _still_waiting, _outliers, _congestion, _normal, _elsewhere, _saturation,
)


def _with_cause(
    t: TopicRecord, cand: Candidate, waiting: frozenset[int], active: Collection[int], view: RoundView,
    last: Mapping[int, float],
) -> Candidate:
    """A slow-call verdict names the broker its partition's messages wait on (see brokers.waits_on)."""
    _, part, verdict = cand
    if verdict.reason != MuteReason.SLOW_CALL:
        return cand
    p = part.partition
    since = view.now - view.held.get(p, 0.0)
    role, broker = waits_on(t, p, waiting | {p}, {*active, p}, since, last)
    return t, part, Verdict(verdict.reason, {**verdict.detail, "waits_on": role, "waits_on_broker": broker})


def _judged_lately(part: PartitionRecord, now: float, quiet_s: float) -> bool:
    """No report since its detectors judged it, less than ``quiet_s`` (the topic's ``active_s``) ago."""
    return not part.reports and part.judged_at is not None and now - part.judged_at < quiet_s


@dataclass
class TopicScan:
    """What one round found in a topic: the verdicts to trip, and the half-open partitions whose probes failed."""

    trips: list[Candidate] = field(default_factory=list)
    failed_probes: list[int] = field(default_factory=list)


def scan_topic(t: TopicRecord, load_of: LoadReader, now: float, busy: frozenset[int] | None = None) -> TopicScan:
    """Tick every breaker of ``t`` and judge it; sets ``t.probe_limit_s`` for this round's probe reports.

    ``busy``: the partitions with messages outstanding or sent/reported since the last round (the tracker's
    :meth:`~mutepro.producer.tracker.OutstandingTracker.busy`); a closed partition outside it that has been idle
    for the topic's ``active_s`` is left alone until it has not been judged for as long. ``None``: every partition
    is looked at.
    """
    candidates: list[Candidate] = []
    closed_outstanding: dict[int, int] = {}
    active_ages: dict[int, float] = {}  # the outlier rule's input: active closed partitions' ages now
    active_peaks: dict[int, float] = {}  # ... and their recent peaks
    held: dict[int, float] = {}  # every closed partition's age now (an avoided one is soon inactive)
    half_open: list[int] = []
    not_closed: set[int] = set()
    loaded: dict[int, tuple[float, float]] = {}  # written to at some time: (age now, recent peak)
    active_s = t.runtime.active_s
    # "Written to lately" counts back from the producer's last write to the topic, not from now: a producer blocked
    # on its own full queue writes nowhere for a while, and that changes neither which partitions it writes to
    # nor what they wait. Counted from now, every partition went inactive after a second of it, the round had no
    # peers, nothing counted as normal, and a broker verdict from statistics muted whole brokers whose messages
    # waited no longer than the rest (trace limp_5b_rf3_all_keyed, 41.8 s: 9 partitions of brokers 3 and 5).
    written_before = t.last_write_at
    for p, part in t.partitions.items():
        unchanged = (
            busy is not None
            and p not in busy
            and part.breaker.state is BreakerState.CLOSED
            and part.fresh_since is None
            and not part.reports
            and _judged_lately(part, now, active_s)
        )
        if unchanged and (
            part.active_at is None or written_before is None or written_before - part.active_at > active_s
        ):
            closed_outstanding[p] = 0  # idle: nothing outstanding, nothing sent or reported (the median's zeros)
            continue
        part.breaker.tick()
        state = part.breaker.state
        if unchanged and state is BreakerState.CLOSED and part.reported_ever:
            # Written to lately but nothing outstanding, sent or reported since the last round, which judged it
            # and saw the same counts: its load is no message, so only its recent peak moves (as time passes).
            # Reading the load and its bookkeeping again cost ~10 us a partition: 10,000 partitions written to
            # within the last second cost 150 ms a round, with 500 of them written to in that round.
            closed_outstanding[p] = 0
            held[p] = 0.0
            loaded[p] = (0.0, part.note_age(0.0, now))
            continue
        if state is not BreakerState.CLOSED:
            not_closed.add(p)
            if state is BreakerState.HALF_OPEN:
                half_open.append(p)
            continue
        load = load_of(t.name, p, now)
        closed_outstanding[p] = load.outstanding
        delivered = load.sent - load.outstanding
        if delivered != part.delivered:
            if delivered > part.delivered and not part.judged_delivery:
                t.delivered(part, now, judged=False)  # its first, unjudged ones (see PartitionRecord.delivered_at)
            part.delivered = delivered
        if part.fresh_since is not None:
            load = since_reset(part, load, now)
        if load.sent != part.last_sent:
            part.last_sent, part.active_at, t.last_write_at = load.sent, now, now
            if t.first_write_at is None:
                t.first_write_at = now
        if load.sent > load.outstanding or load.warm:
            part.reported_ever = True  # some message got its report (judged or not: the first ones are not)
        age = load.oldest_age_s or 0.0
        held[p] = age
        peak = part.note_age(age, now)
        if part.active_at is not None:
            loaded[p] = (age, peak)
        if not load.outstanding and _judged_lately(part, now, active_s):
            continue  # quiet: see the comment above RoundView
        part.reports, part.judged_at = 0, now
        load = t.warm(part, load)
        for det in part.detectors:
            verdict = det.check(load, now)
            if verdict is not None:
                candidates.append((t, part, verdict))
                break
    t.not_closed = not_closed
    written = t.last_write_at
    for p, (age, peak) in loaded.items():
        at = t.partitions[p].active_at
        if written is not None and at is not None and written - at <= active_s:
            active_ages[p], active_peaks[p] = age, peak
    normal = normal_of(t, active_peaks, now)
    view = RoundView(t, now, MappingProxyType(closed_outstanding), MappingProxyType(active_ages),
                     MappingProxyType(active_peaks), MappingProxyType(held), normal)
    for judge in JUDGEMENTS:
        candidates = judge(view, candidates)
    t.waiting = waiting = waiting_beyond_normal(t, normal, held)
    last = last_delivery_by_leader(t) if candidates else {}
    scan = TopicScan(trips=[_with_cause(t, c, waiting, active_ages.keys(), view, last) for c in candidates])
    if not_closed:  # read only by the probes of partitions not closed (a median over the active peaks)
        t.probe_limit_s = probe_limit(t, active_peaks, normal.limit)
    for p in half_open:
        part = t.partitions[p]
        oldest = load_of(t.name, p, now).oldest_age_s
        since = part.breaker.probing_since
        # Messages sent before probing began and still undelivered are questions already put to the partition:
        # no probe is offered until they are answered. A probe sent meanwhile would only join them -- into a
        # stalled broker, where it waits out the stall (RF 1, 50 msg/s, 20 s stall: one probe per round, ~18
        # in all, each waiting up to the stall's end, put the run's p99 at 11.5 s against 13-29 ms without).
        part.awaiting = oldest is not None and since is not None and oldest > now - since
        if not t.runtime.slow_call_enabled:
            continue
        # Anything still undelivered past the probe limit means the partition has not recovered: it reports
        # nothing, so a probe would never fail on its own before message.timeout.ms. The wait counts from when
        # probing began, not from the send: what a message waited before is the evidence that muted the
        # partition, not news about it now. Counted from the send, a message caught in flight by a stall failed
        # every probe round at once, also the first one after the stall ended, before the broker had had time to
        # answer it -- the same stall: probing 0.1 s after its end failed instantly, the next wait was the 4 s
        # cap, and the last partition came back 7.8 s after the fault.
        if oldest is not None and since is not None:
            oldest = min(oldest, now - since)
        if oldest is not None and oldest > t.probe_limit_of(part):
            scan.failed_probes.append(p)
    return scan
