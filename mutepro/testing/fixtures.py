"""pytest fixtures for code that talks to a real Kafka cluster (and Redis): mutepro's tests use them, and so can
yours (``pytest_plugins = ["mutepro.testing.fixtures"]``).

- ``kafka_cluster`` (session): a :class:`~mutepro.cluster.launcher.LocalCluster` (3 brokers on rack-a/b/c and a
  separate controller) started once per session; with ``MUTEPRO_BOOTSTRAP`` set, a handle on that existing
  cluster instead (faults then need ``MUTEPRO_RUN_DIR``/the state file of a ``mutepro cluster up`` cluster).
- ``topic_factory``: creates uniquely named topics and deletes them afterwards.
- ``redis_url`` (session): a real ``redis-server`` on a free loopback port.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence

import pytest

from mutepro.cluster.env import from_env
from mutepro.cluster.launcher import LocalCluster
from mutepro.cluster.spec import ClusterSpec
from mutepro.errors import ClusterError, ConfigError
from mutepro.racks.topics import wait_for_leaders

TopicFactory = Callable[..., str]


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[LocalCluster]:
    """A real multi-broker, rack-aware KRaft cluster for the whole test session."""
    if os.environ.get("MUTEPRO_BOOTSTRAP"):
        yield _existing_cluster(os.environ["MUTEPRO_BOOTSTRAP"])
        return
    cluster = LocalCluster(ClusterSpec(brokers=3))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def topic_factory(kafka_cluster: LocalCluster, request: pytest.FixtureRequest) -> Iterator[TopicFactory]:
    """Create topics with unique names; they are deleted when the test ends."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    created: list[str] = []

    def make(
        partitions: int = 6,
        replication_factor: int = 3,
        replica_assignment: Sequence[Sequence[int]] | None = None,
        config: Mapping[str, str] | None = None,
        prefix: str | None = None,
    ) -> str:
        name = f"{prefix or _slug(request.node.name)}-{uuid.uuid4().hex[:8]}"
        create_topic(
            admin, name, partitions=partitions, replication_factor=replication_factor,
            replica_assignment=replica_assignment, config=config,
        )
        created.append(name)
        return name

    yield make
    if created:
        futures = admin.delete_topics(created, operation_timeout=10)
        for fut in futures.values():
            # a topic on a killed broker may not delete cleanly; it dies with the cluster
            with contextlib.suppress(Exception):
                fut.result(timeout=15)


def create_topic(
    admin: object,
    name: str,
    *,
    partitions: int = 6,
    replication_factor: int = 3,
    replica_assignment: Sequence[Sequence[int]] | None = None,
    config: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
) -> None:
    """Create a topic and wait until every partition has a leader in the metadata.

    Nonsense is refused before the admin call, naming the argument: Kafka would answer ``partitions=-5``
    with "use the broker default" and a replica list ``[1, 1, 2]`` with a late INVALID_REPLICA_ASSIGNMENT.
    """
    from confluent_kafka.admin import NewTopic

    _check_topic_shape(partitions, replication_factor, replica_assignment)

    if replica_assignment is not None:
        # librdkafka wants the partition count stated alongside an explicit assignment (-1 means "broker default")
        topic = NewTopic(
            name, num_partitions=len(replica_assignment),
            replica_assignment=[list(r) for r in replica_assignment], config=dict(config or {}),
        )
        expected = len(replica_assignment)
    else:
        topic = NewTopic(
            name, num_partitions=partitions, replication_factor=replication_factor, config=dict(config or {})
        )
        expected = partitions
    futures = admin.create_topics([topic], operation_timeout=timeout_s)  # type: ignore[attr-defined]
    futures[name].result(timeout=timeout_s + 5)
    wait_for_leaders(admin, name, expected, timeout_s)


#: Upper bound on partitions for a test topic: enough for any test or benchmark, far below what would exhaust
#: the local brokers' file handles (each partition replica holds a few segment files open).
MAX_TEST_PARTITIONS = 10_000


def _check_topic_shape(
    partitions: int, replication_factor: int, replica_assignment: Sequence[Sequence[int]] | None
) -> None:
    if replica_assignment is not None:
        if not replica_assignment:
            raise ConfigError("replica_assignment: give one replica list per partition (got none)")
        for index, replicas in enumerate(replica_assignment):
            if not replicas:
                raise ConfigError(f"replica_assignment[{index}]: a partition needs at least one replica")
            if len(set(replicas)) != len(replicas):
                raise ConfigError(
                    f"replica_assignment[{index}]: broker ids must differ within a partition, got {list(replicas)}"
                )
        return
    if isinstance(partitions, bool) or not isinstance(partitions, int) or not 1 <= partitions <= MAX_TEST_PARTITIONS:
        raise ConfigError(f"partitions: expected a whole number from 1 to {MAX_TEST_PARTITIONS:,}, got {partitions!r}")
    if isinstance(replication_factor, bool) or not isinstance(replication_factor, int) or replication_factor < 1:
        raise ConfigError(f"replication_factor: expected a whole number >= 1, got {replication_factor!r}")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A real redis-server on a free loopback port (no persistence), stopped after the session."""
    server = shutil.which("redis-server")
    if not server:
        pytest.fail(
            "redis-server is not installed; run `bash .ci/install.sh` (Debian: apt-get install redis-server)"
        )
    port = _free_port()
    workdir = tempfile.mkdtemp(prefix="mutepro-redis-")
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir, "--protected-mode", "yes"],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
    )
    try:
        _wait_for_port(port, proc, timeout_s=20)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


# -- helpers -------------------------------------------------------------------------------------------------


def _existing_cluster(bootstrap: str) -> LocalCluster:
    # A cluster mutepro did not start is usable for everything except faults (no process ids to signal).
    return from_env(bootstrap)


def _slug(name: str) -> str:
    cleaned = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    return ("t-" + cleaned)[:60]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ClusterError(f"redis-server exited with code {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)  # the server is starting; connecting is the only readiness signal it gives
    raise ClusterError(f"redis-server did not listen on 127.0.0.1:{port} within {timeout_s}s")
