"""The demo's cluster and topics: the embedded 3-rack cluster (started and stopped here), or the one
``MUTEPRO_BOOTSTRAP`` names when mutepro started it (the demo's faults signal its broker processes)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping

from rich.console import Console

from mutepro.cluster.env import can_inject_faults, from_env
from mutepro.cluster.launcher import LocalCluster
from mutepro.cluster.spec import ClusterSpec
from mutepro.errors import ClusterError

PARTITIONS = 12
#: One replica each, round-robin over brokers 1, 2, 3: broker 2 leads partitions 1, 4, 7 and 10, and nothing
#: else can serve them while it misbehaves (with replicas, the fault would be a leader election instead).
ASSIGNMENT = [[1], [2], [3]] * (PARTITIONS // 3)


@contextlib.contextmanager
def demo_cluster(console: Console) -> Iterator[LocalCluster]:
    """The cluster the demo runs on; one it started is always stopped at the end."""
    bootstrap = os.environ.get("MUTEPRO_BOOTSTRAP")
    if bootstrap:
        cluster = attach(bootstrap)
        console.print(f"using the cluster at {bootstrap} (MUTEPRO_BOOTSTRAP); it is left running")
        yield cluster
        return
    with console.status("starting the embedded 3-broker, 3-rack Kafka cluster"):
        cluster = LocalCluster(ClusterSpec(brokers=3)).start()
    try:
        console.print(f"cluster up: {cluster.bootstrap_servers}, racks {cluster.racks}")
        yield cluster
    finally:
        with console.status("stopping the cluster"):
            cluster.stop()


def attach(bootstrap: str) -> LocalCluster:
    """A handle on the running cluster at ``bootstrap``, started by mutepro (``mutepro cluster up``, or the
    directory in ``MUTEPRO_CLUSTER_DIR``): its state file gives the broker processes the faults signal."""
    cluster = from_env(bootstrap)
    if can_inject_faults(cluster) and set(cluster.brokers) >= {1, 2, 3}:
        return cluster
    raise ClusterError(
        f"MUTEPRO_BOOTSTRAP={bootstrap} is not a running cluster mutepro started with brokers 1, 2 and 3: the demo "
        "stalls broker 2 by signalling its process. Start one with `mutepro cluster up` (and set "
        "MUTEPRO_CLUSTER_DIR to its run directory if it is not the default one), or unset MUTEPRO_BOOTSTRAP to let "
        "the demo start its own"
    )


def create_topic(cluster: LocalCluster, name: str, config: Mapping[str, str] | None = None) -> None:
    """A 12-partition topic, one replica per partition, a third led by each broker; waits for its leaders."""
    from confluent_kafka.admin import AdminClient, NewTopic

    from mutepro.cluster.topics import wait_for_leaders

    admin = AdminClient(cluster.client_config())
    topic = NewTopic(name, num_partitions=PARTITIONS, replica_assignment=ASSIGNMENT, config=dict(config or {}))
    admin.create_topics([topic], operation_timeout=30)[name].result(timeout=35)
    wait_for_leaders(admin, name, PARTITIONS, 30)
