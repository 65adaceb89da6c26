"""What a replay's decisions mean against its faults (mutepro.trace.summary), on hand-written replays: the first
mute, wrong partitions, flaps against failed probes, how long after the fault partitions stayed muted, and mutes
outside every fault."""

from __future__ import annotations

from mutepro.trace.replay import Decision, Fault, Replay
from mutepro.trace.summary import describe, summarize

#: broker 2 holds replicas of partitions 0 and 1; partition 2 lives on brokers 1 and 3 only
REPLICAS = {"t": {0: (2, 1), 1: (3, 2), 2: (1, 3)}}


def replay(*decisions: tuple[float, str, int], faults: tuple[Fault, ...] = (Fault(10.0, 2, "stall", 20.0),)) -> Replay:
    return Replay(
        decisions=[Decision(t, event, "t", p, 2, "slow_call") for t, event, p in decisions],
        faults=list(faults), replicas=REPLICAS, start=0.0, end=40.0,
    )


class TestFault:
    def test_a_clean_mute_and_let_go(self) -> None:
        s = summarize(replay((11.5, "mute", 0), (15.0, "probe", 0), (15.1, "remute", 0), (21.0, "probe", 0),
                             (21.5, "unmute", 0)))  # fmt: skip
        (fs,) = s.faults
        assert (fs.first_mute_s, fs.wrong, fs.flaps, fs.failed_probes) == (1.5, (), 0, 1)
        assert fs.unmuted_after_s == 1.5 and fs.still_muted == ()
        assert s.false_mutes == () and s.mutes == 2

    def test_a_partition_without_a_replica_there_is_wrong(self) -> None:
        (fs,) = summarize(replay((11.0, "mute", 2), (12.0, "unmute", 2))).faults
        assert fs.wrong == (("t", 2),) and fs.first_mute_s is None

    def test_muted_again_after_an_unmute_is_a_flap(self) -> None:
        (fs,) = summarize(replay((11.0, "mute", 1), (13.0, "unmute", 1), (14.0, "mute", 1), (25.0, "unmute", 1))).faults
        assert (fs.flaps, fs.max_mutes_per_partition, fs.unmuted_after_s) == (1, 2, 5.0)

    def test_still_muted_at_the_end_has_no_let_go_time(self) -> None:
        (fs,) = summarize(replay((11.0, "mute", 1))).faults
        assert fs.still_muted == (("t", 1),) and fs.unmuted_after_s is None


class TestFalseMutes:
    def test_mutes_outside_every_fault_and_its_settle_time(self) -> None:
        s = summarize(replay((5.0, "mute", 0), (6.0, "unmute", 0), (24.0, "mute", 1), (26.0, "unmute", 1),
                             (30.0, "mute", 1), (31.0, "unmute", 1)))  # fmt: skip
        assert [d.t for d in s.false_mutes] == [5.0, 30.0]  # 24.0 is within 5 s of the fault's end

    def test_without_faults_every_mute_is_false(self) -> None:
        s = summarize(replay((5.0, "mute", 0), faults=()))
        assert len(s.false_mutes) == 1 and s.faults == ()


def test_describe_says_each_figure() -> None:
    lines = describe(summarize(replay((5.0, "mute", 2), (6.0, "unmute", 2), (11.5, "mute", 0), (21.5, "unmute", 0))))
    assert lines[0] == "mutes: 2, outside every fault: 1"
    assert "false mute at 5.00s: t[2]" in lines[1]
    assert "first mute 1.50s, wrong partitions 0, flaps 0" in lines[2]
    assert "all unmuted 1.50s after it ended" in lines[2]
