"""A local Spark standalone cluster from PySpark's own jars: a Master, N Workers and, optionally, Spark Connect.

    with StandaloneCluster(StandaloneSpec(run_dir=Path("/tmp/spark-run"), workers=2, connect=True)) as cluster:
        spark = SparkSession.builder.master(cluster.master_url).getOrCreate()          # classic driver
        remote = SparkSession.builder.remote(cluster.connect_url).getOrCreate()       # Spark Connect client

Each daemon is a JVM started with ``bin/spark-class`` (the Connect server with ``bin/spark-submit``) in its own
process group, its output in a log file under the run directory; every worker has its own work directory, and
every executor a worker starts is its own JVM with its own Python workers. Readiness is awaited by an event, not a
sleep: the master's JSON page (``http://127.0.0.1:<webui>/json/``) listing N ALIVE workers, and for Connect a gRPC
port that accepts a connection. Every wait is bounded and fails naming what did not come up and the log to read.

The cluster's state (pids, URLs) is written to ``<run_dir>/cluster.json`` so that another process
(``mutepro spark cluster stop``) can stop it: :meth:`StandaloneCluster.attach`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mutepro.errors import ClusterError, PrerequisiteError

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
HOST = "127.0.0.1"
STATE_FILE = "cluster.json"

Progress = Callable[[str], None]


def spark_home() -> Path:
    """The installed PySpark's directory: it holds ``bin/spark-class``, ``bin/spark-submit`` and ``jars/``."""
    try:
        import pyspark
    except ImportError as err:
        raise PrerequisiteError("PySpark is not installed: pip install 'mutepro[spark]'") from err
    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").exists():
        raise PrerequisiteError(f"{home} has no bin/spark-class: not a PySpark with its launch scripts")
    return home


@dataclass(frozen=True)
class StandaloneSpec:
    """What to start. Ports left at 0 are chosen free when the cluster starts."""

    run_dir: Path
    workers: int = 2
    worker_cores: int = 1
    worker_memory: str = "1g"  # what a worker offers its executors
    daemon_memory: str = "256m"  # the Master's and each Worker's own heap (SPARK_DAEMON_MEMORY)
    connect: bool = False
    connect_memory: str = "1g"  # the Connect server's heap: it is the Connect applications' driver
    # the Python executors (and the Connect server's driver-side Python) run, and what they import from
    python: str = sys.executable
    pythonpath: tuple[str, ...] = ()
    connect_conf: Mapping[str, str] = field(default_factory=dict)  # more --conf for the Connect server's app
    start_timeout_s: float = 120.0
    home: Path | None = None  # SPARK_HOME; default: the installed PySpark's


# -- pure parts: command lines and readiness ------------------------------------------------------------------


def master_command(home: Path, port: int, webui_port: int) -> list[str]:
    return [str(home / "bin" / "spark-class"), MASTER_CLASS, "--host", HOST, "--port", str(port),
            "--webui-port", str(webui_port)]


def worker_command(
    home: Path, master_url: str, *, cores: int, memory: str, work_dir: Path, webui_port: int
) -> list[str]:
    return [str(home / "bin" / "spark-class"), WORKER_CLASS, master_url, "--host", HOST, "--cores", str(cores),
            "--memory", memory, "--work-dir", str(work_dir), "--webui-port", str(webui_port)]


def connect_command(home: Path, master_url: str, port: int, conf: Mapping[str, str], memory: str = "1g") -> list[str]:
    """``spark-submit`` of the Connect server (what ``sbin/start-connect-server.sh --wait`` runs), in the
    foreground, its gRPC service on ``127.0.0.1:<port>``, its executors on the standalone cluster."""
    settings = {
        "spark.connect.grpc.binding.address": HOST,
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": HOST,
        "spark.driver.bindAddress": HOST,
        "spark.ui.enabled": "false",
        **conf,
    }
    confs = [arg for key, value in settings.items() for arg in ("--conf", f"{key}={value}")]
    return [str(home / "bin" / "spark-submit"), "--class", CONNECT_CLASS, "--name", "Spark Connect server",
            "--master", master_url, "--driver-memory", memory, *confs, "spark-internal"]


def on_cluster(builder: Any, master: str) -> Any:
    """``builder`` (a ``SparkSession.Builder``) set up for ``master``: unchanged for ``local[...]``; for a cluster,
    the driver bound to loopback (the executors connect back to it) and executors running this interpreter with
    this process's mutepro (:func:`python_conf`)."""
    if master.startswith("local"):
        return builder
    from mutepro.spark.workerenv import mutepro_root

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    for key, value in python_conf(sys.executable, [mutepro_root()]).items():
        builder = builder.config(key, value)
    return builder


