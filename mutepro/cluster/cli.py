"""``mutepro cluster``: start, inspect, fault and stop a local rack-aware Kafka cluster."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from mutepro.cluster.faults import Limper
from mutepro.cluster.jars import resolve_kafka
from mutepro.cluster.launcher import LocalCluster, default_run_root, validate_cluster_name
from mutepro.cluster.spec import ClusterSpec
from mutepro.errors import ClusterError

_console = Console()
_err_console = Console(stderr=True)  # progress goes to stderr so `--json` output stays parseable


def _run_dir(name: str) -> Path:
    return default_run_root() / name


def _attach(name: str) -> LocalCluster:
    return LocalCluster.attach(_run_dir(name))


def _check_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        return validate_cluster_name(value)
    except ClusterError as err:
        raise click.BadParameter(str(err).removeprefix("--name: "), ctx=ctx, param=param) from None


_name_option = click.option(
    "--name",
    default="default",
    show_default=True,
    callback=_check_name,
    help="Which local cluster: a plain name (each has its own run directory under MUTEPRO_RUN_DIR), not a path.",
)


@click.group("cluster")
def cluster() -> None:
    """A real Apache Kafka KRaft cluster on 127.0.0.1, one rack per broker, with fault injection."""


@cluster.command("up")
@click.option("--brokers", default=3, show_default=True, type=click.IntRange(1, 12), help="Number of brokers.")
@click.option(
    "--racks",
    default=None,
    help="Number of racks (e.g. 3), a comma list of rack names (round-robin), or id=rack pairs "
    "(1=rack-a,2=rack-a,3=rack-b). Default: one rack per broker up to 3.",
)
@click.option("--timeout", default=120.0, show_default=True, help="Seconds to wait for every broker to register.")
@_name_option
@click.option("--json", "as_json", is_flag=True, help="Print the cluster as JSON.")
def up(brokers: int, racks: str | None, timeout: float, name: str, as_json: bool) -> None:
    """Start the cluster in the background and print its bootstrap servers and racks."""
    spec = ClusterSpec(brokers=brokers, racks=_parse_racks(racks), startup_timeout_s=timeout)
    t0 = time.monotonic()
    status = _err_console.status(f"starting {brokers} brokers and a KRaft controller (the first run resolves jars)")
    with status:
        handle = LocalCluster(spec, detached=True, name=name).start()
    elapsed = time.monotonic() - t0
    if as_json:
        click.echo(json.dumps({**handle.status(), "startup_s": round(elapsed, 1)}, indent=2))
        return
    _print_status(handle)
    click.echo(f"ready in {elapsed:.1f}s; export MUTEPRO_BOOTSTRAP={handle.bootstrap_servers}")


@cluster.command("jars")
@click.option(
    "--version", "version", default=None, help="Kafka version (default: MUTEPRO_KAFKA_VERSION or the pinned one)."
)
def jars(version: str | None) -> None:
    """Resolve the Kafka server jars (Maven Central, or KAFKA_HOME) into the cache and print where they are."""
    with _err_console.status("resolving Apache Kafka jars with Maven (first time: about a minute)"):
        dist = resolve_kafka(version)
    click.echo(f"Kafka {dist.version} from {dist.source}: {dist.libs_dir}")


@cluster.command("status")
@_name_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(name: str, as_json: bool) -> None:
    """Show every node: id, role, rack, port, pid and whether it runs, is stalled or stopped."""
    handle = _attach(name)
    if as_json:
        click.echo(json.dumps(handle.status(), indent=2))
    else:
        _print_status(handle)


@cluster.command("down")
@_name_option
def down(name: str) -> None:
    """Stop every broker and the controller; no JVM is left behind."""
    handle = _attach(name)
    handle.stop()
    left = [n.label for n in handle.nodes() if n.is_running()]
    if left:
        raise click.ClickException(f"still running after stop: {', '.join(left)}")
    click.echo(f"cluster {name!r} stopped")


@cluster.command("stall")
@click.argument("node")
@_name_option
def stall(node: str, name: str) -> None:
    """SIGSTOP a broker (id) or the controller: it hangs without closing its sockets."""
    _attach(name).stall(node)
    click.echo(f"node {node} stalled; `mutepro cluster resume {node}` continues it")


@cluster.command("resume")
@click.argument("node")
@_name_option
def resume(node: str, name: str) -> None:
    """SIGCONT a stalled node."""
    _attach(name).resume(node)
    click.echo(f"node {node} resumed")


@cluster.command("kill")
@click.argument("node")
@_name_option
def kill(node: str, name: str) -> None:
    """SIGKILL a node, as a crash would."""
    _attach(name).kill(node)
    click.echo(f"node {node} killed; `mutepro cluster restart {node}` brings it back")


@cluster.command("restart")
@click.argument("node")
@_name_option
@click.option("--timeout", default=90.0, show_default=True, help="Seconds to wait for the broker to rejoin.")
def restart(node: str, name: str, timeout: float) -> None:
    """Start a killed node again with the same id, rack, port and data, and wait until it rejoins."""
    handle = _attach(name)
    handle.restart(node, timeout_s=timeout)
    click.echo(f"node {node} restarted (pid {handle.node(node).pid})")


@cluster.command("limp")
@click.argument("node")
@click.option(
    "--duty",
    default=0.8,
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="Fraction of each period the node is stopped (between 0 and 1).",
)
@click.option(
    "--period",
    default=1.0,
    show_default=True,
    type=click.FloatRange(0.01, 60),
    help="Period in seconds (0.01 to 60).",
)
@click.option(
    "--duration",
    default=30.0,
    show_default=True,
    type=click.FloatRange(0, 3600, min_open=True),
    help="How long to limp (seconds, above 0, at most 3600).",
)
@_name_option
def limp(node: str, duty: float, period: float, duration: float, name: str) -> None:
    """Stop and continue a node with a duty cycle for a bounded time (Ctrl-C ends it early)."""
    handle = _attach(name)
    limper = Limper(handle._faultable(node), duty=duty, period_s=period, max_duration_s=duration)
    click.echo(f"node {node} limping: stopped {duty:.0%} of every {period}s for {duration}s")
    try:
        limper.run_for(duration)
    except KeyboardInterrupt:
        limper.stop()
    click.echo(f"node {node} running normally again after {limper.cycles} cycles")


def _parse_racks(value: str | None) -> int | list[str] | dict[int, str] | None:
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return int(value)
    parts = [p.strip() for p in value.split(",") if p.strip()]
    if all("=" in p for p in parts):
        mapping: dict[int, str] = {}
        for key, rack in (p.split("=", 1) for p in parts):
            try:
                broker = int(key)
            except ValueError as err:
                raise click.BadParameter(
                    f"expected id=rack pairs like 1=rack-a, got {value!r}", param_hint="--racks"
                ) from err
            if broker in mapping:
                # A dict would keep the last silently: refuse, the user meant two different brokers.
                raise click.BadParameter(
                    f"broker {broker} is given twice ({broker}={mapping[broker]} and {broker}={rack}); give each "
                    "broker id once",
                    param_hint="--racks",
                )
            if not rack.strip():
                raise click.BadParameter(f"broker {broker} has an empty rack name", param_hint="--racks")
            mapping[broker] = rack.strip()
        return mapping
    if any("=" in p for p in parts):
        raise click.BadParameter(
            f"mixes id=rack pairs and plain rack names: {value!r}; use one form", param_hint="--racks"
        )
    return parts


def _print_status(handle: LocalCluster) -> None:
    info = handle.status()
    table = Table(title=f"mutepro cluster {info['name']!r} — bootstrap {info['bootstrap_servers']}")
    for col in ("node", "role", "rack", "port", "pid", "state", "log"):
        table.add_column(col)
    colours = {"running": "green", "stalled": "yellow", "stopped": "red"}
    for n in info["nodes"]:
        state = n["state"]
        table.add_row(
            str(n["node_id"]), n["role"], n["rack"] or "-", str(n["port"]), str(n["pid"] or "-"),
            f"[{colours.get(state, 'white')}]{state}[/]", n["log"],
        )
    _console.print(table)
