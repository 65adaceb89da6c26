"""A reassignment plan that fixes rack placement with the fewest replica moves, and applying it.

**Fewest moves.** A partition must cover ``target = min(RF, racks)`` racks. If its replicas cover ``have``
racks, at least ``target - have`` replicas must move (each move can add one rack), and that many suffice:
keep one replica per covered rack (the leader's first), and replace surplus replicas of the most crowded
rack with brokers on the missing racks. RF 3 on ``[1, 4, 2]`` with 1 and 4 on rack-a and rack-c missing:
``have = 2``, one move, ``[1, 3, 2]`` — the leader and broker 2 stay put, only broker 4's copy is rebuilt.

**Leaders.** Moving leadership costs no data: reordering a replica list changes the *preferred* leader, and a
preferred-leader election makes it the leader. Leader skew per rack is fixed by the fewest such reorders,
one partition at a time from the most-led rack to the least-led rack that holds a replica.

**Format.** The plan is written as ``kafka-reassign-partitions`` JSON
(``{"version": 1, "partitions": [...]}``) so it can be reviewed, applied by Kafka's own tool, or
rolled back with the ``current`` file.

**Applying.** confluent-kafka (2.16) exposes no ``alter_partition_reassignments``, so :func:`apply_plan`
runs Kafka's ``org.apache.kafka.tools.reassign.ReassignPartitionsCommand`` from the resolved jars:
``--execute``, then ``--verify`` until every partition reports completed (bounded), then a preferred-leader
election through the AdminClient for partitions whose leader is not the planned first replica.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mutepro.errors import ClusterError, ConfigError
from mutepro.racks.audit import ClusterSnapshot, PartitionState, snapshot_cluster

REASSIGN_TOOL_CLASS = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"


class ReassignmentError(ClusterError):
    """A reassignment could not be started, did not complete in time, or left replicas elsewhere."""


# -- planning --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionMove:
    """One partition's replica list now and as planned; ``moved`` brokers lose a copy, ``added`` gain one."""

    topic: str
    partition: int
    current: tuple[int, ...]
    proposed: tuple[int, ...]
    reason: str

    @property
    def added(self) -> tuple[int, ...]:
        """Brokers that must copy the partition."""
        return tuple(b for b in self.proposed if b not in self.current)

    @property
    def removed(self) -> tuple[int, ...]:
        """Brokers whose copy is deleted once the move completes."""
        return tuple(b for b in self.current if b not in self.proposed)

    @property
    def replica_moves(self) -> int:
        """Copies to build (0 for a pure leader reorder)."""
        return len(self.added)

    @property
    def leader_change(self) -> bool:
        """True when the preferred leader changes."""
        return bool(self.current) and bool(self.proposed) and self.current[0] != self.proposed[0]


@dataclass(frozen=True)
class ReassignmentPlan:
    """The moves that fix a snapshot, plus partitions that only need a preferred-leader election."""

    moves: tuple[PartitionMove, ...]
    #: partitions already in the planned order whose live leader is not the preferred one
    elections: tuple[tuple[str, int], ...] = ()
    brokers: Mapping[int, str | None] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True when nothing needs doing."""
        return not self.moves and not self.elections

    @property
    def replica_moves(self) -> int:
        """Total copies to build."""
        return sum(m.replica_moves for m in self.moves)

    def proposed(self) -> dict[tuple[str, int], tuple[int, ...]]:
        """``(topic, partition)`` → planned replicas."""
        return {(m.topic, m.partition): m.proposed for m in self.moves}

    def to_reassignment(self) -> dict[str, Any]:
        """The plan in ``kafka-reassign-partitions`` JSON (the file ``--execute`` reads)."""
        return reassignment_json({(m.topic, m.partition): m.proposed for m in self.moves})

    def to_rollback(self) -> dict[str, Any]:
        """The current assignment of the moved partitions, to undo the plan with the same tool."""
        return reassignment_json({(m.topic, m.partition): m.current for m in self.moves})

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (``mutepro racks reassign --json``)."""
        return {
            "replica_moves": self.replica_moves,
            "leader_changes": sum(1 for m in self.moves if m.leader_change),
            "moves": [
                {
                    "topic": m.topic,
                    "partition": m.partition,
                    "current": list(m.current),
                    "proposed": list(m.proposed),
                    "added": list(m.added),
                    "removed": list(m.removed),
                    "reason": m.reason,
                }
                for m in self.moves
            ],
            "elections": [{"topic": t, "partition": p} for t, p in self.elections],
            "reassignment": self.to_reassignment(),
        }


