"""``mutepro spark ...``: helpers around the Spark sink."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mutepro.cluster.launcher import default_run_root
from mutepro.errors import ClusterError
from mutepro.spark.jars import resolve_spark_kafka


@click.group("spark")
def spark() -> None:
    """The Spark sink: a local standalone cluster to run it on, jars for comparing with Spark's built-in sink."""


@spark.command("jars")
@click.option("--version", "version", default=None, help="Spark version (default: the installed PySpark's).")
def jars(version: str | None) -> None:
    """Resolve Spark's built-in Kafka sink (spark-sql-kafka-0-10) from Maven Central; print the spark.jars value."""
    found = resolve_spark_kafka(version)
    if found.fell_back:
        click.echo(
            f"spark-sql-kafka-0-10 {found.wanted} is not published on the reachable Maven Central; "
            f"using {found.version} (runs on the {found.wanted} runtime)", err=True,
        )
    click.echo(found.spark_jars)


def _progress(line: str) -> None:
    click.echo(f"spark: {line}", err=True)


_run_dir_option = click.option(
    "--run-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
    help="The cluster's run directory (logs, work dirs, cluster.json). Default: spark/ under MUTEPRO_RUN_DIR.",
)


def _resolve_run_dir(run_dir: Path | None) -> Path:
    return run_dir if run_dir is not None else default_run_root() / "spark"


@spark.group("cluster")
def cluster() -> None:
    """A Spark standalone cluster on 127.0.0.1 from PySpark's own jars (a master, workers, optionally Connect)."""


@cluster.command("start")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 8), help="Number of workers.")
@click.option("--cores", default=1, show_default=True, type=click.IntRange(1, 64), help="Cores per worker.")
@click.option("--memory", default="1g", show_default=True, help="Memory each worker offers its executors.")
@click.option("--connect", is_flag=True, help="Also start a Spark Connect server running on the cluster.")
@click.option("--timeout", default=120.0, show_default=True, help="Seconds to wait for the cluster to be ready.")
@_run_dir_option
def start(workers: int, cores: int, memory: str, connect: bool, timeout: float, run_dir: Path | None) -> None:
    """Start the cluster and leave it running; prints the master URL (and the Connect URL) on stdout."""
    from mutepro.spark.standalone import StandaloneCluster, StandaloneSpec
    from mutepro.spark.workerenv import mutepro_root

    directory = _resolve_run_dir(run_dir)
    try:
        recorded = StandaloneCluster.attach(directory)
    except ClusterError:
        pass
    else:
        assert recorded.state is not None
        if any(d.alive() for d in recorded.state.daemons):
            raise click.ClickException(f"a Spark cluster is already running from {directory}: stop it first")
        recorded.stop()  # a stale record (the machine rebooted, the daemons were killed): forget it
    spec = StandaloneSpec(run_dir=directory, workers=workers, worker_cores=cores, worker_memory=memory,
                          connect=connect, python=sys.executable, pythonpath=(mutepro_root(),),
                          start_timeout_s=timeout)
    try:
        started = StandaloneCluster(spec, _progress).start()
    except ClusterError as err:
        raise click.ClickException(str(err)) from err
    click.echo(started.master_url)
    if connect:
        click.echo(started.connect_url)


@cluster.command("stop")
@_run_dir_option
def stop(run_dir: Path | None) -> None:
    """Stop the cluster recorded in the run directory (started by `mutepro spark cluster start`)."""
    from mutepro.spark.standalone import StandaloneCluster

    try:
        StandaloneCluster.attach(_resolve_run_dir(run_dir), _progress).stop()
    except ClusterError as err:
        raise click.ClickException(str(err)) from err


@cluster.command("status")
@_run_dir_option
def status(run_dir: Path | None) -> None:
    """The recorded cluster's URLs, daemons (alive or not) and what the master reports."""
    from mutepro.spark.standalone import StandaloneCluster

    try:
        found = StandaloneCluster.attach(_resolve_run_dir(run_dir))
    except ClusterError as err:
        raise click.ClickException(str(err)) from err
    state = found.state
    assert state is not None
    click.echo(f"master   {state.master_url}  UI {state.webui_url}")
    if state.connect_url:
        click.echo(f"connect  {state.connect_url}")
    for daemon in state.daemons:
        click.echo(f"{daemon.name:<8} pid {daemon.pid:<7} {'alive' if daemon.alive() else 'GONE'}  {daemon.log}")
    try:
        seen = found.status()
    except ClusterError as err:
        raise click.ClickException(str(err)) from err
    click.echo(f"master says: {seen.status}, {seen.alive_workers} workers ALIVE, {seen.cores} cores, "
               f"{seen.active_apps} running applications")
