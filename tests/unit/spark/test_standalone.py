"""mutepro.spark.standalone without starting anything: command lines, the master's JSON page, the state file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mutepro.errors import ClusterError
from mutepro.spark.standalone import (
    CONNECT_CLASS,
    MASTER_CLASS,
    STATE_FILE,
    WORKER_CLASS,
    ClusterState,
    Daemon,
    MasterStatus,
    StandaloneCluster,
    StandaloneSpec,
    connect_command,
    master_command,
    python_conf,
    worker_command,
)
from tests.unit.spark._builder import FakeBuilder

HOME = Path("/opt/pyspark")


def test_master_command_binds_loopback_on_the_given_ports() -> None:
    assert master_command(HOME, 7077, 8080) == [
        "/opt/pyspark/bin/spark-class", MASTER_CLASS, "--host", "127.0.0.1", "--port", "7077", "--webui-port", "8080",
    ]


def test_worker_command_has_its_own_work_dir_cores_and_memory() -> None:
    command = worker_command(HOME, "spark://127.0.0.1:7077", cores=1, memory="512m", work_dir=Path("/run/w1"),
                             webui_port=8081)
    assert command[:3] == ["/opt/pyspark/bin/spark-class", WORKER_CLASS, "spark://127.0.0.1:7077"]
    pairs = dict(zip(command[3::2], command[4::2], strict=True))
    assert pairs == {"--host": "127.0.0.1", "--cores": "1", "--memory": "512m", "--work-dir": "/run/w1",
                     "--webui-port": "8081"}


def test_connect_command_submits_the_server_to_the_master_on_a_loopback_grpc_port() -> None:
    command = connect_command(HOME, "spark://127.0.0.1:7077", 15002, {"spark.cores.max": "2"}, memory="1g")
    assert command[0] == "/opt/pyspark/bin/spark-submit" and command[-1] == "spark-internal"
    assert command[command.index("--class") + 1] == CONNECT_CLASS
    assert command[command.index("--master") + 1] == "spark://127.0.0.1:7077"
    assert command[command.index("--driver-memory") + 1] == "1g"
    confs = {command[i + 1] for i, arg in enumerate(command) if arg == "--conf"}
    assert {"spark.connect.grpc.binding.port=15002", "spark.connect.grpc.binding.address=127.0.0.1",
            "spark.cores.max=2"} <= confs


def test_connect_conf_overrides_the_defaults() -> None:
    command = connect_command(HOME, "spark://m:1", 1, {"spark.ui.enabled": "true"})
    confs = [command[i + 1] for i, arg in enumerate(command) if arg == "--conf"]
    assert "spark.ui.enabled=true" in confs and "spark.ui.enabled=false" not in confs


def test_python_conf_names_the_interpreter_and_the_executors_pythonpath() -> None:
    assert python_conf("/venv/bin/python", ["/src", "/lib"]) == {
        "spark.pyspark.python": "/venv/bin/python", "spark.pyspark.driver.python": "/venv/bin/python",
        "spark.executorEnv.PYTHONPATH": os.pathsep.join(["/src", "/lib"]),
    }
    assert "spark.executorEnv.PYTHONPATH" not in python_conf("python3", [])


_MASTER_JSON = {
    "url": "spark://127.0.0.1:7077", "status": "ALIVE", "cores": 2, "coresused": 0,
    "workers": [
        {"id": "worker-1", "state": "ALIVE", "cores": 1},
        {"id": "worker-0", "state": "DEAD", "cores": 1},
        {"id": "worker-2", "state": "ALIVE", "cores": 1},
    ],
    "activeapps": [{"id": "app-1"}], "completedapps": [],
}


def test_master_status_counts_alive_workers_only() -> None:
    seen = MasterStatus.parse(json.dumps(_MASTER_JSON))
    assert seen == MasterStatus(status="ALIVE", alive_workers=2, cores=2, active_apps=1)
    assert seen.ready(2) and not seen.ready(3)


def test_a_master_still_recovering_or_without_workers_is_not_ready() -> None:
    assert not MasterStatus.parse(json.dumps({**_MASTER_JSON, "status": "RECOVERING"})).ready(1)
    assert not MasterStatus.parse(json.dumps({"status": "ALIVE"})).ready(1)
    with pytest.raises(ValueError):
        MasterStatus.parse("<html>starting</html>")


def test_state_round_trips_through_json(tmp_path: Path) -> None:
    state = ClusterState("spark://127.0.0.1:1", "http://127.0.0.1:2", "sc://127.0.0.1:3",
                         [Daemon("master", 11, "/r/master.log"), Daemon("worker-1", 12, "/r/worker-1.log")])
    assert ClusterState.from_json(state.to_json()) == state
    (tmp_path / STATE_FILE).write_text(state.to_json())
    attached = StandaloneCluster.attach(tmp_path)
    assert attached.master_url == state.master_url and attached.connect_url == "sc://127.0.0.1:3"


def test_attach_without_a_state_file_names_the_directory(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match=str(tmp_path)):
        StandaloneCluster.attach(tmp_path)


def test_connect_url_of_a_cluster_without_connect_says_so(tmp_path: Path) -> None:
    cluster = StandaloneCluster(StandaloneSpec(run_dir=tmp_path), progress=None)
    cluster.state = ClusterState("spark://127.0.0.1:1", "http://127.0.0.1:2", None, [])
    with pytest.raises(ClusterError, match="without Spark Connect"):
        _ = cluster.connect_url


def test_stop_kills_each_daemons_process_group_and_forgets_the_state(tmp_path: Path) -> None:
    """stop() from another process (attach): each recorded pid is a process group (a launcher and its child),
    and all of it ends."""
    procs = [subprocess.Popen([sys.executable, "-c", "import subprocess,sys,time;"
                               "subprocess.Popen([sys.executable,'-c','import time;time.sleep(60)']);time.sleep(60)"],
                              start_new_session=True) for _ in range(2)]
    state = ClusterState("spark://127.0.0.1:1", "http://127.0.0.1:2", None,
                         [Daemon(f"d{i}", p.pid, "x.log") for i, p in enumerate(procs)])
    (tmp_path / STATE_FILE).write_text(state.to_json())
    stopped: list[str] = []
    StandaloneCluster.attach(tmp_path, progress=stopped.append).stop(timeout_s=5)
    for proc in procs:
        assert proc.wait(5) is not None
        assert _group_gone(proc.pid, timeout_s=30), f"process group {proc.pid} still has members"
    assert not (tmp_path / STATE_FILE).exists() and len(stopped) == 2


def _group_gone(pgid: int, timeout_s: float) -> bool:
    """Whether every member of the process group has been reaped, within ``timeout_s``. The killed launcher's
    child is orphaned and reaped by the machine's PID 1 when that gets round to it (1.7 s here, once), and a
    zombie still answers ``killpg(pgid, 0)``: poll for the reaping, bounded."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


class TestOnCluster:
    def test_local_masters_are_left_alone(self) -> None:
        from mutepro.spark.standalone import on_cluster

        assert on_cluster(FakeBuilder(), "local[4]").conf == {}

    def test_a_cluster_driver_binds_to_loopback_and_executors_run_this_python(self) -> None:
        import sys

        from mutepro.spark.standalone import on_cluster

        conf = on_cluster(FakeBuilder(), "spark://127.0.0.1:7077").conf
        assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "127.0.0.1"
        assert conf["spark.pyspark.python"] == sys.executable and "spark.executorEnv.PYTHONPATH" in conf
