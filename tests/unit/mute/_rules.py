"""What the tests of the topic-wide rules build: topic records with stub breakers, and verdicts."""

from __future__ import annotations

from dataclasses import dataclass

from mutepro.detect.model import MuteReason, Verdict
from mutepro.mute.records import Candidate, PartitionRecord, TopicRecord
from mutepro.mute.transitions import BreakerState
from mutepro.policy.schema import TopicPolicy

SLOW = Verdict(MuteReason.SLOW_CALL, {"slow_call_rate": 0.9})
CONGESTED = Verdict(MuteReason.CONGESTION, {"share_pct": 40})
FAILING = Verdict(MuteReason.FAILURE_RATE, {"failure_rate": 0.8})


@dataclass
class StubBreaker:
    """Only what the rules read: the state and the verdict that opened it."""

    state: BreakerState = BreakerState.CLOSED
    reason: Verdict | None = None
    rejoined: bool = False


def topic(partitions: int = 12, leaders: int = 3, policy: TopicPolicy | None = None) -> TopicRecord:
    t = TopicRecord("t", policy or TopicPolicy())
    t.first_write_at = t.last_write_at = 0.0  # written to long before (past its cold start)
    for p in range(partitions):
        part = PartitionRecord(p, StubBreaker(), [])  # type: ignore[arg-type]  # the rules read state/reason
        part.leader = p % leaders + 1
        part.reported_ever = True  # warm (see TestAgeOutliers.test_a_cold_partition_waits_out_the_warm_up)
        t.partitions[p] = part
    return t


def candidates(t: TopicRecord, verdict: Verdict, partitions: list[int]) -> list[Candidate]:
    return [(t, t.partitions[p], verdict) for p in partitions]
