"""Whether the producer could be served elsewhere: which brokers delivered something while a message waited.

One piece of evidence, read by two rules: a slow-call verdict counts against a partition's leader only when some
other broker delivered meanwhile (:func:`mutepro.mute.verdicts.served_elsewhere`), and the Spark sink's flush
hedge mutes the leaders its last rows wait on only then (the rescuer asks through
:meth:`~mutepro.mute.manager.ProducerMuteManager.answered_meanwhile`). The evidence is each partition's
``delivered_at``: the round in which its delivered count last grew (set by :func:`mutepro.mute.scan.scan_topic`).
Judgement 6 also reads a second form of it, :func:`drained_by_leader`: partitions written with the waiting
message that have delivered everything since.

Why it is the evidence: with RF 3 on 3 brokers and acks=all a stalled broker follows every partition, so every
message waits until the leaders drop it from their ISRs (``replica.lag.time.max.ms``, 10 s on the local cluster);
no broker delivers anything meanwhile, and muting a partition moves its messages to another that waits as long.
When a broker stalls as a *leader* the others keep answering: their partitions' deliveries are the proof that the
wait is this leader's and that another partition would serve the producer.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from mutepro.mute.records import TopicRecord


def last_delivery_by_leader(t: TopicRecord) -> dict[int, float]:
    """Per leader, when a partition of ``t`` it leads last delivered something (leaders that never did: absent).

    One pass over the partitions, for a round that asks about several waiting partitions at once."""
    last: dict[int, float] = {}
    for part in t.partitions.values():
        at = part.delivered_at
        if at is not None and part.leader >= 0 and at > last.get(part.leader, -1e300):
            last[part.leader] = at
    return last


def drained_by_leader(t: TopicRecord, written: Collection[int], held: Mapping[int, float]) -> dict[int, float]:
    """Per leader, when a partition of ``t`` it leads was last written to, among the ``written`` ones that hold
    nothing now (``held``: each partition's oldest undelivered age, 0 for none): each delivered every message sent
    to it up to then. A partition written in or after the round that counted a waiting message answered messages
    sent with it: a producer that writes one burst and stops (a Spark task's last rows) has no delivery strictly
    after that round, yet every other broker answered the burst while the stalled one holds its share."""
    drained: dict[int, float] = {}
    parts = t.partitions
    for q in written:
        part = parts.get(q)
        if part is None or part.leader < 0 or held.get(q, 0.0) != 0.0 or part.active_at is None:
            continue
        if part.active_at > drained.get(part.leader, -1e300):
            drained[part.leader] = part.active_at
    return drained


def delivered_since(last: dict[int, float], since: float, exclude: Collection[int]) -> bool:
    """Whether a leader outside ``exclude`` delivered after ``since`` (strictly: the round that first counted a
    waiting message may also have counted reports that came before it was sent), from
    :func:`last_delivery_by_leader`."""
    return any(at > since for leader, at in last.items() if leader not in exclude)


def drained_since(drained: dict[int, float], since: float, exclude: Collection[int]) -> bool:
    """Whether a leader outside ``exclude`` drained a partition written at or after ``since``, from
    :func:`drained_by_leader` (not strictly: what was written then was sent with the waiting message)."""
    return any(at >= since for leader, at in drained.items() if leader not in exclude)


def answered_meanwhile(t: TopicRecord, exclude: Collection[int], since: float) -> bool:
    """Whether a partition of ``t`` led by a broker outside ``exclude`` delivered something after ``since``."""
    return delivered_since(last_delivery_by_leader(t), since, exclude)
