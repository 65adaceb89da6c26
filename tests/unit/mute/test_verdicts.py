"""The topic-wide rules on detector verdicts: congestion, saturation, slow rates, served elsewhere
(mutepro.mute.verdicts)."""

from __future__ import annotations

from mutepro.detect.model import MuteReason, Verdict
from mutepro.mute.transitions import BreakerState
from mutepro.mute.verdicts import (
    congestion_outliers,
    served_elsewhere,
    slow_rates_still_waiting,
    without_saturation,
)
from tests.unit.mute._rules import CONGESTED, FAILING, SLOW, StubBreaker, candidates, topic


class TestCongestionOutliers:
    def test_a_partition_far_above_the_median_is_kept(self) -> None:
        """A stalled broker's partition holding 100x the others' median stays a verdict."""
        t = topic()
        outstanding = {p: 10_000 if p % 3 == 1 else 100 for p in range(12)}
        kept = congestion_outliers(candidates(t, CONGESTED, [1]), outstanding, 3.0)
        assert [c[1].partition for c in kept] == [1]

    def test_an_evenly_full_buffer_mutes_nothing(self) -> None:
        """A closed loop filling the buffer evenly (1.3x the median) is not congestion."""
        t = topic()
        outstanding = {p: 5_200 if p == 0 else 4_100 for p in range(12)}
        assert congestion_outliers(candidates(t, CONGESTED, [0]), outstanding, 3.0) == []

    def test_other_reasons_pass_untouched(self) -> None:
        """Only congestion verdicts are compared with the median."""
        t = topic()
        outstanding = dict.fromkeys(range(12), 100)
        kept = congestion_outliers(candidates(t, FAILING, [0]) + candidates(t, SLOW, [1]), outstanding, 3.0)
        assert len(kept) == 2

    def test_peers_are_the_partitions_taking_traffic(self) -> None:
        """Rack-aware partitioning sends a saturated queue to the 4 local partitions (25 % each); the 8 idle
        partitions are not peers, so none of the 4 is an outlier (against all 12 the median was 0: all muted)."""
        t = topic()
        local = [0, 3, 6, 9]
        outstanding = {p: 25_000 if p in local else 0 for p in range(12)}
        assert congestion_outliers(candidates(t, CONGESTED, local), outstanding, 3.0, local) == []
        assert len(congestion_outliers(candidates(t, CONGESTED, local), outstanding, 3.0)) == 4

    def test_a_stalled_partition_among_active_peers_is_kept(self) -> None:
        """The stalled partition itself need not be active (nothing new goes to it): its peers decide."""
        t = topic()
        outstanding = {0: 30_000, 3: 900, 6: 1_100, 9: 1_000, **{p: 0 for p in (1, 2, 4, 5, 7, 8, 10, 11)}}
        kept = congestion_outliers(candidates(t, CONGESTED, [0]), outstanding, 3.0, [3, 6, 9])
        assert [c[1].partition for c in kept] == [0]

    def test_no_peer_leaves_the_share_to_decide(self) -> None:
        t = topic()
        outstanding = {0: 30_000, **{p: 0 for p in range(1, 12)}}
        assert len(congestion_outliers(candidates(t, CONGESTED, [0]), outstanding, 3.0, [0])) == 1

    def test_a_factor_of_one_disables_the_rule(self) -> None:
        """outlier_factor <= 1 keeps every congestion verdict."""
        t = topic()
        outstanding = dict.fromkeys(range(12), 100)
        assert len(congestion_outliers(candidates(t, CONGESTED, [0]), outstanding, 1.0)) == 1