def fix_replicas(
    replicas: Sequence[int],
    broker_racks: Mapping[int, str | None],
    load: Mapping[int, int] | None = None,
) -> tuple[int, ...]:
    """The replica list with the fewest changes that covers ``min(RF, racks)`` racks.

    Positions are kept: a replaced replica's slot gets its replacement, so the leader stays first unless the
    leader itself is on a broker no longer in the cluster. Replacements go to the least-loaded broker
    (``load``: replicas per broker) on a missing rack, lowest id on a tie.
    """
    racks = sorted({r for r in broker_racks.values() if r})
    load = Counter(load or {})  # a private copy: the caller's counts change only through _shift_load
    result = list(replicas)
    rack_of = [broker_racks.get(b) for b in result]
    target = min(len(result), len(racks))
    covered = {r for r in rack_of if r}
    need = target - len(covered)
    if need <= 0:
        return tuple(result)
    missing = [r for r in racks if r not in covered]
    for _ in range(need):
        slot = _surplus_slot(rack_of)
        rack = missing.pop(0)
        candidates = [b for b, r in broker_racks.items() if r == rack and b not in result]
        if not candidates:  # pragma: no cover - a listed rack always has a broker
            break
        chosen = min(candidates, key=lambda b: (load[b], b))
        load[chosen] += 1
        if result[slot] in load:
            load[result[slot]] -= 1
        result[slot] = chosen
        rack_of[slot] = rack
    return tuple(result)


def _shift_load(load: Counter[int], before: Sequence[int], after: Sequence[int]) -> None:
    for b in set(after) - set(before):
        load[b] += 1
    for b in set(before) - set(after):
        load[b] -= 1


def _surplus_slot(rack_of: Sequence[str | None]) -> int:
    """The slot to give up: a replica off the cluster first, else the last copy on the most crowded rack."""
    for i in range(len(rack_of) - 1, -1, -1):
        if rack_of[i] is None:
            return i
    counts = Counter(rack_of)
    crowded = max(counts.values())
    for i in range(len(rack_of) - 1, 0, -1):  # never the leader's slot while a follower can go
        if counts[rack_of[i]] == crowded:
            return i
    return len(rack_of) - 1


def spread_replicas(
    assignment: Mapping[int, Sequence[int]],
    broker_racks: Mapping[int, str | None],
    load: Mapping[int, int] | None = None,
) -> dict[int, tuple[int, ...]]:
    """Even out how many partitions each rack holds locally when RF < racks, one replica move at a time.

    RF 2 on racks a/b/c with all 6 partitions on a and b: racks hold 6/6/0 local partitions. Each step moves
    a follower of a partition from the rack holding most to the rack holding fewest (that lacks it):
    6/6/0 → 5/6/1 → 5/5/2 → 4/5/3 → 4/4/4, four moves, the fewest (rack c needs 4 and each move gives one).
    Racks already within one of each other are left alone; so are partitions with RF >= racks.
    """
    result = {p: tuple(r) for p, r in assignment.items()}
    racks = sorted({r for r in broker_racks.values() if r})
    load = Counter(load or {})
    while True:
        local = Counter({r: 0 for r in racks})
        for reps in result.values():
            local.update({rack for b in reps if (rack := broker_racks.get(b))})
        if len(racks) < 2:
            return result
        low = min(racks, key=lambda r: (local[r], r))
        high = max(racks, key=lambda r: (local[r], r))
        if local[high] - local[low] < 2:
            return result
        options = []
        for p, reps in sorted(result.items()):
            reps_racks = [broker_racks.get(b) for b in reps]
            if low in reps_racks or high not in reps_racks:
                continue
            for slot, b in enumerate(reps):
                if broker_racks.get(b) == high:
                    # followers before leaders, then the busiest broker gives up a copy
                    options.append((slot == 0, -load[b], p, slot))
        if not options:
            return result
        _, _, partition, slot = min(options)
        moved = list(result[partition])
        candidates = [b for b, r in broker_racks.items() if r == low and b not in moved]
        chosen = min(candidates, key=lambda b: (load[b], b))
        load[moved[slot]] -= 1
        load[chosen] += 1
        moved[slot] = chosen
        result[partition] = tuple(moved)


