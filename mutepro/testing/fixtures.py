"""pytest fixtures for code that talks to a real Kafka cluster (and Redis): mutepro's tests use them, and so can
yours (``pytest_plugins = ["mutepro.testing.fixtures"]``).

- ``kafka_cluster`` (session): a :class:`~mutepro.cluster.launcher.LocalCluster` (3 brokers on rack-a/b/c and a
  separate controller) started once per session; with ``MUTEPRO_BOOTSTRAP`` set, a handle on that existing
  cluster instead (faults then need ``MUTEPRO_RUN_DIR``/the state file of a ``mutepro cluster up`` cluster).
- ``topic_factory``: creates uniquely named topics and deletes them afterwards.
- ``redis_url`` (session): a real ``redis-server`` on a free loopback port.
- ``no_session_cluster``: stops the session's ``kafka_cluster`` (if this session started one) for a test that
  starts a cluster of its own, so that two clusters never share the machine; only for tests run last.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence

import pytest

from mutepro.cluster.env import from_env
from mutepro.cluster.launcher import LocalCluster
from mutepro.cluster.spec import ClusterSpec
from mutepro.cluster.topics import create_topic
from mutepro.testing.redis_server import RedisServer

__all__ = ["create_topic", "kafka_cluster", "no_session_cluster", "redis_url", "topic_factory"]

TopicFactory = Callable[..., str]


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[LocalCluster]:
    """A real multi-broker, rack-aware KRaft cluster for the whole test session."""
    if os.environ.get("MUTEPRO_BOOTSTRAP"):
        yield _existing_cluster(os.environ["MUTEPRO_BOOTSTRAP"])
        return
    cluster = LocalCluster(ClusterSpec(brokers=3))
    cluster.start()
    _session_clusters.append(cluster)
    try:
        yield cluster
    finally:
        cluster.stop()
        _session_clusters.remove(cluster)


#: the clusters ``kafka_cluster`` started in this session (at most one)
_session_clusters: list[LocalCluster] = []


@pytest.fixture
def no_session_cluster() -> None:
    """Stop the session's cluster before a test that starts its own (the chaos soak: four more JVMs beside an idle
    cluster's four on a 2-core machine). Any later test asking for ``kafka_cluster`` would get a stopped one, so
    the test using this must run last (mutepro's conftest orders ``soak`` tests last)."""
    for cluster in _session_clusters:
        cluster.stop()  # the fixture's own stop() at session end finds nothing left to stop


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


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A real redis-server on a free loopback port (no persistence, no password), stopped after the session."""
    if not shutil.which("redis-server"):
        pytest.fail(
            "redis-server is not installed; run `bash .ci/install.sh` (Debian: apt-get install redis-server)"
        )
    with RedisServer() as server:
        yield server.url


# -- helpers -------------------------------------------------------------------------------------------------


def _existing_cluster(bootstrap: str) -> LocalCluster:
    # A cluster mutepro did not start is usable for everything except faults (no process ids to signal).
    return from_env(bootstrap)


def _slug(name: str) -> str:
    cleaned = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    return ("t-" + cleaned)[:60]
