"""``mutepro racks plan``: what a group's assignor will do, and what it costs in cross-rack reads.

``--protocol classic`` (default) models the Java client's KIP-881 rack-aware assignors (``range``,
``cooperative-sticky``); ``--protocol consumer`` models the new protocol (KIP-848), where Kafka 4.3.1's
group coordinator assigns with ``uniform`` (default) or ``range`` and ignores racks. The consumer plan also
prints what the classic protocol would cost for the same group, so the two can be compared. It plans the group
as it stands (every member already in it) unless ``--joining MEMBER`` (or ``joining: true`` in the scenario)
names the member joining now.
"""

from __future__ import annotations

import json
from dataclasses import replace

import click
from rich.console import Console
from rich.table import Table

from mutepro.errors import MuteproError
from mutepro.racks.assign.planner import ASSIGNORS, PROTOCOLS, PlanResult, load_scenario, scenario_from_cluster
from mutepro.racks.assign.planner import plan as run_plan
from mutepro.racks.assign.server import SERVER_ASSIGNORS

#: The classic assignor a consumer-protocol plan is compared with: the same name, or the sticky one for uniform.
_CLASSIC_COUNTERPART = {"range": "range", "uniform": "cooperative-sticky"}


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
    if result.alternative is not None:
        console.print(
            f"the coordinator gives a different assignment if a later heartbeat, not {result.scenario.joining}'s "
            "join, computes it (group.consumer.assignment.interval.ms); --json shows it as 'alternative'"
        )


def _comparison(result: PlanResult, classic: PlanResult) -> str:
    f, c = result.target_figures, classic.target_figures
    return (
        f"classic protocol, {classic.assignor} with client.rack (KIP-881): cross-rack {c.mismatched} "
        f"= {c.cross_rack_bytes} bytes, vs {f.mismatched} = {f.cross_rack_bytes} bytes under the consumer protocol "
        f"({f.cross_rack_bytes - c.cross_rack_bytes:+d} bytes)"
    )


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
@click.option(
    "--protocol",
    type=click.Choice(PROTOCOLS),
    default="classic",
    show_default=True,
    help="group.protocol: classic (client-side, rack-aware assignors) or consumer (KIP-848, server-side).",
)
@click.option(
    "--assignor",
    type=click.Choice(sorted({*ASSIGNORS, *SERVER_ASSIGNORS})),
    help="classic: range (default) or cooperative-sticky; consumer: uniform (default) or range.",
)
@click.option(
    "--joining",
    metavar="MEMBER",
    help="consumer: MEMBER (listed last) is joining now and keeps its subscription order as sent; by default "
    "every member is already in the group (the coordinator sorts their subscriptions).",
)
@click.option("--timeout", default=15.0, show_default=True, help="Seconds to wait for the cluster's metadata.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def plan_command(
    scenario_file: str | None,
    bootstrap_servers: str | None,
    topics: tuple[str, ...],
    members_spec: str | None,
    protocol: str,
    assignor: str | None,
    joining: str | None,
    timeout: float,
    as_json: bool,
) -> None:
    """Plan a consumer group's assignment under the classic or the consumer protocol, with its cross-rack cost."""
    assignor = assignor or ("uniform" if protocol == "consumer" else "range")
    allowed = SERVER_ASSIGNORS if protocol == "consumer" else ASSIGNORS
    if assignor not in allowed:
        raise click.BadParameter(
            f"{assignor!r} is not an assignor of the {protocol} protocol; use one of {', '.join(allowed)}",
            param_hint="--assignor",
        )
    try:
        if scenario_file:
            scenario = load_scenario(scenario_file)
        elif bootstrap_servers and topics and members_spec:
            scenario = scenario_from_cluster(bootstrap_servers, topics, members_spec, timeout_s=timeout)
        else:
            raise click.UsageError("give --scenario FILE, or --bootstrap-servers with --topic and --members")
        if joining is not None:
            scenario = replace(scenario, joining=joining)
        result = run_plan(scenario, assignor, protocol)
        classic = run_plan(scenario, _CLASSIC_COUNTERPART[assignor]) if protocol == "consumer" else None
    except MuteproError as err:
        raise click.ClickException(str(err)) from err
    if as_json:
        doc = result.to_dict()
        doc["protocol"] = protocol
        if classic is not None:
            doc["classic"] = {"assignor": classic.assignor, "target_figures": classic.target_figures.to_dict()}
        click.echo(json.dumps(doc, indent=2))
    else:
        console = Console()
        _render(result, console)
        if classic is not None:
            console.print(_comparison(result, classic))


#: The name ``mutepro/racks/cli.py`` imports.
plan = plan_command