def balance_leaders(
    assignment: Mapping[int, Sequence[int]],
    broker_racks: Mapping[int, str | None],
) -> dict[int, tuple[int, ...]]:
    """Reorder replica lists so preferred leaders spread over racks, changing as few leaders as possible.

    Each step moves one partition's leadership from the most-led rack to a rack with at least two fewer
    leaders on which it has a replica (6 partitions led 4/1/1 → 3/2/1 → 2/2/2: two reorders). Each step
    lowers the sum of squared counts, so the loop ends; it stops when no such step exists.
    """
    result = {p: tuple(r) for p, r in assignment.items()}
    racks = sorted({r for r in broker_racks.values() if r})
    if len(racks) < 2:
        return result
    touched: set[int] = set()
    while True:
        per_rack = Counter({r: 0 for r in racks})
        per_broker: Counter[int] = Counter()
        for reps in result.values():
            leader_rack = broker_racks.get(reps[0]) if reps else None
            if leader_rack:
                per_rack[leader_rack] += 1
                per_broker[reps[0]] += 1
        step = _leader_step(result, broker_racks, per_rack, per_broker, touched)
        if step is None:
            return result
        partition, new_leader = step
        reps = result[partition]
        result[partition] = (new_leader, *(b for b in reps if b != new_leader))
        touched.add(partition)


def _leader_step(
    assignment: Mapping[int, tuple[int, ...]],
    broker_racks: Mapping[int, str | None],
    per_rack: Counter[str],
    per_broker: Counter[int],
    touched: set[int],
) -> tuple[int, int] | None:
    for hot in sorted(per_rack, key=lambda r: (-per_rack[r], r)):
        for cold in sorted(per_rack, key=lambda r: (per_rack[r], r)):
            if per_rack[hot] - per_rack[cold] < 2:
                break
            # Prefer a partition not reordered yet, so one partition is not bounced back and forth.
            options = [
                (p in touched, per_broker[b], p, b)
                for p, reps in sorted(assignment.items())
                if reps and broker_racks.get(reps[0]) == hot
                for b in reps[1:]
                if broker_racks.get(b) == cold
            ]
            if options:
                _, _, partition, broker = min(options)
                return partition, broker
    return None


def plan_reassignment(
    snapshot: ClusterSnapshot,
    topics: Iterable[str] | None = None,
    *,
    fix_racks: bool = True,
    fix_leaders: bool = True,
) -> ReassignmentPlan:
    """Plan the fewest moves that make every partition of ``topics`` rack-complete and leaders even."""
    brokers = snapshot.brokers
    wanted = set(topics) if topics is not None else set(snapshot.topics)
    load: Counter[int] = Counter()
    for p in snapshot.partitions:
        load.update(p.replicas)
    moves: list[PartitionMove] = []
    elections: list[tuple[str, int]] = []
    for topic in sorted(wanted):
        parts = snapshot.topic_partitions(topic)
        if not parts:
            raise ConfigError(f"topics: {topic!r} is not in the snapshot; check the name or describe it first")
        proposed: dict[int, tuple[int, ...]] = {}
        for p in parts:
            fixed = fix_replicas(p.replicas, brokers, load) if fix_racks else p.replicas
            _shift_load(load, p.replicas, fixed)
            proposed[p.partition] = fixed
        if fix_racks:
            spread = spread_replicas(proposed, brokers, load)
            for pid, reps in spread.items():
                _shift_load(load, proposed[pid], reps)
            proposed = spread
        reasons: dict[int, list[str]] = {}
        for p in parts:
            if set(proposed[p.partition]) != set(p.replicas):
                added = sorted(
                    {brokers.get(b) or "?" for b in proposed[p.partition]} - {brokers.get(b) or "?" for b in p.replicas}
                )
                reasons.setdefault(p.partition, []).append(f"add rack(s) {', '.join(added)}")
        if fix_leaders:
            balanced = balance_leaders(proposed, brokers)
            for pid, reps in balanced.items():
                if reps[0] != proposed[pid][0]:
                    reasons.setdefault(pid, []).append(
                        f"lead from {brokers.get(reps[0])} instead of {brokers.get(proposed[pid][0])}"
                    )
            proposed = balanced
        for p in parts:
            target = proposed[p.partition]
            if target != p.replicas:
                moves.append(PartitionMove(topic, p.partition, p.replicas, target, "; ".join(reasons[p.partition])))
            elif fix_leaders and p.leader != target[0]:
                elections.append((topic, p.partition))
    return ReassignmentPlan(tuple(moves), tuple(elections), dict(brokers))