def python_conf(python: str, pythonpath: Sequence[str]) -> dict[str, str]:
    """Spark settings making executors (and a driver's own Python) run ``python`` importing from ``pythonpath``."""
    conf = {"spark.pyspark.python": python, "spark.pyspark.driver.python": python}
    if pythonpath:
        conf["spark.executorEnv.PYTHONPATH"] = os.pathsep.join(pythonpath)
    return conf


@dataclass(frozen=True)
class MasterStatus:
    """What the master's JSON page says."""

    status: str
    alive_workers: int
    cores: int
    active_apps: int

    @classmethod
    def parse(cls, text: str) -> MasterStatus:
        """Parse ``/json/``: ``status``, the ``workers`` list (each with a ``state``), ``cores``, ``activeapps``."""
        data = json.loads(text)
        workers = data.get("workers") or []
        return cls(
            status=str(data.get("status", "")),
            alive_workers=sum(1 for w in workers if w.get("state") == "ALIVE"),
            cores=int(data.get("cores", 0)),
            active_apps=len(data.get("activeapps") or []),
        )

    def ready(self, workers: int) -> bool:
        return self.status == "ALIVE" and self.alive_workers >= workers


# -- the cluster ---------------------------------------------------------------------------------------------


@dataclass
class Daemon:
    """One JVM of the cluster: its pid (also its process group) and log file."""

    name: str
    pid: int
    log: str

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        with contextlib.suppress(OSError):  # a zombie (our own child not yet reaped) is not alive
            if Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return False
        return True


@dataclass
class ClusterState:
    """What ``cluster.json`` records: enough to report on and stop the cluster from another process."""

    master_url: str
    webui_url: str
    connect_url: str | None
    daemons: list[Daemon]

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> ClusterState:
        data = json.loads(text)
        return cls(data["master_url"], data["webui_url"], data.get("connect_url"),
                   [Daemon(**d) for d in data["daemons"]])


