"""``mutepro spark ...`` (mutepro.spark.cli), without starting a Spark cluster: the cluster commands name the run
directory when nothing is recorded there, start refuses a cluster already running, stop ends it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from mutepro.spark.cli import spark
from mutepro.spark.standalone import STATE_FILE, ClusterState, Daemon


class TestClusterCommands:
    def test_cli_status_and_stop_without_a_cluster_name_the_run_dir(self, tmp_path: Path) -> None:
        for command in ("status", "stop"):
            result = CliRunner().invoke(spark, ["cluster", command, "--run-dir", str(tmp_path)])
            assert result.exit_code != 0 and "no Spark cluster recorded" in result.output, result.output

    def test_cli_start_refuses_a_running_cluster_and_stop_ends_it(self, tmp_path: Path) -> None:
        proc = subprocess.Popen([sys.executable, "-c", "import time;time.sleep(60)"], start_new_session=True)
        state = ClusterState("spark://127.0.0.1:1", "http://127.0.0.1:2", None, [Daemon("master", proc.pid, "m.log")])
        (tmp_path / STATE_FILE).write_text(state.to_json())
        started = CliRunner().invoke(spark, ["cluster", "start", "--run-dir", str(tmp_path)])
        assert started.exit_code != 0 and "already running" in started.output, started.output
        stopped = CliRunner().invoke(spark, ["cluster", "stop", "--run-dir", str(tmp_path)])
        assert stopped.exit_code == 0 and "stopped master" in stopped.output, stopped.output
        assert proc.wait(5) is not None and not (tmp_path / STATE_FILE).exists()
