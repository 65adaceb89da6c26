"""Replaying a trace through the detection model: what it would have decided on the recorded evidence.

Replay builds a fresh :class:`~mutepro.mute.manager.ProducerMuteManager` on a clock that reads the trace's time,
and feeds it each round's reports and loads exactly as the producer's driver does. Its decisions are collected
from its events. Two things the recording cannot answer are answered by an *oracle*:

- a partition the model mutes takes no traffic, so the trace says nothing more about it than the recording
  producer saw; and
- probes: whether a probe of a half-open partition would have been delivered in time.

The oracle answers "is this partition's leader answering at ``t``": from the trace's ``fault`` records when it
has them (a harness that injected the faults wrote them; a limp's stops are computed from its period and duty),
else from the evidence (some partition of the same leader delivered within :data:`ANSWERED_S` and none of them
holds a message older than the topic's probe limit).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mutepro.detect.model import PartitionLoad
from mutepro.detect.stats import BrokerStats, StatsSnapshot
from mutepro.mute.brokers import acks_wait_for_isr
from mutepro.mute.events import MuteEvent
from mutepro.mute.manager import ProducerMuteManager
from mutepro.policy.schema import TopicPolicy
from mutepro.trace.format import AgeCounts, TraceError, open_trace

#: A bound on the probes one partition takes in one replayed round (its breaker's spacing normally allows one).
_MAX_PROBES_PER_ROUND = 100
#: A leader counts as answering when one of its partitions delivered within this long (the evidence oracle).
ANSWERED_S = 0.5


@dataclass(frozen=True)
class Decision:
    """One mute decision: ``event`` is ``mute``, ``remute``, ``probe`` or ``unmute``."""

    t: float
    event: str
    topic: str
    partition: int
    broker: int | None
    reason: str


@dataclass(frozen=True)
class Fault:
    """A fault a harness injected: ``broker`` stalled, limping (``period_s``, ``duty``) or killed, from ``t`` to
    ``end`` (``None``: to the end of the trace)."""

    t: float
    broker: int
    fault: str
    end: float | None = None
    period_s: float = 1.0
    duty: float = 1.0

    def down_at(self, t: float) -> bool:
        """Whether the broker was not answering at ``t``."""
        if t < self.t or (self.end is not None and t >= self.end):
            return False
        if self.fault != "limp":
            return True
        return (t - self.t) % self.period_s < self.duty * self.period_s


@dataclass
class Replay:
    """What a replay found: the model's decisions, the recording producer's, the faults, each topic's replicas."""

    decisions: list[Decision] = field(default_factory=list)
    recorded: list[Decision] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    replicas: dict[str, dict[int, tuple[int, ...]]] = field(default_factory=dict)
    start: float = 0.0
    end: float = 0.0
    rounds: int = 0

    def mutes(self) -> list[Decision]:
        """The first mutes and re-mutes, in order."""
        return [d for d in self.decisions if d.event in ("mute", "remute")]

    def muted_at(self, t: float) -> set[tuple[str, int]]:
        """The partitions muted (open or half-open) at ``t``."""
        state: dict[tuple[str, int], str] = {}
        for d in self.decisions:
            if d.t > t:
                break
            state[(d.topic, d.partition)] = d.event
        return {k for k, ev in state.items() if ev in ("mute", "remute", "probe")}


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _stats(rec: Mapping[str, Any]) -> StatsSnapshot:
    brokers = {int(b): BrokerStats(**fields) for b, fields in rec["brokers"].items()}
    return StatsSnapshot(
        ts_s=float(rec["ts_s"]), msg_cnt=int(rec["msg_cnt"]), msg_max=int(rec["msg_max"]),
        msg_size=int(rec["msg_size"]), msg_size_max=int(rec["msg_size_max"]), brokers=brokers, partitions={},
    )