class TestWithoutSaturation:
    def test_the_partitions_written_to_all_waiting_behind_the_backlog_mute_nothing(self) -> None:
        """Rack-aware saturation: the 4 partitions written to all deliver and all hold 1.5 s old messages; the
        first verdict alone (one of 12) would have muted, but 4 of the 4 written to are queueing."""
        t = topic()
        local = [0, 3, 6, 9]
        for p in local:
            t.partitions[p].delivered_at = 99.8
        kept = without_saturation(t, candidates(t, SLOW, [3]), dict.fromkeys(local, 1.5), 100.0)
        assert kept == [] and t.saturated

    def test_the_partitions_written_to_delivering_nothing_are_stalled_not_saturated(self) -> None:
        """The same 4 partitions with their broker stopped deliver nothing: the verdicts stay."""
        t = topic()
        local = [0, 3, 6, 9]
        for p in local:
            t.partitions[p].delivered_at = 97.0
        kept = without_saturation(t, candidates(t, SLOW, local), dict.fromkeys(local, 3.0), 100.0)
        assert len(kept) == 4 and not t.saturated

    def test_a_minority_waiting_among_the_partitions_written_to_is_muted(self) -> None:
        """A limping broker: 4 of 12 written-to partitions old (they deliver between stops), 8 young."""
        t = topic()
        for p in range(12):
            t.partitions[p].delivered_at = 99.9
        ages = {p: (0.9 if p % 3 == 1 else 0.01) for p in range(12)}
        assert len(without_saturation(t, candidates(t, SLOW, [1, 4]), ages, 100.0)) == 2

    def test_a_third_slow_is_muted(self) -> None:
        """One broker of three slow (4 of 12 partitions): every slow verdict stays."""
        t = topic()
        kept = without_saturation(t, candidates(t, SLOW, [0, 3, 6, 9]))
        assert len(kept) == 4 and not t.saturated

    def test_slow_everywhere_mutes_nothing_and_says_so(self) -> None:
        """All 12 slow at once (saturation, or RF=3 acks=all with a stalled ISR member): none muted."""
        t = topic()
        kept = without_saturation(t, candidates(t, SLOW, list(range(12))) + candidates(t, FAILING, [0]))
        assert [c[2] for c in kept] == [FAILING] and t.saturated

    def test_partitions_already_slow_muted_count(self) -> None:
        """4 already muted for slow calls plus 3 new ones make 7 of 12: over half, the new ones are dropped."""
        t = topic()
        for p in (0, 3, 6, 9):
            t.partitions[p].breaker = StubBreaker(BreakerState.OPEN, SLOW)  # type: ignore[assignment]
        assert without_saturation(t, candidates(t, SLOW, [1, 4, 7])) == []

    def test_exactly_half_is_still_muted(self) -> None:
        """6 of 12 is not more than half: muted."""
        t = topic()
        assert len(without_saturation(t, candidates(t, SLOW, list(range(6))))) == 6

    def test_the_flag_clears_when_the_burst_ends(self) -> None:
        """After a saturated round, a round with few slow partitions clears t.saturated."""
        t = topic()
        without_saturation(t, candidates(t, SLOW, list(range(12))))
        without_saturation(t, candidates(t, SLOW, [0]))
        assert not t.saturated

    def test_a_single_partition_topic_is_never_saturated(self) -> None:
        """With one partition, its slow verdict is kept (there is nothing to compare it with)."""
        t = topic(partitions=1)
        assert len(without_saturation(t, candidates(t, SLOW, [0]))) == 1


class TestSlowRatesStillWaiting:
    def test_a_rate_verdict_with_nothing_waiting_now_is_dropped(self) -> None:
        """One slow sticky batch, delivered: 1,954 of 1,954 calls slow, nothing stuck now -> no verdict."""
        t = topic()
        history = Verdict(MuteReason.SLOW_CALL, {"slow_call_rate": 1.0, "calls": 1954, "stuck": 0})
        assert slow_rates_still_waiting(candidates(t, history, [0])) == []

    def test_a_rate_verdict_with_messages_still_waiting_stands(self) -> None:
        """A partition slow now (messages past the threshold still undelivered) keeps its rate verdict."""
        t = topic()
        now_slow = Verdict(MuteReason.SLOW_CALL, {"slow_call_rate": 0.9, "calls": 40, "stuck": 3})
        assert len(slow_rates_still_waiting(candidates(t, now_slow, [0]))) == 1

    def test_stall_outlier_and_other_verdicts_pass_untouched(self) -> None:
        """Only the rate rule is filtered: stalls, outliers, failures and congestion keep their verdicts."""
        t = topic()
        stall = Verdict(MuteReason.SLOW_CALL, {"stalled": 1, "stuck": 4})
        outlier = Verdict(MuteReason.SLOW_CALL, {"rule": "outlier", "oldest_age_s": 0.6})
        kept = slow_rates_still_waiting(
            candidates(t, stall, [0]) + candidates(t, outlier, [1]) + candidates(t, FAILING, [2])
            + candidates(t, CONGESTED, [3])
        )
        assert [c[1].partition for c in kept] == [0, 1, 2, 3]


