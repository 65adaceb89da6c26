"""Reassignment planning (fewest moves), the reassignment JSON, and applying through a fake tool runner."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mutepro.errors import ConfigError
from mutepro.racks.audit import ClusterSnapshot, PartitionState, audit
from mutepro.racks.reassign import (
    REASSIGN_TOOL_CLASS,
    CommandResult,
    ReassignmentError,
    _await_metadata,
    apply_reassignment,
    balance_leaders,
    fix_replicas,
    parse_reassignment_json,
    parse_verify_output,
    plan_reassignment,
    read_reassignment_json,
    spread_replicas,
    with_assignment,
    write_reassignment_json,
)

RACKS: dict[int, str | None] = {1: "rack-a", 2: "rack-b", 3: "rack-c", 4: "rack-a", 5: "rack-b", 6: "rack-c"}
THREE: dict[int, str | None] = {1: "rack-a", 2: "rack-b", 3: "rack-c"}


def _snapshot(brokers: dict[int, str | None], layout: dict[str, list[tuple[int, ...]]]) -> ClusterSnapshot:
    parts = tuple(PartitionState(t, p, reps, reps[0]) for t, rows in layout.items() for p, reps in enumerate(rows))
    return ClusterSnapshot(brokers, parts)


class TestFixReplicas:
    def test_one_move_keeps_leader_and_other_rack(self) -> None:
        """[1, 4, 2] (a, a, b) → only broker 4 is replaced, by a rack-c broker, in the same slot."""
        fixed = fix_replicas((1, 4, 2), RACKS)
        assert fixed[0] == 1 and fixed[2] == 2
        assert RACKS[fixed[1]] == "rack-c"

    def test_least_loaded_replacement(self) -> None:
        """Between rack-c brokers 3 and 6, the one with fewer replicas is chosen."""
        assert fix_replicas((1, 4, 2), RACKS, {3: 10, 6: 2})[1] == 6

    def test_already_complete_is_unchanged(self) -> None:
        """A rack-complete list is returned as is."""
        assert fix_replicas((1, 2, 3), RACKS) == (1, 2, 3)

    def test_moves_equal_missing_racks(self) -> None:
        """RF 3 all on rack-a needs exactly two moves."""
        fixed = fix_replicas((1, 4, 7), {**RACKS, 7: "rack-a"})
        assert fixed[0] == 1
        assert len(set(fixed) - {1, 4, 7}) == 2


class TestSpreadReplicas:
    def test_rf2_starved_rack_gets_its_share_in_four_moves(self) -> None:
        """6 partitions on a/b only: four single-replica moves make it 4/4/4."""
        before = {p: ((1, 2) if p % 2 else (2, 1)) for p in range(6)}
        after = spread_replicas(before, THREE)
        moves = sum(len(set(after[p]) - set(before[p])) for p in before)
        assert moves == 4
        local = {
            r: sum(1 for reps in after.values() if any(THREE[b] == r for b in reps))
            for r in ("rack-a", "rack-b", "rack-c")
        }
        assert local == {"rack-a": 4, "rack-b": 4, "rack-c": 4}
        assert all(after[p][0] == before[p][0] for p in before)  # leaders stay


class TestBalanceLeaders:
    def test_fewest_leader_changes(self) -> None:
        """Leaders 4/1/1 on six rack-complete partitions become 2/2/2 with two reorders."""
        before = {0: (1, 2, 3), 1: (1, 2, 3), 2: (1, 2, 3), 3: (1, 2, 3), 4: (2, 3, 1), 5: (3, 1, 2)}
        after = balance_leaders(before, THREE)
        assert sorted(after[p][0] for p in after) == [1, 1, 2, 2, 3, 3]
        assert sum(after[p][0] != before[p][0] for p in before) == 2
        assert all(set(after[p]) == set(before[p]) for p in before)


class TestPlan:
    def test_plan_fixes_audit(self) -> None:
        """The planned assignment audits clean, with the minimum replica moves."""
        snap = _snapshot(RACKS, {"t": [(1, 4, 2), (2, 5, 3), (1, 2, 3), (4, 5, 6), (1, 5, 6), (4, 2, 3)]})
        plan = plan_reassignment(snap)
        assert plan.replica_moves == 2
        assert audit(with_assignment(snap, plan.proposed())).clean

    def test_clean_topic_plans_nothing(self) -> None:
        """Nothing to do for a balanced topic."""
        snap = _snapshot(THREE, {"t": [(1, 2, 3), (2, 3, 1), (3, 1, 2)]})
        assert plan_reassignment(snap).empty

    def test_leader_mismatch_becomes_election(self) -> None:
        """Right order but the live leader is not the preferred one → an election, no move."""
        parts = (
            PartitionState("t", 0, (1, 2, 3), 2),
            PartitionState("t", 1, (2, 3, 1), 2),
            PartitionState("t", 2, (3, 1, 2), 3),
        )
        plan = plan_reassignment(ClusterSnapshot(THREE, parts))
        assert plan.moves == () and plan.elections == (("t", 0),)

    def test_unknown_topic_names_it(self) -> None:
        """Asking for a topic not in the snapshot names it."""
        with pytest.raises(ConfigError, match="'nope'"):
            plan_reassignment(_snapshot(THREE, {"t": [(1, 2, 3)]}), ["nope"])

    def test_rollback_is_current(self) -> None:
        """The rollback JSON holds the current replicas of the moved partitions."""
        snap = _snapshot(RACKS, {"t": [(1, 4, 2)]})
        plan = plan_reassignment(snap, fix_leaders=False)
        assert plan.to_rollback()["partitions"][0]["replicas"] == [1, 4, 2]


class TestReassignmentJson:
    def test_roundtrip(self, tmp_path: Path) -> None:
        """Written JSON is Kafka's format and reads back to the same plan."""
        snap = _snapshot(RACKS, {"t": [(1, 4, 2), (2, 5, 3)]})
        plan = plan_reassignment(snap)
        path = write_reassignment_json(plan, tmp_path / "r.json")
        doc = json.loads(path.read_text())
        assert doc["version"] == 1 and doc["partitions"][0]["log_dirs"] == ["any"] * 3
        assert read_reassignment_json(path) == plan.proposed()

    @pytest.mark.parametrize(
        ("doc", "needle"),
        [
            ({"version": 2, "partitions": []}, "version"),
            ({"version": 1}, "'partitions'"),
            ({"partitions": [{"topic": "", "partition": 0, "replicas": [1]}]}, r"partitions\[0\]\.topic"),
            ({"partitions": [{"topic": "t", "partition": -1, "replicas": [1]}]}, r"partitions\[0\]\.partition"),
            ({"partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]}, "twice"),
            ({"partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": []}]}, "log_dirs"),
            ({"partitions": [{"topic": "t", "partition": 0, "replicas": [1]}] * 2}, "repeats"),
        ],
    )
    def test_invalid_documents_name_the_field(self, doc: dict[str, object], needle: str) -> None:
        """Each malformed entry is rejected with its path."""
        with pytest.raises(ConfigError, match=needle):
            parse_reassignment_json(doc)

    def test_unreadable_file(self, tmp_path: Path) -> None:
        """Broken JSON is a ConfigError naming the file."""
        bad = tmp_path / "bad.json"
        bad.write_text("{")
        with pytest.raises(ConfigError, match=r"bad\.json"):
            read_reassignment_json(bad)


