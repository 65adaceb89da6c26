"""Cluster shape and prerequisite checks, without starting Java."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from mutepro.cluster.faults import Limper
from mutepro.cluster.launcher import LocalCluster, _allocate_ports
from mutepro.cluster.process import NodeProcess
from mutepro.cluster.spec import ClusterSpec, resolve_racks
from mutepro.errors import ClusterError, ConfigError


class TestResolveRacks:
    def test_default_is_one_rack_per_broker(self) -> None:
        """Three brokers get rack-a, rack-b and rack-c."""
        assert resolve_racks(3, None) == {1: "rack-a", 2: "rack-b", 3: "rack-c"}

    def test_six_brokers_on_three_racks_round_robin(self) -> None:
        """An int spreads brokers round-robin over that many racks."""
        assert resolve_racks(6, 3) == {1: "rack-a", 2: "rack-b", 3: "rack-c", 4: "rack-a", 5: "rack-b", 6: "rack-c"}

    def test_four_racks_by_name(self) -> None:
        """A list of names is used in order."""
        assert resolve_racks(4, ["z1", "z2", "z3", "z4"]) == {1: "z1", 2: "z2", 3: "z3", 4: "z4"}

    def test_explicit_mapping_must_cover_every_broker(self) -> None:
        """A mapping missing a broker names the missing id."""
        with pytest.raises(ConfigError, match=r"missing \[3\]"):
            resolve_racks(3, {1: "a", 2: "b"})

    def test_zero_brokers_is_rejected(self) -> None:
        """At least one broker is required, and the error names the field."""
        with pytest.raises(ConfigError, match="brokers:"):
            resolve_racks(0, None)


class TestClusterSpec:
    def test_non_loopback_host_is_rejected(self) -> None:
        """The launcher binds to loopback only."""
        with pytest.raises(ConfigError, match="host:"):
            ClusterSpec(host="10.0.0.1").validate()

    def test_port_count_must_match_brokers(self) -> None:
        """broker_ports needs one port per broker."""
        with pytest.raises(ConfigError, match="broker_ports:"):
            ClusterSpec(brokers=3, broker_ports=[9092]).validate()


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


class TestLimper:
    def test_duty_outside_zero_one_is_rejected(self, tmp_path: Path) -> None:
        """duty is a fraction; 80 (percent) is a mistake the error explains."""
        node = NodeProcess(1, "broker", 9092, tmp_path)
        with pytest.raises(ConfigError, match="duty:"):
            Limper(node, duty=80)

    def test_unbounded_duration_is_rejected(self, tmp_path: Path) -> None:
        """Every fault loop is bounded in time."""
        node = NodeProcess(1, "broker", 9092, tmp_path)
        with pytest.raises(ConfigError, match="max_duration_s:"):
            Limper(node, max_duration_s=10_000)


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
