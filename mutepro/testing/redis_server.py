"""A real ``redis-server`` (password-protected if asked) that tests and the soak can stop and start on one port.

The session-wide ``redis_url`` fixture runs one (without a password) for the whole session; outage tests need
their own server: ``stop()`` is a real outage (connections refused), ``start()`` brings the same URL back, empty
(no persistence, as a restarted cache would be).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from mutepro.errors import ClusterError


class RedisServer:
    """``redis-server`` on 127.0.0.1:``port`` (a free one by default), requiring ``password`` when one is given."""

    def __init__(self, password: str | None = None, port: int | None = None) -> None:
        binary = shutil.which("redis-server")
        if not binary:
            raise ClusterError("redis-server is not installed; run `bash .ci/install.sh` (apt: redis-server)")
        self._binary = binary
        self.password = password
        self.port = port or _free_port()
        self._workdir = Path(tempfile.mkdtemp(prefix="mutepro-redis-"))
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password is not None else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout_s: float = 20.0) -> None:
        """Start the server (no-op if running) and wait until it accepts connections."""
        if self.running:
            return
        auth = ["--requirepass", self.password] if self.password is not None else ["--protected-mode", "yes"]
        self._proc = subprocess.Popen(
            [self._binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self._workdir), *auth],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise ClusterError(f"redis-server exited with code {self._proc.returncode} on port {self.port}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)  # connecting is the only readiness signal redis-server gives
        raise ClusterError(f"redis-server did not listen on 127.0.0.1:{self.port} within {timeout_s}s")

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s); connections are refused until ``start()``."""
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(10)
        self._proc = None

    def close(self) -> None:
        """Stop and remove the working directory."""
        self.stop()
        shutil.rmtree(self._workdir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