class TestParseVerify:
    def test_kafka_lines(self) -> None:
        """Completed, in progress and mismatched partitions are told apart (topic names may hold dashes)."""
        status = parse_verify_output(
            "Status of partition reassignment:\n"
            "Reassignment of partition my-topic-0 is completed.\n"
            "Reassignment of partition my-topic-1 is still in progress.\n"
            "There is no active reassignment of partition my-topic-2, but replica set is [1, 2] rather than [1, 3].\n"
        )
        assert status.completed == {("my-topic", 0)}
        assert status.in_progress == {("my-topic", 1)}
        assert status.mismatched == {("my-topic", 2)}


class FakeTool:
    """Answers --execute once, then --verify with the scripted outputs, recording every command."""

    def __init__(self, verify_outputs: list[str], execute: CommandResult | None = None) -> None:
        self.verify_outputs = verify_outputs
        self.execute = execute or CommandResult(0, "Successfully started partition reassignment for t-0\n")
        self.calls: list[list[str]] = []

    def __call__(self, args: Sequence[str], timeout_s: float) -> CommandResult:
        self.calls.append(list(args))
        if "--execute" in args:
            return self.execute
        out = self.verify_outputs[min(len(self.calls) - 2, len(self.verify_outputs) - 1)]
        return CommandResult(0, out)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


DOC = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2, 3]}]}


