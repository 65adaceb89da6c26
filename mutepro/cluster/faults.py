"""Fault injection on real broker processes beyond a single signal: a limping broker.

A *limping* broker is stopped for ``duty`` of every ``period_s`` (SIGSTOP, then SIGCONT): with duty 0.8 and a
1 s period it runs for 200 ms of every second, so requests are served late rather than not at all, the way a
broker with a failing disk or long GC pauses behaves. The loop is bounded by ``max_duration_s`` and always
leaves the broker running.
"""

from __future__ import annotations

import signal
import threading
import time

from mutepro.cluster.process import NodeProcess
from mutepro.errors import ConfigError
from mutepro.logs import get_logger

log = get_logger("mutepro.cluster")


class Limper:
    """A bounded background loop that stops and continues one node with a duty cycle."""

    def __init__(
        self, node: NodeProcess, *, duty: float = 0.8, period_s: float = 1.0, max_duration_s: float = 300.0
    ) -> None:
        if not 0.0 < duty < 1.0:
            raise ConfigError(f"duty: expected a fraction between 0 and 1 (0.8 = stopped 80% of the time), got {duty}")
        if not 0.01 <= period_s <= 60.0:
            raise ConfigError(f"period_s: expected between 0.01 and 60 seconds, got {period_s}")
        if not 0.0 < max_duration_s <= 3600.0:
            raise ConfigError(f"max_duration_s: expected between 0 and 3600 seconds, got {max_duration_s}")
        self.node = node
        self.duty = duty
        self.period_s = period_s
        self.max_duration_s = max_duration_s
        self.cycles = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"mutepro-limp-{node.node_id}", daemon=True)

    def start(self) -> None:
        log.info("fault_limp_start", node=self.node.label, duty=self.duty, period_s=self.period_s)
        self._thread.start()

    def stop(self) -> None:
        """End the loop and make sure the node runs again."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(self.period_s + 5)
        self.node.signal(signal.SIGCONT)
        log.info("fault_limp_stop", node=self.node.label, cycles=self.cycles)

    def run_for(self, seconds: float) -> None:
        """Limp in the foreground for ``seconds`` (used by the CLI); resumes the node on any exit."""
        self.start()
        try:
            self._stop.wait(min(seconds, self.max_duration_s))
        finally:
            self.stop()

    def _run(self) -> None:
        stopped = self.duty * self.period_s
        running = self.period_s - stopped
        deadline = time.monotonic() + self.max_duration_s
        try:
            while not self._stop.is_set() and time.monotonic() < deadline:
                self.node.signal(signal.SIGSTOP)
                self._stop.wait(stopped)
                self.node.signal(signal.SIGCONT)
                self.cycles += 1
                self._stop.wait(running)
        finally:
            self.node.signal(signal.SIGCONT)
