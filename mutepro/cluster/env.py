"""Which cluster to work on: the one ``MUTEPRO_BOOTSTRAP`` names, or a new local one.

Examples, the demo and the pytest fixtures share this rule. A cluster mutepro started (``mutepro cluster up``,
or a :class:`LocalCluster` whose run directory is in ``MUTEPRO_CLUSTER_DIR``) comes back with its broker
processes, so faults work on it; any other cluster is reached as a client only.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from mutepro.cluster.launcher import LocalCluster, default_run_root
from mutepro.cluster.spec import ClusterSpec

BOOTSTRAP_ENV = "MUTEPRO_BOOTSTRAP"
CLUSTER_DIR_ENV = "MUTEPRO_CLUSTER_DIR"


def from_env(bootstrap: str | None = None) -> LocalCluster:
    """A handle on the running cluster at ``bootstrap`` (default: ``$MUTEPRO_BOOTSTRAP``).

    If the state file in ``$MUTEPRO_CLUSTER_DIR`` (default: the ``default`` cluster of ``mutepro cluster up``)
    describes that cluster, the handle can stall, limp and kill its brokers; otherwise faults raise
    :class:`~mutepro.errors.ClusterError`.
    """
    bootstrap = bootstrap or os.environ.get(BOOTSTRAP_ENV, "")
    run_dir = Path(os.environ.get(CLUSTER_DIR_ENV, default_run_root() / "default"))
    if (run_dir / "state.json").exists():
        cluster = LocalCluster.attach(run_dir)
        if cluster.bootstrap_servers.split(",")[0] in bootstrap.split(","):
            return cluster
    return LocalCluster.external(bootstrap)


def can_inject_faults(cluster: LocalCluster) -> bool:
    """True if the handle knows its brokers' processes (mutepro started the cluster)."""
    return bool(cluster.brokers) and all(b.pid is not None for b in cluster.brokers.values())


@contextlib.contextmanager
def use_cluster(spec: ClusterSpec | None = None) -> Iterator[LocalCluster]:
    """The cluster ``$MUTEPRO_BOOTSTRAP`` names (left running), or a new local one (default: 3 brokers on 3
    racks) started for the block and stopped after it."""
    if os.environ.get(BOOTSTRAP_ENV):
        yield from_env()
        return
    with LocalCluster(spec or ClusterSpec(brokers=3)) as cluster:
        yield cluster