class TestServedElsewhere:
    """12 partitions led by brokers 1, 2, 3 in turn; now = 100.0; the waiting partitions' oldest message 1.5 s old
    (sent at 98.5)."""

    STALLED = Verdict(MuteReason.SLOW_CALL, {"stalled": 1})

    def test_nothing_delivered_anywhere_while_they_waited_mutes_nothing(self) -> None:
        """RF 3, acks=all, a stalled follower: partitions 0 (broker 1) and 1 (broker 2) both wait, and the last
        delivery anywhere came before their messages were sent: neither verdict stands."""
        t = topic()
        t.partitions[0].delivered_at = t.partitions[1].delivered_at = 98.4
        kept = served_elsewhere(t, candidates(t, self.STALLED, [0, 1]), {0: 1.5, 1: 1.5}, [0, 1], 100.0)
        assert kept == []

    def test_another_broker_answering_meanwhile_keeps_the_verdict(self) -> None:
        """Broker 3 delivered partition 2's messages at 99.0, after partition 1's oldest was sent: broker 2's
        wait is its own, and its verdict stands."""
        t = topic()
        t.partitions[2].delivered_at = 99.0
        kept = served_elsewhere(t, candidates(t, self.STALLED, [1]), {1: 1.5, 2: 0.0}, [1, 2], 100.0)
        assert [c[1].partition for c in kept] == [1]

    def test_the_partitions_own_leader_answering_is_no_evidence(self) -> None:
        """Partition 4 (broker 2 too) delivered meanwhile: not another broker, the verdict is dropped."""
        t = topic()
        t.partitions[4].delivered_at = 99.0
        kept = served_elsewhere(t, candidates(t, self.STALLED, [1]), {1: 1.5, 4: 0.0, 2: 1.5}, [1, 2, 4], 100.0)
        assert kept == []

    def test_a_delivery_counted_in_the_round_the_message_was_sent_is_before_it(self) -> None:
        """Strictly after: a delivery at 98.5, the round that counted the waiting message, is not 'meanwhile'
        (partition 2 holds a message too, so broker 2 is not the only broker waited on)."""
        t = topic()
        t.partitions[2].delivered_at = 98.5
        assert served_elsewhere(t, candidates(t, self.STALLED, [1]), {1: 1.5, 2: 0.2}, [1, 2], 100.0) == []

    def test_a_burst_answered_elsewhere_keeps_the_verdict(self) -> None:
        """One burst to every partition at 98.5 (the round that counted the waiting message), then nothing: broker
        3's partition 2 delivered all of it (holds nothing), broker 2's partition 1 still waits 1.5 s on. No
        delivery is strictly after 98.5, but partition 2 answered what was sent with it: the verdict stands. Not
        when partition 2 was last written before that round, nor while it still holds a message. (Partition 1
        waits on its followers too, acks=all: the verdict needs the answer even when nothing else waits.)"""
        t = topic()
        t.replicas[1] = t.isrs[1] = (2, 3, 1)
        t.partitions[2].delivered_at = 98.5
        for written, holds, kept in ((98.5, 0.0, 1), (98.45, 0.0, 0), (98.5, 0.3, 0)):
            t.partitions[2].active_at = written
            held = {1: 1.5, 2: holds}
            assert len(served_elsewhere(t, candidates(t, self.STALLED, [1]), held, [1, 2], 100.0)) == kept

    def test_the_sole_leader_of_what_is_written_keeps_its_verdicts(self) -> None:
        """A rack-aware producer writes only broker 2's partitions 1, 4, 7, 10; broker 2 stalls and no other broker
        is written to, so none can answer: the stall verdicts stand, as the stall rule gives them."""
        t = topic()
        local = [1, 4, 7, 10]
        kept = served_elsewhere(t, candidates(t, self.STALLED, local), dict.fromkeys(local, 1.5), local, 100.0)
        assert len(kept) == 4

    def test_the_sole_leader_of_what_waits_keeps_its_verdicts_whatever_was_written_before(self) -> None:
        """A Spark task's 1,000 rows all went to broker 2's partitions 1, 4 and 7 (RF 1), which stalled; the task
        before it, 0.8 s earlier, wrote partitions 0 and 2 (brokers 1 and 3), delivered at 98.4 and holding
        nothing now. Nothing was sent to brokers 1 and 3 since, so neither could answer: broker 2 is the sole
        leader of what the producer waits on, and the stall verdicts stand (they were held back until the
        leadership moved, 15 s in, and the rows timed out). With partition 2 still holding a message, broker 3
        is waited on too and has not answered: the verdicts need its answer again."""
        t = topic()
        t.partitions[0].delivered_at = t.partitions[2].delivered_at = 98.4
        waiting = [1, 4, 7]
        held = {**dict.fromkeys(waiting, 1.5), 0: 0.0, 2: 0.0}
        assert len(served_elsewhere(t, candidates(t, self.STALLED, waiting), held, [0, 1, 2, 4, 7], 100.0)) == 3
        held[2] = 1.6
        assert served_elsewhere(t, candidates(t, self.STALLED, waiting), held, [0, 1, 2, 4, 7], 100.0) == []

    def test_a_sole_leader_with_followers_in_sync_under_acks_all_is_not_blamed(self) -> None:
        """A Spark task writes only partition 1 (led by broker 2) of an RF 3 topic with acks=all:
        its write waits for every in-sync replica, so its wait may be a follower's; nothing else was written, so
        no broker answered and nothing says it is the leader's: the verdict does not stand. With acks=1, or RF 1,
        the leader is the only broker it waits on, and the verdict stands."""
        t = topic()
        t.replicas[1] = (2, 3, 1)
        t.isrs[1] = (2, 3, 1)
        assert served_elsewhere(t, candidates(t, self.STALLED, [1]), {1: 1.5}, [1], 100.0) == []
        t.isrs[1] = (2,)  # the followers dropped from the ISR: only the leader is waited on
        assert len(served_elsewhere(t, candidates(t, self.STALLED, [1]), {1: 1.5}, [1], 100.0)) == 1
        t1 = topic()
        t1.acks_all = False
        t1.replicas[1] = t1.isrs[1] = (2, 3, 1)
        assert len(served_elsewhere(t1, candidates(t1, self.STALLED, [1]), {1: 1.5}, [1], 100.0)) == 1

    def test_a_partition_muted_by_detection_still_counts_as_written(self) -> None:
        """Partition 1 (broker 2) was muted a round ago; partition 0 (broker 1) drains a backlog that waited for
        the stalled follower: broker 1 is not the sole leader written to, and its verdict needs another broker
        answering -- broker 2 did not."""
        t = topic()
        t.partitions[1].breaker = StubBreaker(BreakerState.OPEN, self.STALLED)  # type: ignore[assignment]
        t.not_closed = {1}
        t.partitions[0].delivered_at = 100.0
        assert served_elsewhere(t, candidates(t, SLOW, [0]), {0: 8.4}, [0], 100.0) == []
        t.partitions[1].breaker = StubBreaker(BreakerState.OPEN, Verdict(MuteReason.MANUAL))  # type: ignore[assignment]
        assert len(served_elsewhere(t, candidates(t, SLOW, [0]), {0: 8.4}, [0], 100.0)) == 1  # by hand: not written

    def test_other_verdicts_pass_untouched(self) -> None:
        t = topic()
        found = candidates(t, FAILING, [0]) + candidates(t, CONGESTED, [1])
        assert served_elsewhere(t, found, {0: 1.5, 1: 1.5}, [0, 1], 100.0) == found
