"""What counts as a normal wait in one round: the better-served quarter of the topic's active partitions.

A slow-call verdict stands only while its partition waits well beyond that (:func:`beyond_normal`); a broker
verdict from librdkafka's statistics mutes only the partitions waiting beyond it (:func:`waiting_beyond_normal`).
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from mutepro.detect.model import MuteReason
from mutepro.logs import get_logger
from mutepro.mute.records import Candidate, TopicRecord

log = get_logger("mutepro.producer")


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
