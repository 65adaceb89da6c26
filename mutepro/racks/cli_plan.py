"""``mutepro racks plan``: what a KIP-881 rack-aware assignor will do, and what it costs in cross-rack reads."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from mutepro.errors import MuteproError
from mutepro.racks.assign.planner import ASSIGNORS, PlanResult, load_scenario, scenario_from_cluster
from mutepro.racks.assign.planner import plan as run_plan


def _render(result: PlanResult, console: Console) -> None:
    rows = result.to_rows()
    # drop columns that say nothing for this plan (no static members, nothing moving)
    hidden = {key for key in ("instance", "incoming") if not any(row[key] for row in rows)}
    table = Table(title=f"{result.assignor} assignment")
    for key in rows[0] if rows else ():
        if key not in hidden:
            table.add_column(key.replace("_", " "), overflow="fold")
    for row in rows:
        table.add_row(*(str(v) for k, v in row.items() if k not in hidden))
    console.print(table)
    f = result.target_figures
    console.print(
        f"partitions {f.partitions} | cross-rack (no local replica) {f.mismatched} "
        f"= {f.cross_rack_bytes} bytes | leader on another rack {f.leader_cross_rack} "
        f"= {f.leader_cross_rack_bytes} bytes | no consumer rack {f.no_rack} | "
        f"balance {f.min_per_member}..{f.max_per_member} (spread {f.spread}) | moves {f.moves}"
    )
    if result.moving:
        console.print(f"{len(result.moving)} partition(s) are revoked first and assigned in the follow-up rebalance")


@click.command("plan")
@click.option(
    "--scenario",
    "scenario_file",
    type=click.Path(exists=True, dir_okay=False),
    help="YAML/JSON scenario file (brokers, topics, members).",
)
@click.option("--bootstrap-servers", help="Read brokers' racks and replica placement from this cluster.")
@click.option("--topic", "topics", multiple=True, help="Topic to plan for (repeatable; with --bootstrap-servers).")
@click.option("--members", "members_spec", help="Members as 'id@rack,...' e.g. 'c0@rack-a,c1@rack-b,c2'.")
@click.option("--assignor", type=click.Choice(ASSIGNORS), default="range", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def plan_command(
    scenario_file: str | None,
    bootstrap_servers: str | None,
    topics: tuple[str, ...],
    members_spec: str | None,
    assignor: str,
    as_json: bool,
) -> None:
    """Plan a consumer group's rack-aware assignment, as the Java client's assignors compute it."""
    try:
        if scenario_file:
            scenario = load_scenario(scenario_file)
        elif bootstrap_servers and topics and members_spec:
            scenario = scenario_from_cluster(bootstrap_servers, topics, members_spec)
        else:
            raise click.UsageError("give --scenario FILE, or --bootstrap-servers with --topic and --members")
        result = run_plan(scenario, assignor)
    except MuteproError as err:
        raise click.ClickException(str(err)) from err
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        _render(result, Console())


#: The name ``mutepro/racks/cli.py`` imports.
plan = plan_command
