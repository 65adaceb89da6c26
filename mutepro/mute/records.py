"""The mute manager's per-topic and per-partition records (breaker, detectors, leader, snapshot), and the load a
freshly reset partition's detectors see."""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from collections.abc import Sequence
from typing import TypeAlias, overload

from mutepro.detect.model import PartitionLoad, Verdict
from mutepro.detect.protocols import PartitionDetector
from mutepro.mute.breaker import MuteBreaker
from mutepro.mute.suspicion import Suspicion
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.runtime import runtime_of
from mutepro.policy.schema import TopicPolicy

#: The bucket length of :meth:`PartitionRecord.note_age`'s sliding peak (two buckets: the peak covers 0.5-1 s),
#: and the resolution of :meth:`PartitionRecord.peak_since`.
PEAK_BUCKET_S = 0.5


class PartitionRecord:
    __slots__ = (
        "_history",
        "_peak",
        "_peak_prev",
        "_peak_since",
        "active_at",
        "awaiting",
        "breaker",
        "closed_at",
        "delivered",
        "delivered_at",
        "detectors",
        "forced_by",
        "fresh_since",
        "judged_at",
        "judged_delivery",
        "last_sent",
        "leader",
        "leaderless",
        "muted_leader",
        "partition",
        "reported_ever",
        "reports",
    )

    def __init__(
        self, partition: int, breaker: MuteBreaker, detectors: list[PartitionDetector], *, history_s: float = 10.0,
    ) -> None:
        self.partition = partition
        self.breaker = breaker
        self.detectors = detectors
        self.leader = -1
        # The last metadata named no leader (-1) while ``leader`` keeps the one before (see MuteControl.apply_leaders)
        self.leaderless = False
        self.muted_leader = -1
        # The broker whose manual mute (mute_broker) forced this partition open; None for a partition muted by
        # hand on its own, so unmute_broker does not lift a mute the user asked for separately.
        self.forced_by: int | None = None
        # When the breaker was reset (leader moved, unmuted by hand): messages sent before it are still in flight
        # to the old leader and are not the new leader's doing (see since_reset). None once they are all gone.
        self.fresh_since: float | None = None
        self.closed_at: float | None = None  # when probes last closed the breaker
        # Half-open with messages sent before probing began still undelivered: they are the questions already put
        # to the partition, so no probe is offered until they are answered (see scan.scan_topic)
        self.awaiting = False
        # The outlier rule compares a partition with the topic's *active* ones: sent to within runtime.active_s
        # (slow_call.threshold_ms).
        self.last_sent = 0
        self.active_at: float | None = None
        # When a message of the partition was last delivered: a leader that delivered any partition's messages
        # lately is answering (see mutepro.mute.answered). Judged reports say it (a tally with calls > failures);
        # before the partition's first judged report (its first deliveries are not judged, see the tracker),
        # its delivered count growing does (``delivered``: sent - outstanding at the last scan). Not after: the
        # count also grows when a rescue purges the queue, and a stalled leader whose queue was taken back
        # looked as if it answered (a recorded RF 3 stall, replayed).
        self.delivered = 0
        self.delivered_at: float | None = None
        self.judged_delivery = False
        # Reports fed to the detectors since they last judged, and when that was (see the comment above scan.RoundView).
        self.reports = 0
        # whether any message of the partition got its report (a cold partition's first messages wait for more
        # than its leader: metadata, a connection, the new partition's log)
        self.reported_ever = False
        self.judged_at: float | None = None
        self._peak = 0.0  # the largest oldest-undelivered age seen in the current bucket
        self._peak_prev = 0.0  # ... in the bucket before
        self._peak_since: float | None = None
        # the peaks of the buckets before, (start, peak), newest last, covering history_s (slow_call.normal_window_ms)
        self._history: deque[tuple[float, float]] = deque(maxlen=math.ceil(history_s / PEAK_BUCKET_S))

    def note_age(self, age_s: float, now: float) -> float:
        """Record the oldest undelivered age seen now; return the largest seen over the last 0.5-1 s.

        The outlier rule compares a partition with its peers' *recent peaks*, not their ages at this instant.
        Why: a sticky unkeyed producer keeps messages on one or two partitions at a time, so at any instant most
        peers hold nothing (age 0) and the median is 0 -- any batch slower than the floor would stand out, also
        when the whole cluster is slow (a CPU-starved follower delays every acks=all batch). Over the last half
        second each peer has had a batch or two, and its peak says how slow the cluster is for everyone.
        """
        since = self._peak_since
        if since is None or now - since >= PEAK_BUCKET_S:
            # the bucket just ended becomes the previous one, unless it ended long ago (nothing seen since)
            self._peak_prev = self._peak if since is not None and now - since < 2 * PEAK_BUCKET_S else 0.0
            if since is not None:
                self._history.append((since, self._peak))
            self._peak, self._peak_since = 0.0, now
        self._peak = max(self._peak, age_s)
        return max(self._peak, self._peak_prev)


    def peak_since(self, start: float) -> float:
        """The largest oldest-undelivered age :meth:`note_age` saw since ``start``, to its bucket (0.5 s): from
        the bucket holding ``start`` on, at most the history kept back. A partition idle meanwhile counts 0 for the
        buckets it was not looked at in."""
        since = self._peak_since
        peak = self._peak if since is not None and since + PEAK_BUCKET_S > start else 0.0
        for began, value in reversed(self._history):
            if began + PEAK_BUCKET_S <= start:
                break
            if value > peak:
                peak = value
        return peak