class StandaloneCluster:
    """A Spark standalone cluster on 127.0.0.1 (see the module docstring); a context manager."""

    def __init__(self, spec: StandaloneSpec, progress: Progress | None = None) -> None:
        self.spec = spec
        self._progress = progress or (lambda _line: None)
        self._procs: list[subprocess.Popen[bytes]] = []
        self.state: ClusterState | None = None

    @property
    def home(self) -> Path:
        """SPARK_HOME (resolved when first needed: stopping a recorded cluster needs no PySpark)."""
        return self.spec.home or spark_home()

    # -- lifecycle --

    @property
    def master_url(self) -> str:
        return self._require().master_url

    @property
    def webui_url(self) -> str:
        return self._require().webui_url

    @property
    def connect_url(self) -> str:
        url = self._require().connect_url
        if url is None:
            raise ClusterError("this cluster was started without Spark Connect (connect=True)")
        return url

    def start(self) -> StandaloneCluster:
        spec = self.spec
        if spec.workers < 1:
            raise ClusterError("a standalone cluster needs at least one worker")
        spec.run_dir.mkdir(parents=True, exist_ok=True)
        (spec.run_dir / "conf").mkdir(exist_ok=True)  # an empty SPARK_CONF_DIR: no stray spark-defaults
        port, webui = _free_port(), _free_port()
        self.state = ClusterState(f"spark://{HOST}:{port}", f"http://{HOST}:{webui}", None, [])
        try:
            self._spawn("master", master_command(self.home, port, webui))
            self._progress(f"master {self.state.master_url} (UI {self.state.webui_url})")
            for i in range(spec.workers):
                work = spec.run_dir / f"worker-{i + 1}"
                work.mkdir(exist_ok=True)
                self._spawn(f"worker-{i + 1}", worker_command(
                    self.home, self.state.master_url, cores=spec.worker_cores, memory=spec.worker_memory,
                    work_dir=work, webui_port=_free_port()))
            self._await_workers(spec.workers, spec.start_timeout_s)
            self._progress(f"{spec.workers} workers ALIVE")
            if spec.connect:
                grpc_port = _free_port()
                conf = {**python_conf(spec.python, spec.pythonpath), **spec.connect_conf}
                command = connect_command(self.home, self.state.master_url, grpc_port, conf, spec.connect_memory)
                # spark-submit sizes the Connect server, a daemon to it, by SPARK_DAEMON_MEMORY
                self._spawn("connect", command, {"SPARK_DAEMON_MEMORY": spec.connect_memory})
                self._await_port("connect", grpc_port, spec.start_timeout_s)
                self.state.connect_url = f"sc://{HOST}:{grpc_port}"
                self._progress(f"Spark Connect {self.state.connect_url}")
            self._write_state()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout_s: float = 20.0) -> None:
        """Stop every daemon (Connect first, then workers, then the master): SIGTERM to its process group, then
        SIGKILL after ``timeout_s``; the state file is removed."""
        if self.state is None:
            return
        for daemon in reversed(self.state.daemons):
            _stop_group(daemon, timeout_s)
            self._progress(f"stopped {daemon.name} (pid {daemon.pid})")
        for proc in self._procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(1)
        self._procs.clear()
        with contextlib.suppress(FileNotFoundError):
            (self.spec.run_dir / STATE_FILE).unlink()
        self.state = None

    @classmethod
    def attach(cls, run_dir: Path, progress: Progress | None = None) -> StandaloneCluster:
        """The cluster whose state ``run_dir`` holds (started by another process): for ``status`` and ``stop``."""
        path = run_dir / STATE_FILE
        try:
            state = ClusterState.from_json(path.read_text())
        except FileNotFoundError as err:
            raise ClusterError(f"no Spark cluster recorded in {run_dir} ({STATE_FILE} missing)") from err
        cluster = cls(StandaloneSpec(run_dir=run_dir), progress)
        cluster.state = state
        return cluster

    def status(self, timeout_s: float = 5.0) -> MasterStatus:
        """The master's view now (raises ClusterError naming the master's log if it does not answer)."""
        try:
            with urllib.request.urlopen(f"{self.webui_url}/json/", timeout=timeout_s) as response:
                return MasterStatus.parse(response.read().decode())
        except (OSError, ValueError) as err:
            raise ClusterError(f"the Spark master at {self.webui_url} did not answer ({err}); "
                               f"see {self._log('master')}") from err

    def __enter__(self) -> StandaloneCluster:
        return self.start() if self.state is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers --

    def _require(self) -> ClusterState:
        if self.state is None:
            raise ClusterError("the Spark cluster is not started")
        return self.state

    def _log(self, name: str) -> str:
        return str(self.spec.run_dir / f"{name}.log")

    def _env(self, more: Mapping[str, str]) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "SPARK_HOME": str(self.home),
            "SPARK_CONF_DIR": str(self.spec.run_dir / "conf"),
            "SPARK_LOCAL_IP": HOST,
            "SPARK_DAEMON_MEMORY": self.spec.daemon_memory,
            "SPARK_CONNECT_MODE": "0",  # the server is a classic JVM driver, whatever the caller's environment
            "PYSPARK_PYTHON": self.spec.python,
            "PYSPARK_DRIVER_PYTHON": self.spec.python,
        })
        env.update(more)
        if self.spec.pythonpath:
            env["PYTHONPATH"] = os.pathsep.join([*self.spec.pythonpath, *filter(None, [env.get("PYTHONPATH")])])
        return env

    def _spawn(self, name: str, command: list[str], env: Mapping[str, str] | None = None) -> None:
        log_path = self._log(name)
        with open(log_path, "ab") as log:
            log.write(f"\n=== mutepro: {' '.join(command)} ===\n".encode())
            log.flush()
            proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=self.spec.run_dir, env=self._env(env or {}), start_new_session=True)
        self._procs.append(proc)
        self._require().daemons.append(Daemon(name, proc.pid, log_path))
        self._write_state()

    def _write_state(self) -> None:
        (self.spec.run_dir / STATE_FILE).write_text(self._require().to_json())

    def _check_alive(self) -> None:
        for daemon in self._require().daemons:
            if not daemon.alive():
                raise ClusterError(f"Spark {daemon.name} (pid {daemon.pid}) exited while starting; see {daemon.log}")

    def _await_workers(self, workers: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        last = "no answer yet"
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                with urllib.request.urlopen(f"{self.webui_url}/json/", timeout=2) as response:
                    seen = MasterStatus.parse(response.read().decode())
                if seen.ready(workers):
                    return
                last = f"master {seen.status}, {seen.alive_workers}/{workers} workers ALIVE"
            except (OSError, ValueError) as err:  # not listening yet: the JVM is still starting
                last = f"no answer ({err})"
            time.sleep(0.25)  # the master has no push notification of a registration; its page is the event
        logs = ", ".join(d.log for d in self._require().daemons)
        raise ClusterError(f"Spark standalone cluster not ready within {timeout_s:.0f}s: {last}; see {logs}")

    def _await_port(self, name: str, port: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                with socket.create_connection((HOST, port), timeout=1):
                    return
            except OSError:
                time.sleep(0.25)
        raise ClusterError(f"Spark {name} did not listen on {HOST}:{port} within {timeout_s:.0f}s; "
                           f"see {self._log(name)}")


def _stop_group(daemon: Daemon, timeout_s: float) -> None:
    """SIGTERM the daemon's process group (the launcher script and its JVM), SIGKILL if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(daemon.pid, sig)
        deadline = time.monotonic() + (timeout_s if sig == signal.SIGTERM else 10)
        while _group_alive(daemon.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not _group_alive(daemon.pid):
            return


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # only zombies left (children of a process that has not reaped them yet) count as gone
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])