# -- the kafka-reassign-partitions JSON --------------------------------------------------------------------


def reassignment_json(assignment: Mapping[tuple[str, int], Sequence[int]]) -> dict[str, Any]:
    """``{(topic, partition): replicas}`` as Kafka's reassignment JSON, sorted for stable diffs."""
    return {
        "version": 1,
        "partitions": [
            {"topic": t, "partition": p, "replicas": list(r), "log_dirs": ["any"] * len(r)}
            for (t, p), r in sorted(assignment.items())
        ],
    }


def write_reassignment_json(plan_or_json: ReassignmentPlan | Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write the reassignment JSON of a plan (or an already-built JSON mapping) to ``path``."""
    doc = plan_or_json.to_reassignment() if isinstance(plan_or_json, ReassignmentPlan) else dict(plan_or_json)
    target = check_writable(path, "output")
    try:
        target.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{target}: cannot write the reassignment JSON: {err.strerror or err}") from err
    return target


def check_writable(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` if a file can be created there (its directory exists), else a ConfigError naming ``what``.

    Checked before any work, so ``-o /missing-dir/plan.json`` fails at once rather than after the plan.
    """
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ConfigError(
            f"{what} {str(target)!r}: directory {str(parent)!r} does not exist; create it or pick another path"
        )
    if target.is_dir():
        raise ConfigError(f"{what} {str(target)!r} is a directory; give a file name")
    return target


def parse_reassignment_json(
    doc: Mapping[str, Any], *, source: str = "reassignment JSON"
) -> dict[tuple[str, int], tuple[int, ...]]:
    """Validate a reassignment document and return ``{(topic, partition): replicas}``.

    Errors name the entry and field (``partitions[2].replicas``) and say what Kafka expects.
    """
    if not isinstance(doc, Mapping):
        raise ConfigError(f"{source}: the top level must be an object with 'version' and 'partitions'")
    if doc.get("version", 1) != 1:
        raise ConfigError(f"{source}: version must be 1 (got {doc.get('version')!r}); Kafka reads version 1 only")
    parts = doc.get("partitions")
    if not isinstance(parts, list):
        raise ConfigError(f"{source}: 'partitions' must be a list of {{topic, partition, replicas}} objects")
    result: dict[tuple[str, int], tuple[int, ...]] = {}
    for i, entry in enumerate(parts):
        where = f"{source}: partitions[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where} must be an object with topic, partition and replicas")
        topic, partition, replicas = entry.get("topic"), entry.get("partition"), entry.get("replicas")
        if not isinstance(topic, str) or not topic:
            raise ConfigError(f"{where}.topic must be a non-empty string")
        if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
            raise ConfigError(f"{where}.partition must be a non-negative integer (got {partition!r})")
        if (
            not isinstance(replicas, list)
            or not replicas
            or not all(isinstance(b, int) and not isinstance(b, bool) for b in replicas)
        ):
            raise ConfigError(f"{where}.replicas must be a non-empty list of broker ids (got {replicas!r})")
        if len(set(replicas)) != len(replicas):
            raise ConfigError(f"{where}.replicas {replicas} names a broker twice; each broker holds one copy")
        log_dirs = entry.get("log_dirs")
        if log_dirs is not None and (not isinstance(log_dirs, list) or len(log_dirs) != len(replicas)):
            raise ConfigError(f"{where}.log_dirs must list one directory (or 'any') per replica")
        if (topic, partition) in result:
            raise ConfigError(f"{where} repeats {topic}-{partition}; list each partition once")
        result[(topic, partition)] = tuple(replicas)
    return result


