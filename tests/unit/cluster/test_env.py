"""Which cluster to work on (mutepro.cluster.env), without starting or reaching one: the cluster a state file
describes when it is the one MUTEPRO_BOOTSTRAP names, any other reached as a client only, and whether a handle
can inject faults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mutepro.cluster import env
from mutepro.cluster.launcher import LocalCluster
from mutepro.cluster.process import NodeProcess
from mutepro.cluster.spec import ClusterSpec


def _state(run_dir: Path, port: int) -> None:
    """A state file as ``mutepro cluster up`` writes it, its processes gone (no pids)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    node = {"role": "broker", "rack": "rack-a", "directory": str(run_dir / "broker-1"), "pid": None}
    (run_dir / "state.json").write_text(json.dumps({
        "name": "default", "host": "127.0.0.1", "cluster_id": "abc",
        "controller": {**node, "node_id": 100, "role": "controller", "port": port + 1},
        "brokers": [{**node, "node_id": 1, "port": port}],
    }))


@pytest.fixture
def externals(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """LocalCluster.external recorded instead of reaching a cluster."""
    asked: list[str] = []

    def external(bootstrap: str) -> LocalCluster:
        asked.append(bootstrap)
        return LocalCluster(ClusterSpec(brokers=1), run_dir="/nonexistent")

    monkeypatch.setattr(LocalCluster, "external", staticmethod(external))
    return asked


class TestFromEnv:
    def test_the_recorded_cluster_when_it_is_the_one_named(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, externals: list[str]
    ) -> None:
        _state(tmp_path / "run", 19092)
        monkeypatch.setenv(env.CLUSTER_DIR_ENV, str(tmp_path / "run"))
        monkeypatch.setenv(env.BOOTSTRAP_ENV, "127.0.0.1:19092,127.0.0.1:19093")
        cluster = env.from_env()
        assert externals == [] and cluster.cluster_id == "abc" and set(cluster.brokers) == {1}

    def test_another_cluster_is_reached_as_a_client(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, externals: list[str]
    ) -> None:
        _state(tmp_path / "run", 19092)
        monkeypatch.setenv(env.CLUSTER_DIR_ENV, str(tmp_path / "run"))
        env.from_env("127.0.0.1:29092")
        assert externals == ["127.0.0.1:29092"]

    def test_without_a_state_file_the_named_cluster_is_external(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, externals: list[str]
    ) -> None:
        monkeypatch.setenv(env.CLUSTER_DIR_ENV, str(tmp_path / "empty"))
        monkeypatch.setenv(env.BOOTSTRAP_ENV, "127.0.0.1:9092")
        env.from_env()
        assert externals == ["127.0.0.1:9092"]


class TestCanInjectFaults:
    def test_only_with_every_brokers_process(self, tmp_path: Path) -> None:
        cluster = LocalCluster(ClusterSpec(brokers=2), run_dir=tmp_path)
        assert not env.can_inject_faults(cluster)  # no brokers known
        cluster.brokers = {b: NodeProcess(b, "broker", 9000 + b, tmp_path, pid=4000 + b) for b in (1, 2)}
        assert env.can_inject_faults(cluster)
        cluster.brokers[2].pid = None
        assert not env.can_inject_faults(cluster)


class TestUseCluster:
    def test_a_named_cluster_is_used_and_left_running(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, externals: list[str]
    ) -> None:
        monkeypatch.setenv(env.CLUSTER_DIR_ENV, str(tmp_path / "empty"))
        monkeypatch.setenv(env.BOOTSTRAP_ENV, "127.0.0.1:9092")
        with env.use_cluster() as cluster:
            assert isinstance(cluster, LocalCluster)
        assert externals == ["127.0.0.1:9092"]
