"""One node of a local cluster (mutepro.cluster.process.NodeProcess), with a Python process standing in for the
JVM: its files, its state record and the recycled-pid guard, and the lifecycle of a process it spawned."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mutepro.cluster.process import NodeProcess


class TestRecord:
    def test_files_and_label(self, tmp_path: Path) -> None:
        broker = NodeProcess(1, "broker", 9092, tmp_path, rack="rack-a")
        assert (broker.properties_file, broker.log_file, broker.data_dir) == (
            tmp_path / "server.properties", tmp_path / "server.log", tmp_path / "data"
        )
        assert broker.label == "broker 1 (rack-a)"
        assert NodeProcess(100, "controller", 9093, tmp_path).label == "controller 100"

    def test_state_round_trip(self, tmp_path: Path) -> None:
        node = NodeProcess(2, "broker", 9094, tmp_path, rack=None)
        again = NodeProcess.from_state(node.to_state())
        assert again == node and not again.is_running()

    def test_a_recycled_pid_is_never_kept(self, tmp_path: Path) -> None:
        """A pid now used by a process that is not this node (this test's own): forgotten, so never signalled."""
        state = {**NodeProcess(1, "broker", 9092, tmp_path).to_state(), "pid": os.getpid()}
        assert NodeProcess.from_state(state).pid is None

    def test_no_log_yet(self, tmp_path: Path) -> None:
        assert NodeProcess(1, "broker", 9092, tmp_path / "none").log_tail() == "(no log written)"


@pytest.fixture
def spawned(tmp_path: Path) -> Iterator[NodeProcess]:
    """A node whose 'JVM' is a Python process naming the node's properties file on its command line (as the
    real JVM's does), ended after the test."""
    node = NodeProcess(1, "broker", 9092, tmp_path / "broker-1", rack="rack-a")
    node.spawn([sys.executable, "-c", "import time; time.sleep(60)",
                str(node.properties_file)], detached=False)
    yield node
    node.kill()


class TestSpawned:
    def test_running_recorded_and_stopped(self, spawned: NodeProcess) -> None:
        assert spawned.pid is not None and spawned.is_running() and spawned.exit_code() is None
        assert "=== mutepro: starting broker 1 (rack-a)" in spawned.log_tail()
        attached = NodeProcess.from_state(spawned.to_state())
        assert attached.pid == spawned.pid and attached.is_running()  # its command line names the node
        spawned.stop(timeout_s=10)
        assert not spawned.is_running() and spawned.exit_code() is not None

    def test_a_signal_to_a_stopped_node_is_a_no_op(self, spawned: NodeProcess) -> None:
        spawned.kill()
        assert not spawned.is_running() and spawned.cpu_seconds() == 0.0
        spawned.signal(signal.SIGTERM)  # nothing to signal: no error
