"""What counts as a normal wait in one round: the better-served quarter of the topic's active partitions.

A slow-call verdict stands only while its partition waits well beyond that (:func:`beyond_normal`); a broker
verdict from librdkafka's statistics mutes only the partitions waiting beyond it (:func:`waiting_beyond_normal`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from mutepro.detect.model import MuteReason
from mutepro.logs import get_logger
from mutepro.mute.records import PEAK_BUCKET_S, Candidate, PartitionRecord, TopicRecord

log = get_logger("mutepro.producer")


def lower_quartile(values: Collection[float]) -> float:
    """The lower quartile, exclusive method: 12 values -> a quarter of the way from the 3rd smallest to the 4th;
    3 values -> the smallest (so with three partitions, two stalled, the third is the reference)."""
    return statistics.quantiles(values, n=4, method="exclusive")[0]


#: Active partitions any comparison of waits needs: the one judged and two others (a topic on three brokers
#: written to one partition each). With fewer, "what the others wait" is one opinion or none: what counts as
#: normal has no reference, the outlier rule no median and the probe limit falls back to the slow threshold. Not
#: a setting: it is the least a median or a quartile means anything with.
MIN_ACTIVE = 3


@dataclass(frozen=True)
class Normal:
    """What counts as normal in one round (see :func:`beyond_normal`): ``limit``, ``slow_call.outlier_factor``
    times the lower quartile of the active partitions' recent peaks (``None`` with fewer than
    :data:`MIN_ACTIVE` of them), and ``sole_leader``, the broker leading every one of them (``None`` when
    several do): for that broker's own partitions nothing independent says their wait is normal.

    For a message that has waited longer than the recent peaks cover, the reference is what the same partitions
    waited *while it did* (:meth:`limit_for`), from ``records`` (the active partitions') at ``now``, over at most
    ``window_s`` (``slow_call.normal_window_ms``)."""

    limit: float | None
    sole_leader: int | None
    factor: float = 1.0
    records: tuple[PartitionRecord, ...] = ()
    now: float | None = None
    window_s: float = 0.0
    _over: dict[int, float] = field(default_factory=dict, compare=False, repr=False)  # limit per span, in buckets

    def limit_for(self, leader: int, waited_s: float = 0.0) -> float | None:
        """The limit for a partition led by ``leader`` whose oldest undelivered message has waited ``waited_s``
        (``None``: no independent reference): ``factor`` times the lower quartile of the active partitions'
        peaks since that message was sent (at most ``window_s`` back, never less than the recent peaks)."""
        if self.limit is None or (leader >= 0 and leader == self.sole_leader):
            return None
        span = min(waited_s, self.window_s)
        if self.now is None or span <= 2 * PEAK_BUCKET_S:
            return self.limit  # the recent peaks cover 0.5-1 s already
        buckets = math.ceil(span / PEAK_BUCKET_S)
        limit = self._over.get(buckets)
        if limit is None:
            start = self.now - buckets * PEAK_BUCKET_S
            limit = max(self.limit, self.factor * lower_quartile([r.peak_since(start) for r in self.records]))
            self._over[buckets] = limit  # a memo of this round's, one per bucket of span
        return limit


def normal_of(t: TopicRecord, peaks: Mapping[int, float], now: float | None = None) -> Normal:
    """The round's :class:`Normal`, computed once (one sort of the peaks); without ``now`` only the recent
    peaks count (no look back)."""
    if len(peaks) < MIN_ACTIVE:
        return Normal(None, None)
    parts = t.partitions
    leaders = {parts[p].leader for p in peaks}
    sole = next(iter(leaders)) if len(leaders) == 1 else None
    factor = t.policy.slow_call.outlier_factor
    return Normal(
        factor * lower_quartile(list(peaks.values())), sole, factor, tuple(parts[p] for p in peaks), now,
        t.runtime.normal_window_s,
    )


def waiting_beyond_normal(t: TopicRecord, normal: Normal, held: Mapping[int, float]) -> frozenset[int]:
    """The closed partitions whose oldest undelivered message is older than the round's normal limit for it
    (every one holding a message when there is none): the ones a broker verdict from statistics may mute."""
    parts = t.partitions
    short = normal.limit or 0.0
    # age <= short: within normal whatever the look back says (it only raises the limit); skipping the look back
    # there keeps the round cheap on a wide topic, where most partitions hold a young message or none
    return frozenset(
        p for p, age in held.items()
        if age > 0.0 and (age > short or parts[p].leader == normal.sole_leader)
        and age > (normal.limit_for(parts[p].leader, age) or 0.0)
    )


def beyond_normal(
    t: TopicRecord, candidates: list[Candidate], normal: Normal, held: Mapping[int, float],
) -> list[Candidate]:
    """Keep a slow-call verdict only while its partition's oldest undelivered message (``held``) is older than
    ``slow_call.outlier_factor`` times what the topic's better-served partitions wait now: the lower quartile of
    the active partitions' recent peaks (their largest oldest-undelivered age over the last 0.5-1 s), looking back
    over the message's own wait (``normal``: the round's, :func:`normal_of`).
    Other verdicts pass; so does every verdict with fewer than :data:`MIN_ACTIVE` active partitions, or whose
    leader leads every one of them: a rack-aware producer writes only to the 4 partitions of its rack's broker,
    and when that broker stalls its own partitions are no evidence that the wait is normal (such a verdict still
    needs another broker to have answered meanwhile, unless its leader is the sole one written to:
    :func:`mutepro.mute.verdicts.served_elsewhere`). Logs once per burst.

    Why: a partition is slow when *its* messages wait longer than messages the producer sends elsewhere; when
    the better-served quarter of the topic waits as long, the wait is the producer's own queue or the whole
    cluster, and muting only moves it (and scatters keys). One rule for what took three before (a leader no
    further behind than every other, slowness going round every leader within 10 s, a 2x leader factor).

    Worked numbers (the trace corpus, tests/traces/, 12 or 20 partitions, factor 5):

    - one broker of three stalled, RF 1: its 4 partitions age past 1 s, the other 8 peak at ~5 ms: the lower
      quartile is ~5 ms, 5x is 25 ms: the stall verdicts stand (muted 1.06 s in, at 50 msg/s as at 5,000);
    - RF 3, acks=all, the stalled broker in every ISR: all 12 partitions age together until Kafka drops it from
      the ISRs, the lower quartile ages with them and nothing is muted; afterwards the partitions it led still
      wait while the others peak at milliseconds, but while their messages waited the others waited as long
      (the look back, :meth:`Normal.limit_for`): not muted until their leaderships move, as with the plain
      client (with Kafka's defaults a silent broker is fenced at 9 s, before the ISRs shrink at 30 s);
    - 5 brokers on 2 cores, RF 3, acks=all, 25,000 keyed msg/s, no fault: every partition waits 10 s together,
      then half drain first; against the last second only the other half were 5x slower and were muted, wave
      after wave (66 mutes of 4 brokers' partitions in 47 s); against what the drained ones waited meanwhile,
      none is;
    - a killed broker, RF 3, idempotent producer: its partitions and its followers' wait together; when
      leadership moves, the new leaders' partitions hold messages 9 s old that were stuck behind the dead
      follower -- and so does the better-served quarter: the new leader is not muted for what it inherited;
    - 5 brokers on 2 cores, 20,000 keyed msg/s: every partition's oldest message climbs to 1-2 s together every
      few seconds; no partition is 5x the lower quartile at those moments, so none is muted for it.
    """
    kept = []
    for c in candidates:
        waited = held.get(c[1].partition, 0.0)
        limit = normal.limit_for(c[1].leader, waited)
        if c[2].reason != MuteReason.SLOW_CALL or limit is None or waited > limit:
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