def read_reassignment_json(path: str | os.PathLike[str]) -> dict[tuple[str, int], tuple[int, ...]]:
    """Read and validate a ``kafka-reassign-partitions`` JSON file."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(f"reassignment file {path}: cannot read it ({err})") from err
    except json.JSONDecodeError as err:
        raise ConfigError(f"reassignment file {path}: not valid JSON ({err})") from err
    return parse_reassignment_json(doc, source=str(path))


# -- applying --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CommandResult:
    """Exit code and output of one tool run."""

    returncode: int
    stdout: str
    stderr: str = ""


class CommandRunner(Protocol):
    """Runs a command line and returns its result (subprocess by default; a fake in tests)."""

    def __call__(self, args: Sequence[str], timeout_s: float) -> CommandResult: ...


def subprocess_runner(args: Sequence[str], timeout_s: float) -> CommandResult:
    """Run ``args`` with :func:`subprocess.run`, capturing output."""
    try:
        proc = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as err:
        raise ReassignmentError(
            f"{args[-1] if args else 'command'} did not finish within {timeout_s}s; is the cluster reachable?"
        ) from err
    return CommandResult(proc.returncode, proc.stdout, proc.stderr)


@dataclass(frozen=True)
class VerifyStatus:
    """What one ``--verify`` run said, per partition."""

    completed: frozenset[tuple[str, int]]
    in_progress: frozenset[tuple[str, int]]
    #: partitions with no reassignment running whose replicas are not the requested ones
    mismatched: frozenset[tuple[str, int]]


_VERIFY_LINE = re.compile(
    r"(?:Reassignment of partition (?P<tp>\S+) is (?P<state>completed|still in progress))"
    r"|(?:There is no active reassignment of partition (?P<bad>\S+), but replica set is)"
)


def _split_tp(tp: str) -> tuple[str, int]:
    topic, _, partition = tp.rstrip(".,").rpartition("-")
    return topic, int(partition)


def parse_verify_output(text: str) -> VerifyStatus:
    """Parse ``kafka-reassign-partitions --verify`` output (one line per partition)."""
    completed: set[tuple[str, int]] = set()
    progress: set[tuple[str, int]] = set()
    bad: set[tuple[str, int]] = set()
    for line in text.splitlines():
        m = _VERIFY_LINE.search(line)
        if not m:
            continue
        if m.group("bad"):
            bad.add(_split_tp(m.group("bad")))
        elif m.group("state") == "completed":
            completed.add(_split_tp(m.group("tp")))
        else:
            progress.add(_split_tp(m.group("tp")))
    return VerifyStatus(frozenset(completed), frozenset(progress), frozenset(bad))


@dataclass(frozen=True)
class ApplyResult:
    """The outcome of :func:`apply_reassignment`."""

    partitions: tuple[tuple[str, int], ...]
    verify_runs: int
    elected: tuple[tuple[str, int], ...] = ()
    output: str = ""


def reassign_command(
    bootstrap_servers: str, json_path: str | os.PathLike[str], action: str, *, classpath: str, java: str
) -> list[str]:
    """The ``java -cp <libs>/* ReassignPartitionsCommand`` command line for ``--execute``/``--verify``."""
    if action not in ("--execute", "--verify", "--cancel"):
        raise ValueError(f"action must be --execute, --verify or --cancel, not {action!r}")
    return [
        java, "-Xmx256m", "-cp", classpath, REASSIGN_TOOL_CLASS,
        "--bootstrap-server", bootstrap_servers, "--reassignment-json-file", str(json_path), action,
    ]  # fmt: skip


def apply_reassignment(
    reassignment: ReassignmentPlan | Mapping[str, Any],
    bootstrap_servers: str,
    *,
    runner: CommandRunner = subprocess_runner,
    classpath: str | None = None,
    java: str | None = None,
    timeout_s: float = 120.0,
    poll_interval_s: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    workdir: str | os.PathLike[str] | None = None,
) -> ApplyResult:
    """Start the reassignment with Kafka's tool and ``--verify`` until it completes (within ``timeout_s``).

    ``--verify`` also lifts any replication throttle once a partition completes, which is why it is the
    poll (and not a metadata check). Raises :class:`ReassignmentError` on a failed start, a partition left
    on other replicas, or a timeout (the message tells how to cancel).
    """
    doc = reassignment.to_reassignment() if isinstance(reassignment, ReassignmentPlan) else dict(reassignment)
    wanted = parse_reassignment_json(doc)
    if not wanted:
        return ApplyResult((), 0)
    if classpath is None or java is None:
        from mutepro.cluster.jars import require_java, resolve_kafka

        classpath = classpath or resolve_kafka().classpath
        java = java or require_java()
    tmp = Path(tempfile.mkdtemp(prefix="mutepro-reassign-", dir=workdir))
    json_path = write_reassignment_json(doc, tmp / "reassignment.json")
    execute = runner(reassign_command(bootstrap_servers, json_path, "--execute", classpath=classpath, java=java), 90.0)
    if execute.returncode != 0 or "Successfully started" not in execute.stdout:
        raise ReassignmentError(
            f"kafka-reassign-partitions --execute failed (exit {execute.returncode}): "
            f"{(execute.stderr or execute.stdout).strip()[-800:]}. The JSON is in {json_path}; another "
            "reassignment may be running (`--list`), or a broker id may not exist."
        )
    deadline = clock() + timeout_s
    runs = 0
    while True:
        verify = runner(
            reassign_command(bootstrap_servers, json_path, "--verify", classpath=classpath, java=java), 90.0
        )
        runs += 1
        status = parse_verify_output(verify.stdout)
        if status.mismatched:
            raise ReassignmentError(
                f"reassignment of {sorted(status.mismatched)} ended on other replicas than planned; re-audit "
                f"and re-plan. Tool output: {verify.stdout.strip()[-800:]}"
            )
        if set(wanted) <= status.completed:
            return ApplyResult(tuple(sorted(wanted)), runs, output=execute.stdout + verify.stdout)
        if clock() >= deadline:
            pending = sorted(set(wanted) - status.completed)
            raise ReassignmentError(
                f"reassignment of {pending} did not complete within {timeout_s}s. It keeps running in the "
                f"cluster: check with --verify, or cancel with --cancel, using {json_path}."
            )
        sleep(poll_interval_s)


def elect_preferred_leaders(
    admin: Any, partitions: Iterable[tuple[str, int]], *, timeout_s: float = 30.0
) -> tuple[tuple[str, int], ...]:
    """Make the first replica the leader of ``partitions``; returns those that changed or already were.

    ``ELECTION_NOT_NEEDED`` (the preferred replica already leads) counts as success.
    """
    from confluent_kafka import ElectionType, KafkaError, KafkaException, TopicPartition

    tps = [TopicPartition(t, p) for t, p in partitions]
    if not tps:
        return ()
    try:
        # No request_timeout/operation_timeout: confluent-kafka 2.16.1's elect_leaders raises SystemError for
        # any keyword argument, so the bound is the future's timeout alone.
        result = admin.elect_leaders(ElectionType.PREFERRED, tps).result(timeout=timeout_s)
    except KafkaException as err:
        raise ReassignmentError(
            f"preferred leader election for {len(tps)} partitions failed: {err}", kafka_error=err.args[0]
        ) from err
    done: list[tuple[str, int]] = []
    failed: list[str] = []
    for tp, error in result.items():
        # the value is a KafkaError (2.16.1) or, as documented, a KafkaException wrapping one
        kafka_error = error.args[0] if isinstance(error, KafkaException) and error.args else error
        if kafka_error is None or kafka_error.code() == KafkaError.ELECTION_NOT_NEEDED:
            done.append((tp.topic, tp.partition))
        else:
            failed.append(f"{tp.topic}-{tp.partition}: {kafka_error.str()}")
    if failed:
        raise ReassignmentError(f"preferred leader election failed for {failed}; retry once the ISR has caught up")
    return tuple(sorted(done))


def apply_plan(
    plan: ReassignmentPlan,
    admin: Any,
    bootstrap_servers: str,
    *,
    timeout_s: float = 120.0,
    **kwargs: Any,
) -> ApplyResult:
    """Apply ``plan`` (reassignment, then preferred-leader election where the leader must change).

    Returns once the admin client's own metadata shows the result (bounded by ``timeout_s``): the tool's
    ``--verify`` reads the controller's view, and a broker's metadata cache can trail it by a moment, so an
    audit run right after would otherwise still see the old replicas.
    """
    deadline = time.monotonic() + timeout_s
    applied = (
        apply_reassignment(plan, bootstrap_servers, timeout_s=timeout_s, **kwargs) if plan.moves else ApplyResult((), 0)
    )
    proposed = plan.proposed()
    if plan.moves:
        _await_metadata(admin, proposed, deadline, leaders=False)
    to_elect = sorted({*plan.elections, *((m.topic, m.partition) for m in plan.moves)})
    elected = elect_preferred_leaders(admin, to_elect) if to_elect else ()
    if to_elect:
        _await_metadata(admin, {tp: proposed.get(tp, ()) for tp in to_elect}, deadline, leaders=True)
    return ApplyResult(applied.partitions, applied.verify_runs, elected, applied.output)


def _shows(state: PartitionState | None, replicas: Sequence[int], leaders: bool) -> bool:
    """Whether a described partition has ``replicas`` (when given) and, with ``leaders``, its first replica leading."""
    if state is None or (replicas and tuple(state.replicas) != tuple(replicas)):
        return False
    return not (leaders and state.replicas and state.leader != state.replicas[0])


#: consecutive agreeing reads before :func:`apply_plan` returns. Each describe goes to whichever broker
#: librdkafka picks, and in KRaft every broker applies the metadata log at its own pace: one read that shows
#: the new replicas can come from a broker that is already caught up while the next (the caller's audit) goes
#: to one that is not. Three reads 0.2 s apart give the slowest broker ~0.4 s more and sample the brokers
#: again; a CI run audited dirty right after a single agreeing read.
CONFIRM_READS = 3


def _await_metadata(
    admin: Any,
    wanted: Mapping[tuple[str, int], Sequence[int]],
    deadline: float,
    *,
    leaders: bool,
    poll_interval_s: float = 0.2,
    confirm_reads: int = CONFIRM_READS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    snapshot: Callable[[Any, list[str]], ClusterSnapshot] = snapshot_cluster,
) -> int:
    """Wait until ``confirm_reads`` consecutive reads of the admin client's metadata show ``wanted`` replicas
    (or, with ``leaders``, the first replica of the current assignment leading; an empty ``wanted`` entry
    means "whatever the replicas are"). Returns the number of reads taken; a read that disagrees starts the
    count again."""
    topics = sorted({t for t, _ in wanted})
    reads = agreeing = 0
    while True:
        parts = {(p.topic, p.partition): p for p in snapshot(admin, topics).partitions}
        reads += 1
        pending = [tp for tp, replicas in wanted.items() if not _shows(parts.get(tp), replicas, leaders)]
        agreeing = 0 if pending else agreeing + 1
        if agreeing >= confirm_reads:
            return reads
        if clock() >= deadline:
            what = "preferred leaders" if leaders else "new replicas"
            shown = f"other {what} for {sorted(pending)}" if pending else f"{what} in only {agreeing} reads in a row"
            raise ReassignmentError(
                f"the cluster completed the reassignment but the metadata still shows {shown}; "
                "run `mutepro racks audit` again in a moment"
            )
        sleep(poll_interval_s)


def with_assignment(snapshot: ClusterSnapshot, assignment: Mapping[tuple[str, int], Sequence[int]]) -> ClusterSnapshot:
    """The snapshot as it would be after ``assignment`` (preferred leaders lead); for what-if audits."""
    parts = []
    for p in snapshot.partitions:
        reps = tuple(assignment.get((p.topic, p.partition), p.replicas))
        parts.append(PartitionState(p.topic, p.partition, reps, reps[0] if reps else -1, reps))
    return ClusterSnapshot(snapshot.brokers, tuple(parts))
