"""What a replay's decisions mean against its faults (mutepro.trace.summary), on hand-written replays: which
partitions a fault affects, how soon one was muted, wrong partitions, flaps and failed probes, when the last one
came back, mutes outside every fault, and the lines a person reads."""

from __future__ import annotations

from mutepro.trace.replay import Decision, Fault, Replay
from mutepro.trace.summary import affected, describe, summarize

#: topic t: partitions 0 and 1 have a replica on broker 1, partition 2 does not
REPLICAS = {"t": {0: (1, 2), 1: (3, 1), 2: (2, 3)}}
STALL = Fault(10.0, 1, "stall", end=20.0)


def _d(t: float, event: str, partition: int) -> Decision:
    return Decision(t, event, "t", partition, 1, "slow_call")


def _replay(*decisions: Decision, faults: tuple[Fault, ...] = (STALL,)) -> Replay:
    return Replay(decisions=list(decisions), faults=list(faults), replicas=REPLICAS, end=40.0)


class TestAffected:
    def test_the_partitions_with_a_replica_on_the_faults_broker(self) -> None:
        assert affected(_replay(), STALL) == {("t", 0), ("t", 1)}


class TestSummarize:
    def test_first_mute_wrong_partitions_flaps_and_failed_probes(self) -> None:
        """Partition 0 muted 0.8 s into the fault, unmuted, muted again (a flap), then re-muted after a probe;
        partition 2 (no replica on broker 1) muted: wrong. Everything unmuted 1.5 s after the fault ended."""
        r = _replay(
            _d(10.8, "mute", 0), _d(12.0, "unmute", 0), _d(13.0, "mute", 0), _d(14.0, "probe", 0),
            _d(14.5, "remute", 0), _d(15.0, "mute", 2), _d(16.0, "unmute", 2), _d(21.5, "unmute", 0),
        )
        summary = summarize(r)
        assert summary.mutes == 4 and summary.false_mutes == ()
        (fs,) = summary.faults
        assert fs.first_mute_s is not None and abs(fs.first_mute_s - 0.8) < 1e-9
        assert fs.wrong == (("t", 2),)
        assert (fs.flaps, fs.max_mutes_per_partition, fs.failed_probes) == (1, 2, 1)
        assert fs.unmuted_after_s is not None and abs(fs.unmuted_after_s - 1.5) < 1e-9
        assert fs.still_muted == ()

    def test_a_mute_outside_every_fault_and_its_settle_time_is_false(self) -> None:
        """Settle 5 s: a mute at 24 s belongs to the fault that ended at 20 s, one at 30 s does not."""
        r = _replay(_d(5.0, "mute", 0), _d(24.0, "mute", 1), _d(30.0, "mute", 2))
        assert [d.t for d in summarize(r).false_mutes] == [5.0, 30.0]
        assert [d.t for d in summarize(r, settle_s=15.0).false_mutes] == [5.0]

    def test_never_muted_and_still_muted(self) -> None:
        nothing = summarize(_replay()).faults[0]
        assert nothing.first_mute_s is None and nothing.unmuted_after_s == 0.0
        stuck = summarize(_replay(_d(11.0, "mute", 1))).faults[0]
        assert stuck.still_muted == (("t", 1),) and stuck.unmuted_after_s is None

    def test_a_false_mute_after_the_settle_time_does_not_stretch_the_let_go(self) -> None:
        """Partition 0 muted in the fault and unmuted 2 s after it; partition 2 muted 10 s after it (false) and
        unmuted 12 s after: the fault let go in 2 s, and the mute at 30 s is counted as false."""
        r = _replay(_d(11.0, "mute", 0), _d(22.0, "unmute", 0), _d(30.0, "mute", 2), _d(32.0, "unmute", 2))
        summary = summarize(r)
        (fs,) = summary.faults
        assert fs.unmuted_after_s == 2.0 and [d.t for d in summary.false_mutes] == [30.0]

    def test_a_mute_within_the_settle_time_is_waited_for(self) -> None:
        """Partition 1 re-muted 1 s after the fault (a failed probe of a broker still recovering), unmuted 4 s
        after: that is the let-go."""
        r = _replay(_d(11.0, "mute", 1), _d(20.5, "unmute", 1), _d(21.0, "remute", 1), _d(24.0, "unmute", 1))
        (fs,) = summarize(r).faults
        assert fs.unmuted_after_s == 4.0

    def test_without_faults_every_mute_is_false(self) -> None:
        summary = summarize(_replay(_d(1.0, "mute", 0), _d(2.0, "unmute", 0), faults=()))
        assert (summary.mutes, len(summary.false_mutes), summary.faults) == (1, 1, ())


class TestDescribe:
    def test_the_lines_a_person_reads(self) -> None:
        lines = describe(summarize(_replay(_d(5.0, "mute", 2), _d(10.5, "mute", 0))))
        assert lines[0] == "mutes: 2, outside every fault: 1"
        assert lines[1] == "  false mute at 5.00s: t[2] broker 1 (slow_call)"
        assert lines[2].startswith("fault stall broker 1 10.0-20.0s: first mute 0.50s, wrong partitions 0")
        assert lines[2].endswith("all unmuted still muted after it ended")