class TopicRecord:
    __slots__ = (
        "acks_all",
        "avoid_episodes",
        "avoided",
        "first_write_at",
        "isrs",
        "last_write_at",
        "local",
        "name",
        "not_closed",
        "partitions",
        "policy",
        "probe_limit_s",
        "probing",
        "replicas",
        "runtime",
        "saturated",
        "shared_slowness",
        "snapshot",
        "suspicions",
        "waiting",
        "warm_leaders",
    )

    def __init__(self, name: str, policy: TopicPolicy, *, acks_all: bool = True) -> None:
        self.name = name
        self.policy = policy
        # whether the producer's writes wait for every in-sync replica (acks=all, librdkafka's default) or for
        # the leader alone (acks=1, 0): who a waiting partition may be waiting on (see brokers.waits_on)
        self.acks_all = acks_all
        self.partitions: dict[int, PartitionRecord] = {}
        self.snapshot: TopicSnapshot | None = None
        self.probing: frozenset[int] = frozenset()
        self.replicas: dict[int, tuple[int, ...]] = {}  # partition -> replica brokers, from the metadata
        # partition -> in-sync replicas as the last metadata refresh listed them (every 10 s: a shrink shows up
        # to 10 s late); the brokers an acks=all write waits for (see brokers.waits_on). Empty: unknown.
        self.isrs: dict[int, tuple[int, ...]] = {}
        # Rack-aware partitioning: the partitions led in the producer's rack (None: off for this topic), kept
        # here and recomputed only when leaders or broker racks change, not in every round's rebuild.
        self.local: frozenset[int] | None = None
        self.saturated = False
        # When the producer last wrote to any partition of the topic (None: never): what "written to lately" is
        # measured from (see scan.scan_topic), so that a producer blocked on its own full queue for a second does
        # not make every partition inactive and leave its rounds without peers to compare with.
        self.last_write_at: float | None = None
        self.first_write_at: float | None = None  # ... and first: the topic's cold start (see outliers.age_outliers)
        # The closed partitions whose messages waited beyond normal in the last round (None: no round yet): the
        # ones a broker verdict from librdkafka's statistics mutes (see mutepro.mute.brokers.BrokerJudge).
        self.waiting: frozenset[int] | None = None
        self.shared_slowness = False  # slow-call verdicts were last dropped as normal (see normal.beyond_normal)
        # The partitions the last detection round found not closed, plus those it tripped: what the round's
        # snapshot and broker rule read instead of every partition's state. None: no round yet.
        self.not_closed: set[int] | None = None
        self.runtime = runtime_of(policy)
        # A probe slower than this failed: the slow threshold, or lower where the outlier rule sets the bar
        # (see outliers.probe_limit); refreshed every evaluation round.
        self.probe_limit_s = self.runtime.slow_threshold_s
        # The outlier rule's steering (see mute.suspicion): per leader its episodes, and the partitions unkeyed
        # messages avoid right now (closed ones only; muted ones are not writable anyway).
        self.suspicions: dict[int, Suspicion] = {}
        self.avoided: frozenset[int] = frozenset()
        self.avoid_episodes = 0  # how many episodes began (the producer's "avoids" counter)
        # The brokers that delivered a message of this topic to this producer (see delivered): its connection to
        # them and the topic's metadata are ready, so a partition they lead is not cold (see warm).
        self.warm_leaders: set[int] = set()

    def probe_limit_of(self, part: PartitionRecord) -> float:
        """How long a probe of ``part`` (or any message it holds) may take: the topic's probe limit, or the slow
        threshold while its leader has just been elected again (``breaker.rejoined``). Why: the probe limit's bar is
        tight to sample a *limping* broker's stops (see outliers.probe_limit), and a limping broker heartbeats and
        is never fenced; a re-elected one was fenced and is back, and what is left to ask is whether it answers. It
        answers slowly for a moment: broker 2, leader of 111 of 300 partitions again after a 20 s stall, answered
        probes in ~0.3 s for a second against a bar of ~0.2 s, and its partitions waited 2 s more (trace
        ``stall_300p_rejoined``, the fault matrix's: let go 4.9 s after the stall held to the bar, 3.0 s without)."""
        return self.runtime.slow_threshold_s if part.breaker.rejoined else self.probe_limit_s

    def delivered(self, part: PartitionRecord, now: float, *, judged: bool) -> None:
        """A message of ``part`` was delivered (seen now): its leader answers (mute.answered) and is warm."""
        part.delivered_at = now
        if judged:
            part.judged_delivery = True
        if part.leader >= 0:
            self.warm_leaders.add(part.leader)

    def warm(self, part: PartitionRecord, load: PartitionLoad) -> PartitionLoad:
        """The load as ``part``'s detectors judge it: warm also when its leader delivered any of the topic's
        partitions (:attr:`warm_leaders`), not only its own.

        Why: what a partition's first messages wait for beyond their leader -- a connection to a possibly cold
        broker, the topic's metadata -- is the broker's and the topic's, not the partition's. A partition never
        written before on a broker that has delivered was judged cold and waited ``slow_call.cold_start_ms``
        (5 s) before its stall counted: a burst of 600 messages to a partition of broker 2 never written before,
        0.2 s after broker 2 stalled, broker 2 having delivered another partition's bursts until then, was muted
        5.2 s into the stall, now 1.2 s (trace ``stall_cold_partition_warm_leader``). Warm by its leader, its
        verdict still carries ``cold`` (its own first reports are not in yet) and stands only while that leader
        delivers nothing at all (:func:`~mutepro.mute.verdicts.cold_stalls_of_silent_leaders`): a start over
        1,200 new partitions, whose second batches wait 1-2 s behind the brokers' start-up work while the same
        brokers deliver others, mutes none for it.
        """
        if load.warm or part.leader not in self.warm_leaders:
            return load
        return dataclasses.replace(load, warm=True)

    def suspicion(self, key: int) -> Suspicion:
        """The episodes of one leader (``outliers.leader_key``), created on first use."""
        found = self.suspicions.get(key)
        if found is None:
            rt = self.runtime
            found = self.suspicions[key] = Suspicion(rt.outlier_recur_s, rt.outlier_episode_s)
        return found


