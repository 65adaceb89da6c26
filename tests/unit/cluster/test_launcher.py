"""The local cluster's launcher (mutepro.cluster.launcher), without starting Java: port allocation, cluster ids,
and waiting until the nodes are quiet on a stand-in clock (starting and stopping: tests/integration/test_cluster.py)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from mutepro.cluster.launcher import LocalCluster, _allocate_ports
from mutepro.cluster.spec import ClusterSpec
from mutepro.errors import ClusterError


class TestPorts:
    def test_busy_port_names_the_port_and_the_fix(self) -> None:
        """A port already bound gives a ClusterError naming it and suggesting 0."""
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            sock.listen()
            busy = sock.getsockname()[1]
            with pytest.raises(ClusterError, match=rf"port {busy} .*pass 0"):
                _allocate_ports([0, busy], "127.0.0.1")

    def test_zero_ports_are_distinct(self) -> None:
        """Free ports chosen together never collide."""
        ports = _allocate_ports([0, 0, 0, 0], "127.0.0.1")
        assert len(set(ports)) == 4


class TestClusterId:
    def test_cluster_ids_never_start_with_a_dash(self) -> None:
        """An id starting with '-' would be parsed as an option by kafka-storage format."""
        from mutepro.cluster.launcher import new_cluster_id

        ids = [new_cluster_id() for _ in range(2000)]
        assert all(not i.startswith("-") and len(i) == 22 for i in ids)
        assert len(set(ids)) == 2000


class _BusyNode:
    """A node whose CPU time grows by ``per_call`` each time it is read (the clock advances 1 s per window)."""

    def __init__(self, per_call: list[float]) -> None:
        self.readings = iter(per_call)
        self.total = 0.0

    def cpu_seconds(self) -> float:
        self.total += next(self.readings)
        return self.total


class TestWaitQuiet:
    def _cluster(self, tmp_path: Path, *nodes: _BusyNode) -> LocalCluster:
        cluster = LocalCluster(ClusterSpec(brokers=1), run_dir=tmp_path)
        cluster.nodes = lambda: iter(nodes)  # type: ignore[method-assign]
        return cluster

    def test_returns_once_the_nodes_are_quiet(self, tmp_path: Path) -> None:
        """1.5 cores in the first window, 0.1 in the second: two windows, 0.1 returned."""
        now = [0.0]
        node = _BusyNode([0.0, 1.5, 0.0, 0.1])
        cores = self._cluster(tmp_path, node).wait_quiet(
            0.3, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s)
        )
        assert cores == pytest.approx(0.1) and now[0] == 2.0

    def test_gives_up_at_the_timeout_with_the_last_figure(self, tmp_path: Path) -> None:
        """Always 2 cores busy: returns 2.0 once the timeout passed, without raising."""
        now = [0.0]
        node = _BusyNode([0.0, 2.0] * 10)
        cores = self._cluster(tmp_path, node).wait_quiet(
            0.3, timeout_s=3.0, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s)
        )
        assert cores == pytest.approx(2.0) and now[0] == 3.0
