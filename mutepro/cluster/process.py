"""One Kafka JVM (broker or controller): its files, its process, and signals sent to it.

Kept apart from the cluster logic so fault injection (SIGSTOP/SIGCONT/SIGKILL) and restart work the same for
a cluster this Python process owns and for one started earlier by ``mutepro cluster up`` (found again from
its state file by pid, after checking the pid really is that node's JVM).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int) -> Callable[[], None]:
    def preexec() -> None:  # pragma: no cover - runs in the forked child
        # A cluster owned by a Python process (tests, benchmarks) must not outlive it even when that process is
        # SIGKILLed and no atexit hook runs: ask the kernel to SIGKILL the JVM when its parent goes.
        with contextlib.suppress(Exception):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent_pid:  # the parent died between fork and prctl: nobody will stop this JVM
            os._exit(1)

    return preexec


class _Spawner:
    """The one long-lived thread that forks every JVM a Python process owns.

    Why a thread of its own: the kernel's parent-death signal (``PR_SET_PDEATHSIG``) fires when the *thread*
    that forked the child exits, not the process. A broker restarted from a short-lived worker thread (a test
    or benchmark injecting faults from a thread) was SIGKILLed the moment that thread returned: a second,
    unplanned fault. Forking from one daemon thread that lives as long as the interpreter keeps the intended
    meaning, "the JVMs die with this process", whichever thread asks. (The alternative, a watchdog process per
    JVM, costs a process each and still needs its own death signal; dropping PDEATHSIG would leak JVMs when
    the owner is SIGKILLed.)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], concurrent.futures.Future[Any]]] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None

    def run(self, job: Callable[[], Any]) -> Any:
        """Run ``job`` on the spawner thread and return its result (or raise its exception)."""
        if threading.current_thread() is self._thread:
            return job()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="mutepro-jvm-spawner", daemon=True)
                self._thread.start()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._jobs.put((job, future))
        return future.result()

    def _serve(self) -> None:
        while True:
            job, future = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as err:  # handed to the waiting caller
                future.set_exception(err)


_SPAWNER = _Spawner()


@dataclass
class NodeProcess:
    """A broker or controller of a local cluster."""

    node_id: int
    role: str  # "broker" or "controller"
    port: int
    directory: Path
    rack: str | None = None
    pid: int | None = None
    _popen: subprocess.Popen[bytes] | None = field(default=None, repr=False, compare=False)

    @property
    def properties_file(self) -> Path:
        return self.directory / "server.properties"

    @property
    def log_file(self) -> Path:
        return self.directory / "server.log"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def label(self) -> str:
        return f"broker {self.node_id} ({self.rack})" if self.role == "broker" else f"controller {self.node_id}"

    # -- process lifecycle -------------------------------------------------------------------------------

    def spawn(self, command: Sequence[str], *, detached: bool, env: dict[str, str] | None = None) -> None:
        """Start the JVM, appending its output to :attr:`log_file`."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with self.log_file.open("ab") as log:
            log.write(f"\n=== mutepro: starting {self.label} at {time.strftime('%F %T')} ===\n".encode())
            log.flush()
            preexec: Callable[[], None] | None = None if detached else _die_with_parent(os.getpid())

            def fork() -> subprocess.Popen[bytes]:
                return subprocess.Popen(
                    list(command),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=self.directory,
                    env=env,
                    start_new_session=True,  # a Ctrl-C in the user's terminal is handled by us, not the JVMs
                    preexec_fn=preexec,
                )

            # Owned JVMs are forked by the spawner thread (see _Spawner); detached ones outlive us anyway.
            self._popen = fork() if detached else _SPAWNER.run(fork)
        self.pid = self._popen.pid

    def is_running(self) -> bool:
        """True while the JVM process exists (stopped by SIGSTOP still counts as running)."""
        if self.pid is None:
            return False
        if self._popen is not None:
            return self._popen.poll() is None
        return _pid_is_node(self.pid, self.properties_file)

    def exit_code(self) -> int | None:
        """The exit code if this process started it and it has ended."""
        return self._popen.poll() if self._popen is not None else None

    def is_stalled(self) -> bool:
        """True if the JVM is stopped (SIGSTOP), read from ``/proc/<pid>/stat``."""
        if not self.is_running() or self.pid is None:
            return False
        try:
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return False
        # state is the field after the parenthesised command name
        return stat.rsplit(")", 1)[1].split()[0] in ("T", "t")

    def cpu_seconds(self) -> float:
        """CPU time the JVM has used so far (user + system, from ``/proc/<pid>/stat``); 0 when not running."""
        if self.pid is None or not self.is_running():
            return 0.0
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        # after the command name: state is field 3, utime and stime are fields 14 and 15 (clock ticks)
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def signal(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the JVM; a no-op if it is not running."""
        if self.pid is not None and self.is_running():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def stop(self, timeout_s: float = 15.0) -> None:
        """Stop gracefully (SIGCONT first, since a stalled JVM cannot act on SIGTERM), then SIGKILL."""
        if not self.is_running():
            self._reap()
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        if not self.wait_exit(timeout_s):
            self.signal(signal.SIGKILL)
            self.wait_exit(10.0)
        self._reap()

    def kill(self) -> None:
        """SIGKILL, as a crash would: no controlled shutdown."""
        self.signal(signal.SIGKILL)
        self.wait_exit(10.0)
        self._reap()

    def wait_exit(self, timeout_s: float) -> bool:
        """Wait for the process to end; True if it did."""
        if self._popen is not None:
            try:
                self._popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                return False
            return True
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.is_running():
                return True
            time.sleep(0.05)  # a process we did not start cannot be waited on; poll /proc
        return not self.is_running()

    def _reap(self) -> None:
        if self._popen is not None:
            with contextlib.suppress(Exception):
                self._popen.wait(timeout=0.1)

    def log_tail(self, lines: int = 25) -> str:
        """The last ``lines`` lines of this node's log, for error messages."""
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log written)"
        return "\n".join(text.splitlines()[-lines:])

    def to_state(self) -> dict[str, object]:
        return {
            "node_id": self.node_id,
            "role": self.role,
            "port": self.port,
            "rack": self.rack,
            "directory": str(self.directory),
            "pid": self.pid,
        }

    @classmethod
    def from_state(cls, data: dict[str, object]) -> NodeProcess:
        pid = data.get("pid")
        node = cls(
            node_id=int(data["node_id"]),  # type: ignore[call-overload]
            role=str(data["role"]),
            port=int(data["port"]),  # type: ignore[call-overload]
            directory=Path(str(data["directory"])),
            rack=None if data.get("rack") is None else str(data["rack"]),
            pid=int(pid) if pid is not None else None,  # type: ignore[call-overload]
        )
        if node.pid is not None and not _pid_is_node(node.pid, node.properties_file):
            node.pid = None  # the pid was recycled by an unrelated process: never signal it
        return node


def _pid_is_node(pid: int, properties_file: Path) -> bool:
    """True if ``pid`` is alive and its command line names this node's properties file."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return str(properties_file).encode() in cmdline