#: A detector verdict on one partition, with the records it is about: what the topic-wide rules keep or drop.
Candidate: TypeAlias = tuple[TopicRecord, PartitionRecord, Verdict]


def since_reset(part: PartitionRecord, load: PartitionLoad, now: float) -> PartitionLoad:
    """The load as the partition's fresh detectors should see it: without the messages sent before the reset.

    A stalled leader keeps its in-flight requests until librdkafka's request.timeout.ms (30 s by default)
    before they are retried to the new leader. Judged with them, a partition unmuted because its leadership
    moved would be re-muted (stalled, blamed on the healthy new leader) at the very next tick. Example: reset
    at t=100, now t=100.6, ages 1.6 (sent before) and 0.4 -> oldest 0.4, nothing stuck past a 1 s threshold.
    Counts and bytes stay whole: the old messages still fill the producer's buffer (congestion is real).
    """
    assert part.fresh_since is not None
    window = now - part.fresh_since
    if load.oldest_age_s is None or load.oldest_age_s <= window:
        part.fresh_since = None  # every message sent before the reset has its report
        return load
    # ages are oldest first: skip the prefix older than the reset with one bisection, keep a view of the rest
    older = load.count_older_than(window)
    ages = Tail(load.ages_s, older)
    return PartitionLoad(
        load.outstanding, load.outstanding_bytes, ages[0] if len(ages) else None, load.buffer_max_messages,
        load.buffer_max_bytes, ages, load.sent, load.warm,
    )


class Tail(Sequence[float]):
    """``seq[start:]`` as a view (no copy of a possibly long sequence of ages)."""

    __slots__ = ("_seq", "_start")

    def __init__(self, seq: Sequence[float], start: int) -> None:
        self._seq = seq
        self._start = start

    def __len__(self) -> int:
        return max(0, len(self._seq) - self._start)

    @overload
    def __getitem__(self, i: int) -> float: ...

    @overload
    def __getitem__(self, i: slice) -> list[float]: ...

    def __getitem__(self, i: int | slice) -> float | list[float]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._seq[self._start + i]