def replay(
    source: str | os.PathLike[str] | Sequence[Mapping[str, Any]], policy: TopicPolicy | None = None,
) -> Replay:
    """Run the detection model over a trace (a path or its records); ``policy`` replaces the recorded policy of
    every topic (to see what another setting would have decided)."""
    records = list(open_trace(source) if isinstance(source, str | os.PathLike) else source)
    clock = _Clock()
    out = Replay()
    # faults first: a harness appends them after the producer closed the trace (see format.append_records)
    start = float(records[0].get("t", 0.0)) if records else 0.0
    out.faults = [
        Fault(
            float(rec["t"]) - start, int(rec["broker"]), str(rec["fault"]),
            None if rec.get("end") is None else float(rec["end"]) - start,
            float(rec.get("period_s", 1.0)), float(rec.get("duty", 1.0)),
        )
        for rec in records if rec.get("kind") == "fault"
    ]
    policies: dict[str, TopicPolicy] = {}
    buffer = (100_000, 1_048_576 * 1024)

    def policy_for(topic: str) -> TopicPolicy:
        return policy if policy is not None else policies.get(topic, TopicPolicy())

    def on_event(event: MuteEvent) -> None:
        out.decisions.append(Decision(
            round(clock.now - out.start, 4), str(event.kind), event.topic, event.partition, event.broker,
            str(event.reason),
        ))

    client = records[0].get("client", {}) if records else {}
    manager = ProducerMuteManager(
        policy_for, clock=clock, wall_clock=clock, on_event=on_event,
        acks_all=acks_wait_for_isr(client.get("acks", client.get("request.required.acks"))),
    )
    leaders: dict[str, dict[int, int]] = {}
    sent: dict[tuple[str, int], tuple[int, bool]] = {}
    delivered_at: dict[tuple[str, int], float] = {}
    loads: dict[tuple[str, int], PartitionLoad] = {}
    busy: dict[str, frozenset[int]] = {}
    stats: StatsSnapshot | None = None
    first = True

    def load_of(topic: str, p: int, now: float) -> PartitionLoad:
        found = loads.get((topic, p))
        if found is not None:
            return found
        n, warm = sent.get((topic, p), (0, False))
        return PartitionLoad(0, 0, None, buffer[0], buffer[1], sent=n, warm=warm)

    def answering(topic: str, p: int, now: float) -> bool:
        leader = leaders.get(topic, {}).get(p, -1)
        if out.faults:
            return not any(f.broker == leader and f.down_at(now - out.start) for f in out.faults)
        mine = [q for q, ld in leaders.get(topic, {}).items() if ld == leader]
        limit = manager.policy(topic).slow_call.threshold_ms / 1000.0
        recent = any(now - delivered_at.get((topic, q), -1e9) <= ANSWERED_S for q in mine)
        stuck = any((ld := loads.get((topic, q))) is not None and (ld.oldest_age_s or 0.0) > limit for q in mine)
        return recent and not stuck

    for rec in records:
        kind = rec.get("kind")
        t = float(rec.get("t", clock.now))
        if first:
            if kind != "start":
                raise TraceError("trace: the first record is not a start record")
            out.start = clock.now = t
            buffer = (
                int(rec["client"].get("queue.buffering.max.messages", buffer[0])),
                int(rec["client"].get("queue.buffering.max.kbytes", buffer[1] // 1024)) * 1024,
            )
            first = False
            continue
        clock.now = max(clock.now, t)
        if kind == "meta":
            topic = rec["topic"]
            if "policy" in rec:
                policies[topic] = TopicPolicy.model_validate(rec["policy"])
            rows = rec["partitions"]
            new = {int(r[0]): int(r[1]) for r in rows}
            out.replicas[topic] = {int(r[0]): tuple(r[2]) for r in rows}
            # as the producer's metadata refresh does: leaders, replicas and in-sync replicas
            manager.rounds.ensure_topic(topic, len(rows), new, {int(r[0]): list(r[2]) for r in rows},
                                 {int(r[0]): list(r[3]) for r in rows if len(r) > 3})
            leaders[topic] = new
        elif kind == "stats":
            stats = _stats(rec)
        elif kind == "decision":
            out.recorded.append(Decision(
                round(t - out.start, 4), rec["event"], rec["topic"], int(rec["partition"]), rec.get("broker"),
                rec["reason"],
            ))
        elif kind == "round":
            out.rounds += 1
            loads.clear()
            parts: dict[str, set[int]] = {}
            for topic, p, n, outstanding, nbytes, oldest_ms, warm, older in rec["loads"]:
                oldest = None if oldest_ms < 0 else oldest_ms / 1000.0
                sent[(topic, p)] = (n, bool(warm))
                parts.setdefault(topic, set()).add(p)
                loads[(topic, p)] = PartitionLoad(
                    outstanding, nbytes, oldest, buffer[0], buffer[1],
                    ages_s=AgeCounts(oldest, tuple(older), outstanding), sent=n, warm=bool(warm),
                )
            busy = {topic: frozenset(ps) for topic, ps in parts.items()}
            for topic, p, calls, failures, slow in rec["reports"]:
                delivered_at[(topic, p)] = t
                manager.rounds.record_many(topic, p, calls, failures, slow, t)
            manager.rounds.evaluate(load_of, stats, _busy_reader(busy))
            _probe(manager, leaders, answering, t)
    out.end = clock.now - out.start
    return out


def _busy_reader(busy: Mapping[str, frozenset[int]]) -> Any:
    """The round's busy partitions per topic, as the tracker's ``busy`` answers them."""
    return lambda topic: busy.get(topic, frozenset())


def _probe(manager: ProducerMuteManager, leaders: Mapping[str, Mapping[int, int]], answering: Any, now: float) -> None:
    """Send what probes the half-open partitions take now, and report each at once by the oracle (a probe to an
    answering leader is delivered; one to a stopped leader fails)."""
    for topic in leaders:
        for p in sorted(manager.probes.probing(topic)):
            for _ in range(_MAX_PROBES_PER_ROUND):
                if not manager.probes.try_probe(topic, p):
                    break
                ok = answering(topic, p, now)
                manager.probes.probe_result(topic, p, ok, 0.001 if ok else None)