class TestApply:
    def test_execute_then_verify_until_completed(self, tmp_path: Path) -> None:
        """--execute runs once, --verify until the partition is completed."""
        tool = FakeTool(
            ["Reassignment of partition t-0 is still in progress.", "Reassignment of partition t-0 is completed."]
        )
        clock = FakeClock()
        result = apply_reassignment(
            DOC,
            "b:9092",
            runner=tool,
            classpath="/libs/*",
            java="java",
            clock=clock,
            sleep=clock.sleep,
            workdir=tmp_path,
        )
        assert result.partitions == (("t", 0),) and result.verify_runs == 2
        assert tool.calls[0][tool.calls[0].index("-cp") + 1] == "/libs/*"
        assert REASSIGN_TOOL_CLASS in tool.calls[0] and tool.calls[0][-1] == "--execute"
        assert [c[-1] for c in tool.calls[1:]] == ["--verify", "--verify"]

    def test_timeout_is_bounded_and_explained(self, tmp_path: Path) -> None:
        """A reassignment that never completes raises after the timeout, mentioning --cancel."""
        tool = FakeTool(["Reassignment of partition t-0 is still in progress."])
        clock = FakeClock()
        with pytest.raises(ReassignmentError, match="--cancel"):
            apply_reassignment(
                DOC, "b:9092", runner=tool, classpath="x", java="java", timeout_s=5, poll_interval_s=1,
                clock=clock, sleep=clock.sleep, workdir=tmp_path,
            )  # fmt: skip
        assert len(tool.calls) == 7  # execute + verify at t=0..5

    def test_failed_execute(self, tmp_path: Path) -> None:
        """A non-zero --execute is reported with the tool's message."""
        tool = FakeTool([], execute=CommandResult(1, "", "Error: broker 9 does not exist"))
        with pytest.raises(ReassignmentError, match="broker 9"):
            apply_reassignment(DOC, "b:9092", runner=tool, classpath="x", java="java", workdir=tmp_path)

    def test_mismatch_fails(self, tmp_path: Path) -> None:
        """A partition that ended elsewhere is an error, not a wait."""
        tool = FakeTool(
            ["There is no active reassignment of partition t-0, but replica set is [1] rather than [1, 2, 3]."]
        )
        with pytest.raises(ReassignmentError, match="other replicas"):
            apply_reassignment(DOC, "b:9092", runner=tool, classpath="x", java="java", workdir=tmp_path)


class TestAwaitMetadata:
    """apply_plan's wait for the admin client's metadata: consecutive agreeing reads, bounded."""

    NEW = (3, 1)
    WANTED = {("t", 0): NEW}

    @staticmethod
    def _reads(*replicas: tuple[int, ...]) -> Any:
        seq = iter(replicas)

        def snapshot(admin: object, topics: list[str]) -> ClusterSnapshot:
            reps = next(seq)
            return ClusterSnapshot(THREE, (PartitionState("t", 0, reps, reps[0]),))

        return snapshot

    def test_a_stale_read_restarts_the_count(self) -> None:
        """New, stale (another broker), then three new reads: five reads, not one."""
        old = (1, 2)
        snap = self._reads(self.NEW, old, self.NEW, self.NEW, self.NEW)
        reads = _await_metadata(None, self.WANTED, 1e9, leaders=False, sleep=lambda s: None, snapshot=snap)
        assert reads == 5

    def test_never_steady_raises_naming_the_partition(self) -> None:
        """Reads that keep showing the old replicas end at the deadline with the partition named."""
        clock = iter(range(100))
        snap = self._reads(*[(1, 2)] * 100)
        with pytest.raises(ReassignmentError, match=r"new replicas for \[\('t', 0\)\]"):
            _await_metadata(
                None, self.WANTED, 3, leaders=False, clock=lambda: next(clock), sleep=lambda s: None, snapshot=snap
            )

    def test_leaders_wait_for_the_first_replica_to_lead(self) -> None:
        """With leaders=True a read whose leader is not the first replica does not count."""
        states = iter([(1, (3, 1)), (3, (3, 1)), (3, (3, 1)), (3, (3, 1))])

        def snap(admin: object, topics: list[str]) -> ClusterSnapshot:
            leader, reps = next(states)
            return ClusterSnapshot(THREE, (PartitionState("t", 0, reps, leader),))

        assert _await_metadata(None, {("t", 0): ()}, 1e9, leaders=True, sleep=lambda s: None, snapshot=snap) == 4
