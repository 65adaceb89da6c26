"""Bad input to the racks CLI and scenario files (issue 10, items 7 and 8): each is a clear error naming the
field, before any work, never a traceback or a silent success."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mutepro.errors import ClusterError, ConfigError
from mutepro.racks.assign.planner import MAX_PARTITIONS, load_scenario, scenario_from_cluster
from mutepro.racks.cli import racks
from mutepro.racks.cli_plan import plan as plan_command

ROOT = Path(__file__).resolve().parents[3]
UNREACHABLE = "127.0.0.1:1"  # nothing listens on port 1: refused at once, no broker needed


def _scenario(tmp_path: Path, topics: str, members: str = "[{id: c0, rack: a}]") -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(f"brokers: {{1: a, 2: b, 3: c}}\ntopics: {topics}\nmembers: {members}\n")
    return path


class TestScenarioFields:
    @pytest.mark.parametrize(
        ("topics", "field"),
        [
            ("{t: {partitions: -5}}", "topics.t.partitions is -5"),
            ("{t: {partitions: 3, replication_factor: 0}}", "topics.t.replication_factor is 0"),
            ("{t: {partitions: 3, replication_factor: 4}}", "topics.t.replication_factor is 4"),
            ("{t: {replicas: [[1, 2], [2, 2]]}}", "topics.t.replicas[1] lists broker(s) [2] more than once"),
            ("{t: {replicas: [[]]}}", "topics.t.replicas[0] is empty"),
            ("{t: {partitions: abc}}", "topics.t.partitions must be an integer"),
            ("{t: 5}", "topics.t must be a mapping"),
            ("[t]", "topics must be a mapping"),
        ],
    )
    def test_named_error(self, tmp_path: Path, topics: str, field: str) -> None:
        """Each nonsensical topic field is refused with its name and what is allowed."""
        with pytest.raises(ConfigError) as info:
            load_scenario(_scenario(tmp_path, topics))
        assert field in str(info.value)

    @pytest.mark.parametrize(
        ("members", "field"),
        [
            ("[c0]", "members[0] must be a mapping"),
            ("abc", "members must be a list"),
            ("[{rack: a}]", "members[0] has no id"),
        ],
    )
    def test_named_member_error(self, tmp_path: Path, members: str, field: str) -> None:
        """Members that are not {id, ...} mappings are refused by position."""
        with pytest.raises(ConfigError, match=field.replace("[", r"\[").replace("]", r"\]")):
            load_scenario(_scenario(tmp_path, "{t: {partitions: 3}}", members))

    @pytest.mark.no_sanitizer  # ASan's shadow memory cannot live under a 1 GiB address-space cap
    def test_huge_partition_count_refused_before_any_work(self, tmp_path: Path) -> None:
        """partitions: 100000000 is refused by name and limit, in a process capped at 1 GiB (it used to reach 15 GB)."""
        path = _scenario(tmp_path, "{t: {partitions: 100000000}}")
        limit = 1 << 30

        def cap() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        proc = subprocess.run(
            [sys.executable, "-P", "-c", "from mutepro.cli import main; main()",
             "racks", "plan", "--scenario", str(path)],
            capture_output=True, text=True, timeout=120, cwd=ROOT, preexec_fn=cap, check=False,
        )  # fmt: skip
        assert proc.returncode != 0
        assert f"topics.t.partitions is 100000000; it must be between 1 and {MAX_PARTITIONS}" in proc.stderr
        assert "Traceback" not in proc.stderr

    def test_binary_file(self, tmp_path: Path) -> None:
        """A binary file is 'not a text file', not a UnicodeDecodeError traceback."""
        path = tmp_path / "s.yaml"
        path.write_bytes(bytes(range(256)) * 4)
        with pytest.raises(ConfigError, match="not a text file"):
            load_scenario(path)

    def test_deeply_nested_file(self, tmp_path: Path) -> None:
        """5,000 nested brackets are 'not valid YAML/JSON', not a RecursionError traceback."""
        path = tmp_path / "s.yaml"
        path.write_text("[" * 5000)
        with pytest.raises(ConfigError, match="not valid YAML/JSON"):
            load_scenario(path)

    def test_cli_shows_the_error(self, tmp_path: Path) -> None:
        """`racks plan` prints the named error and exits non-zero."""
        result = CliRunner().invoke(plan_command, ["--scenario", str(_scenario(tmp_path, "{t: {partitions: -5}}"))])
        assert result.exit_code == 1 and "topics.t.partitions is -5" in result.output


class TestUnreachableCluster:
    def test_plan_against_unreachable_bootstrap(self) -> None:
        """Describing a cluster nobody serves is a ClusterError naming the problem, not a TimeoutError."""
        with pytest.raises(ClusterError) as info:
            scenario_from_cluster(UNREACHABLE, ["t"], "c0@a", timeout_s=2)
        assert "could not describe the cluster/topics ['t']" in str(info.value)
        assert "check --bootstrap-servers" in str(info.value)

    def test_plan_cli_against_unreachable_bootstrap(self) -> None:
        """`racks plan --bootstrap-servers` with nothing listening exits 1 with a message, no traceback."""
        result = CliRunner().invoke(
            plan_command, ["--bootstrap-servers", UNREACHABLE, "--topic", "t", "--members", "c0@a", "--timeout", "2"]
        )
        assert result.exit_code == 1
        assert "Traceback" not in result.output and "could not describe the cluster/topics" in result.output


class TestCliArguments:
    def test_reassign_output_in_missing_directory(self, tmp_path: Path) -> None:
        """-o /missing-dir/f.json is refused before connecting (the bootstrap here is unreachable)."""
        target = tmp_path / "missing-dir" / "f.json"
        result = CliRunner().invoke(racks, ["reassign", "-b", UNREACHABLE, "-o", str(target)])
        assert isinstance(result.exception, ConfigError)
        assert "--output" in str(result.exception) and "does not exist" in str(result.exception)

    def test_duplicate_broker_ids(self) -> None:
        """--brokers 1:a,1:b is an error, not 'the last one wins'."""
        result = CliRunner().invoke(racks, ["placement", "--brokers", "1:a,1:b,2:c", "-r", "1"])
        assert isinstance(result.exception, ConfigError) and "broker 1 is listed twice" in str(result.exception)

    def test_fenced_must_be_a_known_broker(self) -> None:
        """--fenced names brokers of --brokers."""
        result = CliRunner().invoke(racks, ["placement", "--brokers", "1:a,2:b", "-r", "1", "--fenced", "7"])
        assert isinstance(result.exception, ConfigError) and "--fenced" in str(result.exception)

    def test_striped_json_replays_from_seed(self) -> None:
        """--algorithm striped --seed S prints the seed and the same assignment every time."""
        args = ["placement", "--brokers", "1:a,2:b,3:c,4:a", "-p", "4", "-r", "2", "--seed", "7", "--json"]
        first, second = (json.loads(CliRunner().invoke(racks, args).output) for _ in range(2))
        assert first["seed"] == 7 and first["algorithm"] == "striped" and first == second
