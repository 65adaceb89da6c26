"""The per-broker evidence of a round and which broker a partition waits on (mutepro.mute.brokers)."""

from __future__ import annotations

from mutepro.detect.model import MuteReason, Verdict
from mutepro.mute.brokers import own_evidence_by_leader, waits_on, written_by_leader
from mutepro.mute.records import TopicRecord
from mutepro.mute.transitions import BreakerState
from tests.unit.mute._rules import SLOW, StubBreaker, topic


class TestOwnEvidenceByLeader:
    def test_counts_open_partitions_per_leader(self) -> None:
        """Open breakers with their own verdict count against their leader."""
        t = topic()
        for p in (0, 3, 1):
            t.partitions[p].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        assert own_evidence_by_leader([t]) == {1: 2, 2: 1}

    def test_broker_verdicts_half_open_and_unknown_leaders_do_not_count(self) -> None:
        """Muted by the broker rule itself, on probation, or leaderless: no evidence."""
        t = topic()
        t.partitions[0].breaker = StubBreaker(BreakerState.OPEN, Verdict(MuteReason.BROKER))  # type: ignore[assignment]
        t.partitions[3].breaker = StubBreaker(BreakerState.HALF_OPEN, SLOW)  # type: ignore[assignment]
        t.partitions[6].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        t.partitions[6].leader = -1
        assert own_evidence_by_leader([t]) == {}


class TestWrittenByLeader:
    def test_counts_partitions_sent_to_or_muted(self) -> None:
        """Partitions with traffic (active_at set) or not closed count for their leader; idle closed ones do not."""
        t = topic()
        for p in (0, 3, 1):
            t.partitions[p].active_at = 1.0
        t.partitions[4].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        assert written_by_leader([t]) == {1: 2, 2: 2}


class TestWaitsOn:
    def _five_brokers(self) -> TopicRecord:
        """20 partitions on brokers 1-5, RF 3: partition p on (p % 5 + 1, (p + 1) % 5 + 1, (p + 2) % 5 + 1)."""
        t = topic(partitions=20, leaders=5)
        t.replicas = {p: (p % 5 + 1, (p + 1) % 5 + 1, (p + 2) % 5 + 1) for p in range(20)}
        return t

    def test_a_stopped_follower_is_named_as_a_replica(self) -> None:
        """Broker 4 stopped: the 12 partitions with a replica on it wait; partition 1 (led by 2) waits on 4."""
        t = self._five_brokers()
        waiting = {p for p, reps in t.replicas.items() if 4 in reps}
        assert len(waiting) == 12
        assert waits_on(t, 1, waiting, range(20)) == ("replica", 4)

    def test_a_stopped_leader_is_named_as_the_leader(self) -> None:
        """With acks=1 only broker 4's own partitions wait: they wait on their leader."""
        t = self._five_brokers()
        waiting = {p for p in range(20) if t.partitions[p].leader == 4}
        assert waits_on(t, 3, waiting, range(20)) == ("leader", 4)

    def test_without_replicas_it_is_the_leader(self) -> None:
        t = topic()
        assert waits_on(t, 2, {2}, range(12)) == ("leader", 3)
