"""``mutepro cluster`` input checks that act before any JVM starts: names are names, run directories mutepro
did not create are never deleted, bad numbers and corrupt state files are named errors (issue 10 items 3, 7, 8)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import mutepro
from mutepro.cluster.cli import cluster
from mutepro.cluster.launcher import RUN_DIR_MARKER, LocalCluster, validate_cluster_name
from mutepro.cluster.spec import ClusterSpec
from mutepro.errors import ClusterError

ROOT = Path(__file__).resolve().parents[3]
# where this session imports mutepro from (the installed wheel in CI, this checkout when PYTHONPATH names it):
# the subprocesses below import the same one; -P keeps their working directory off sys.path
MUTEPRO_HOME = str(Path(mutepro.__file__).resolve().parents[1])


@pytest.fixture()
def run_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "runs"
    root.mkdir()
    monkeypatch.setenv("MUTEPRO_RUN_DIR", str(root))
    return root


def _cli(*args: str, env_root: Path) -> subprocess.CompletedProcess[str]:
    """The real entry point in a subprocess (what a user sees: exit code, stderr, no traceback)."""
    return subprocess.run(
        [sys.executable, "-P", "-c", "from mutepro.cli import main; main()", *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "MUTEPRO_RUN_DIR": str(env_root), "PYTHONPATH": MUTEPRO_HOME,
             "HOME": str(env_root)},
    )


class TestNames:
    @pytest.mark.parametrize("name", ["..", ".", "../x", "/tmp/x", "a/b", "", "-x", "x" * 65, "a b"])
    def test_paths_are_refused(self, name: str) -> None:
        """Anything but a plain name is a ClusterError naming --name."""
        with pytest.raises(ClusterError, match="--name"):
            validate_cluster_name(name)

    @pytest.mark.parametrize("name", ["default", "staging", "ci-2", "a.b_c"])
    def test_names_pass(self, name: str) -> None:
        """Plain names are accepted as given."""
        assert validate_cluster_name(name) == name

    @pytest.mark.parametrize("command", [["up"], ["status"], ["down"], ["kill", "1"]])
    def test_cli_refuses_a_path_before_touching_it(self, run_root: Path, tmp_path: Path, command: list[str]) -> None:
        """--name PATH is a usage error; the directory and its canary file stay."""
        victim = tmp_path / "victim"
        victim.mkdir()
        (victim / "canary.txt").write_text("keep me")
        result = CliRunner().invoke(cluster, [*command, "--name", str(victim)])
        assert result.exit_code == 2 and "not a cluster name" in result.output
        result = CliRunner().invoke(cluster, [*command, "--name", "../victim"])
        assert result.exit_code == 2
        assert (victim / "canary.txt").read_text() == "keep me"


class TestRunDirOwnership:
    def test_foreign_directory_is_not_deleted(self, run_root: Path) -> None:
        """A non-empty directory without mutepro's marker is refused, untouched, before any JVM starts."""
        foreign = run_root / "mine"
        foreign.mkdir()
        (foreign / "canary.txt").write_text("keep me")
        with pytest.raises(ClusterError, match="not created by mutepro"):
            LocalCluster(ClusterSpec(brokers=1), detached=True, name="mine").start()
        assert (foreign / "canary.txt").read_text() == "keep me"

    def test_marked_directory_counts_as_ours(self, run_root: Path) -> None:
        """A directory with the marker (or only the old layout) is recognised as mutepro's."""
        from mutepro.cluster.launcher import _created_by_mutepro

        marked = run_root / "a"
        marked.mkdir()
        (marked / RUN_DIR_MARKER).write_text("")
        (marked / "junk").write_text("")
        legacy = run_root / "b"
        (legacy / "broker-1").mkdir(parents=True)
        (legacy / "controller").mkdir()
        (legacy / "state.json").write_text("{}")
        stranger = run_root / "c"
        stranger.mkdir()
        (stranger / "state.json").write_text("{}")
        (stranger / "thesis.tex").write_text("")
        assert _created_by_mutepro(marked) and _created_by_mutepro(legacy) and not _created_by_mutepro(stranger)


class TestCorruptState:
    @pytest.mark.parametrize(
        "content",
        [b"{not json", b"\x00\xff\xfe binary", b"[1, 2]", b'{"brokers": [{"node_id": "x"}]}', b'{"controller": {}}',
         json.dumps({"brokers": [], "controller": {"node_id": 0}}).encode()],
    )
    def test_attach_names_the_file_and_the_fix(self, run_root: Path, content: bytes) -> None:
        """Any corrupt state.json is a ClusterError naming the file and how to recover."""
        (run_root / "x").mkdir()
        (run_root / "x" / "state.json").write_bytes(content)
        with pytest.raises(ClusterError) as caught:
            LocalCluster.attach(run_root / "x")
        text = str(caught.value)
        assert str(run_root / "x" / "state.json") in text and "mutepro cluster up" in text

    @pytest.mark.no_sanitizer  # its subprocess gets a clean environment, without the sanitizer's preload
    def test_cli_prints_one_line_not_a_traceback(self, tmp_path: Path) -> None:
        """`mutepro cluster status` on a corrupt state file: exit 1, an error line, no traceback."""
        (tmp_path / "default").mkdir()
        (tmp_path / "default" / "state.json").write_bytes(b'{"brokers": 3}')
        result = _cli("cluster", "status", env_root=tmp_path)
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert "corrupt" in result.stderr and "state.json" in result.stderr


class TestNumbers:
    @pytest.mark.parametrize(
        ("args", "named"),
        [(["--duration", "-5"], "--duration"), (["--duration", "0"], "--duration"),
         (["--duration", "7200"], "--duration"), (["--duty", "1.5"], "--duty"), (["--duty", "0"], "--duty"),
         (["--period", "0"], "--period")],
    )
    def test_limp_refuses_nonsense(self, run_root: Path, args: list[str], named: str) -> None:
        """limp checks its numbers before attaching to any cluster."""
        result = CliRunner().invoke(cluster, ["limp", "1", *args])
        assert result.exit_code == 2 and named in result.output

    @pytest.mark.parametrize("racks", ["1=a,1=b", "1=a,2=", "1=a,b"])
    def test_racks_refuses_duplicates_and_blanks(self, run_root: Path, racks: str) -> None:
        """--racks with a broker id twice, an empty rack or mixed forms is a usage error naming --racks."""
        result = CliRunner().invoke(cluster, ["up", "--racks", racks])
        assert result.exit_code == 2 and "--racks" in result.output
        assert not any(run_root.iterdir())
