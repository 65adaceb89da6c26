"""The ``mutepro demo`` command: the Spark comparison by default, the producer-only one with ``--plain``."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from mutepro.demo.schedule import FAULTS, plan_faults

_SPARK_DURATION_S = 120.0
_PLAIN_DURATION_S = 30.0


@click.command("demo")
@click.option("--duration", type=float, default=None,
              help=f"Seconds the jobs run (default {_SPARK_DURATION_S:g}; with --plain, {_PLAIN_DURATION_S:g} per "
                   "producer). The fault takes the middle 45 %.")
@click.option("--fault", type=click.Choice(FAULTS), default="both", show_default=True,
              help="What broker 2 does: stall (SIGSTOP), limp (stopped 80 % of every 3 s), or both (limp, then stall).")
@click.option("--rate", type=click.IntRange(100, 200_000), default=3000, show_default=True,
              help="Rows (messages) per second offered to each job.")
@click.option("--plain", is_flag=True,
              help="The producer-only comparison: plain confluent_kafka.Producer vs MuteProducer, no Spark.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("mutepro-demo"),
              show_default=True, help="Directory for the plot (demo.png) and the figures (demo.json).")
@click.option("--master", default=None, metavar="URL",
              help="Spark master to run the jobs on (default local[4]), e.g. the spark:// URL `mutepro spark "
                   "cluster start --cores 2` prints; the two queries need 4 task slots between them.")
@click.pass_context
def demo(
    ctx: click.Context, duration: float | None, fault: str, rate: int, plain: bool, out: Path, master: str | None,
) -> None:
    """The end-to-end job on the embedded 3-broker, 3-rack cluster: a Spark streaming job through mutepro's sink
    and through Spark's built-in Kafka sink, side by side, while broker 2 limps and then stalls.

    Starts the cluster (or uses MUTEPRO_BOOTSTRAP's, when mutepro started it) and stops what it started.
    Exit code 0 only if the mute-aware job lost nothing.
    """
    _quiet_unless_asked(ctx)
    if plain and master is not None:
        raise click.UsageError("--master runs the Spark jobs; --plain runs no Spark: give one of them")
    plan = plan_faults(duration or (_PLAIN_DURATION_S if plain else _SPARK_DURATION_S), fault)
    out.mkdir(parents=True, exist_ok=True)
    console = Console(width=max(120, Console().width), highlight=False)
    from mutepro.demo.setup import demo_cluster

    with demo_cluster(console) as cluster:
        if plain:
            from mutepro.demo.plain import run_plain

            ok = run_plain(cluster, rate=rate, plan=plan, out=out / "demo-plain.png", console=console)
        else:
            from mutepro.demo.run import run_spark

            ok = run_spark(cluster, plan=plan, rate=rate, out=out, console=console, master=master)
    if not ok:
        sys.exit(1)


def _quiet_unless_asked(ctx: click.Context) -> None:
    """mutepro's info events (cluster ready, faults, every batch) would scroll the live view away: shown only
    when ``mutepro --log-level`` asks for them."""
    parent = ctx.parent
    if parent is None or parent.get_parameter_source("log_level") is not click.core.ParameterSource.DEFAULT:
        return
    from mutepro.logs import configure_logging

    configure_logging("warning", str(parent.params.get("log_format", "console")))
