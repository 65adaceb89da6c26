"""``mutepro racks ...``: audit placement, plan/apply rack fixes, check follower fetching and static ids.

Every command prints a table, or JSON with ``--json``. ``plan`` (the KIP-881 assignment preview) comes from
:mod:`mutepro.racks.cli_plan` when that module is installed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from mutepro.errors import ConfigError

_bootstrap_option = click.option(
    "-b",
    "--bootstrap-servers",
    envvar="MUTEPRO_BOOTSTRAP",
    help="Kafka bootstrap servers (default: $MUTEPRO_BOOTSTRAP).",
)
_json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


@click.group("racks")
def racks() -> None:
    """Rack awareness: placement (KIP-36), follower fetching (KIP-392), static membership (KIP-345)."""


def _console() -> Console:
    return Console(soft_wrap=True)


def _emit_json(doc: Any) -> None:
    click.echo(json.dumps(doc, indent=2, sort_keys=False))


def _require_bootstrap(bootstrap: str | None) -> str:
    if not bootstrap:
        raise click.UsageError("pass --bootstrap-servers (or set MUTEPRO_BOOTSTRAP)")
    return bootstrap


def _admin(bootstrap: str) -> Any:
    from confluent_kafka.admin import AdminClient

    # librdkafka logs through a logger that stays silent unless the application configures logging
    config: dict[str, Any] = {"bootstrap.servers": bootstrap, "logger": logging.getLogger("mutepro.racks.kafka")}
    return AdminClient(config)


def _parse_brokers(spec: str) -> dict[int, str | None]:
    """``"1:rack-a,2:rack-b,3"`` → ``{1: "rack-a", 2: "rack-b", 3: None}``; an id given twice is an error."""
    result: dict[int, str | None] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        broker, _, rack = item.partition(":")
        try:
            broker_id = int(broker)
        except ValueError as err:
            raise ConfigError(f"--brokers: {item!r} is not <id>[:<rack>] (e.g. 1:rack-a,2:rack-b)") from err
        if broker_id < 0:
            raise ConfigError(f"--brokers: broker id {broker_id} is negative; broker ids are >= 0")
        if broker_id in result:
            raise ConfigError(f"--brokers: broker {broker_id} is listed twice; give each broker once")
        result[broker_id] = rack.strip() or None
    if not result:
        raise ConfigError("--brokers: give at least one broker as <id>[:<rack>]")
    return result


def _parse_ids(spec: str, option: str) -> list[int]:
    """``"3,4"`` → ``[3, 4]``."""
    try:
        ids = [int(s) for s in spec.split(",") if s.strip()]
    except ValueError as err:
        raise ConfigError(f"{option}: {spec!r} is not a comma-separated list of broker ids (e.g. 3,4)") from err
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{option}: a broker id is listed twice in {spec!r}")
    return ids


# -- audit ------------------------------------------------------------------------------------------------


@racks.command("audit")
@_bootstrap_option
@click.option("-t", "--topic", "topics", multiple=True, help="Topic to audit (repeatable; default: all).")
@click.option("--include-internal", is_flag=True, help="Also audit __consumer_offsets and other __ topics.")
@click.option("--check", is_flag=True, help="Exit with status 2 when the audit finds anything.")
@_json_option
def audit_command(
    bootstrap_servers: str | None, topics: tuple[str, ...], include_internal: bool, check: bool, as_json: bool
) -> None:
    """Find partitions missing racks, leader skew per rack, and zones without a local replica."""
    from mutepro.racks.audit import audit_cluster

    report = audit_cluster(
        _admin(_require_bootstrap(bootstrap_servers)), list(topics) or None, include_internal=include_internal
    )
    if as_json:
        _emit_json(report.to_dict())
    else:
        _print_audit(report)
    if check and not report.clean:
        raise SystemExit(2)


def _print_audit(report: Any) -> None:
    console = _console()
    brokers = ", ".join(f"{b}:{r or '-'}" for b, r in sorted(report.brokers.items()))
    console.print(f"brokers {brokers}; {len(report.topics)} topic(s) audited")
    if report.brokers_without_rack:
        console.print(f"[red]brokers without broker.rack: {list(report.brokers_without_rack)}[/red]")
    if report.partition_issues:
        table = Table(title="Partitions missing racks")
        for col in ("topic", "partition", "replicas", "racks", "missing", "moves"):
            table.add_column(col)
        for i in report.partition_issues:
            table.add_row(
                i.topic,
                str(i.partition),
                str(list(i.replicas)),
                ", ".join(r or "?" for r in i.replica_racks),
                ", ".join(i.missing_racks),
                str(i.moves_needed),
            )
        console.print(table)
    if report.leader_skews:
        table = Table(title="Leader skew per rack")
        table.add_column("topic")
        for rack in report.racks:
            table.add_column(rack, justify="right")
        table.add_column("skew (ideal)", justify="right")
        for s in report.leader_skews:
            table.add_row(
                s.topic,
                *(str(s.leaders_per_rack.get(r, 0)) for r in report.racks),
                f"{s.skew} ({s.ideal_skew})",
            )
        console.print(table)
    if report.zone_gaps:
        table = Table(title="Zones without a local replica (consumers there read cross-zone)")
        for col in ("topic", "rack", "partitions", "cross-zone", "local (balanced min)", "excessive"):
            table.add_column(col)
        for g in report.zone_gaps:
            table.add_row(
                g.topic,
                g.rack,
                str(list(g.partitions)),
                f"{g.cross_zone_fraction:.0%}",
                f"{g.local_partitions} ({g.min_local})",
                "yes" if g.excessive else "no",
            )
        console.print(table)
    console.print("[green]clean[/green]" if report.clean else "[yellow]issues found[/yellow]")


# -- placement --------------------------------------------------------------------------------------------


@racks.command("placement")
@_bootstrap_option
@click.option("--brokers", "brokers_spec", help="Brokers as id:rack,... (default: the live cluster's).")
@click.option("-p", "--partitions", type=click.IntRange(1, 100_000), default=6, show_default=True)
@click.option("-r", "--replication-factor", type=click.IntRange(1), default=3, show_default=True)
@click.option(
    "--algorithm",
    type=click.Choice(["striped", "kip36"]),
    default="striped",
    show_default=True,
    help="striped: KRaft's StripedReplicaPlacer (what a Kafka 4.x cluster does); kip36: "
    "AdminUtils.assignReplicasToBrokers (ZooKeeper-era clusters).",
)
@click.option(
    "--seed",
    type=click.IntRange(-(2**63), 2**63 - 1),
    help="striped: the java.util.Random seed (default: drawn at random and printed, so the result replays).",
)
@click.option("--fenced", "fenced_spec", help="striped: ids of fenced brokers, e.g. 3,4 (never leaders).")
@click.option(
    "--start-index",
    type=int,
    default=0,
    show_default=True,
    help="kip36: Kafka's fixedStartIndex; -1 draws it at random like the broker does.",
)
@click.option("--create", "create_topic", metavar="TOPIC", help="Create TOPIC with this assignment.")
@_json_option
def placement_command(
    bootstrap_servers: str | None,
    brokers_spec: str | None,
    partitions: int,
    replication_factor: int,
    algorithm: str,
    seed: int | None,
    fenced_spec: str | None,
    start_index: int,
    create_topic: str | None,
    as_json: bool,
) -> None:
    """Show where a cluster places a new topic's replicas (KRaft striped or KIP-36), and optionally create it."""
    import random

    from mutepro.racks.placement import assign_replicas_to_brokers, check_placement
    from mutepro.racks.striped import (
        KAFKA_VERSION,
        controller_broker_order,
        registration_order_matters,
        striped_placement,
    )
    from mutepro.racks.topics import cluster_racks, create_rack_aware_topic

    fenced = _parse_ids(fenced_spec, "--fenced") if fenced_spec else []
    if algorithm != "striped" and (fenced or seed is not None):
        raise click.UsageError("--seed and --fenced apply to --algorithm striped only")
    if brokers_spec:
        brokers = _parse_brokers(brokers_spec)
    else:
        brokers = cluster_racks(_admin(_require_bootstrap(bootstrap_servers)))
    unknown = sorted(set(fenced) - set(brokers))
    if unknown:
        raise ConfigError(f"--fenced: broker(s) {unknown} are not among the brokers {sorted(brokers)}")
    if algorithm == "striped":
        if seed is None:
            seed = random.SystemRandom().randrange(-(2**63), 2**63)
        # the controller walks its HashMap<Integer, ...> of brokers: 1014, 1042, 1140 come out as 1042, 1140,
        # 1014 (buckets 2, 4, 6 of 16), and that order decides which rack draws which random number
        ordered = {b: brokers[b] for b in controller_broker_order(brokers)}
        assignment = striped_placement(ordered, partitions, replication_factor, seed=seed, fenced=fenced)
        title = f"striped (KRaft, Kafka {KAFKA_VERSION}), seed {seed}"
        broker_order: list[int] | None = list(ordered)
        bucket_mates = registration_order_matters(brokers)
    else:
        assignment = assign_replicas_to_brokers(brokers, partitions, replication_factor, start_index)
        title = f"KIP-36, start index {start_index}"
        broker_order = None
        bucket_mates = []
    if create_topic:
        create_rack_aware_topic(
            _admin(_require_bootstrap(bootstrap_servers)),
            create_topic,
            partitions,
            replication_factor,
            brokers=brokers,
            assignment=assignment,
        )
    racks_map = {b: r or "-" for b, r in brokers.items()}
    check = check_placement(assignment, racks_map)
    if as_json:
        _emit_json(
            {
                "algorithm": algorithm,
                "seed": seed,
                "start_index": start_index if algorithm == "kip36" else None,
                "brokers": {str(b): r for b, r in brokers.items()},
                "fenced": fenced,
                "assignment": {str(p): reps for p, reps in sorted(assignment.items())},
                "rack_aware": check.rack_aware,
                "rack_violations": list(check.rack_violations),
                "leaders_per_broker": {str(b): c for b, c in check.leaders_per_broker.items()},
                "leaders_per_rack": dict(check.leaders_per_rack),
                "replicas_per_broker": {str(b): c for b, c in check.replicas_per_broker.items()},
                "broker_order": broker_order,
                "registration_order_assumed": [list(g) for g in bucket_mates],
                "created": create_topic,
            }
        )
        return
    console = _console()
    table = Table(title=f"{partitions} partitions x RF {replication_factor}, {title}")
    for col in ("partition", "replicas (leader first)", "racks"):
        table.add_column(col)
    for p, reps in sorted(assignment.items()):
        table.add_row(str(p), str(reps), ", ".join(racks_map.get(b, "?") for b in reps))
    console.print(table)
    console.print(
        f"rack-aware: {'yes' if check.rack_aware else 'no ' + str(list(check.rack_violations))}; "
        f"leaders per rack {dict(check.leaders_per_rack)}; leader skew {check.leader_skew}, "
        f"replica skew {check.replica_skew}"
    )
    if bucket_mates:
        groups = "; ".join(", ".join(str(b) for b in g) for g in bucket_mates)
        console.print(
            f"brokers {groups} share a bucket of the controller's broker map, so they reach the placer in the "
            "order they registered, which mutepro cannot see: the order given is assumed (list them in another "
            "order in --brokers to see the other outcome)"
        )
    if create_topic:
        console.print(f"[green]created {create_topic}[/green]")


# -- reassign ---------------------------------------------------------------------------------------------


@racks.command("reassign")
@_bootstrap_option
@click.option("-t", "--topic", "topics", multiple=True, help="Topic to fix (repeatable; default: all).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the reassignment JSON.")
@click.option("--rollback", type=click.Path(dir_okay=False, path_type=Path), help="Write the current assignment JSON.")
@click.option("--no-leaders", is_flag=True, help="Only fix racks; leave preferred leaders as they are.")
@click.option(
    "--generate",
    "like_kafka",
    is_flag=True,
    help="Propose what kafka-reassign-partitions --generate (Kafka 4.x, striped placer) would instead of the "
    "fewest moves; both replica-move counts are shown.",
)
@click.option(
    "--seed",
    type=click.IntRange(-(2**63), 2**63 - 1),
    help="With --generate: the placer's java.util.Random seed (default: drawn and printed).",
)
@click.option("--apply", "do_apply", is_flag=True, help="Execute with Kafka's reassign tool and wait.")
@click.option("--timeout", default=300.0, show_default=True, help="Seconds to wait for --apply to complete.")
@_json_option
def reassign_command(
    bootstrap_servers: str | None,
    topics: tuple[str, ...],
    output: Path | None,
    rollback: Path | None,
    no_leaders: bool,
    like_kafka: bool,
    seed: int | None,
    do_apply: bool,
    timeout: float,
    as_json: bool,
) -> None:
    """Plan the fewest replica moves that fix rack placement and leader skew (and optionally apply them)."""
    import random

    from mutepro.racks.audit import snapshot_cluster
    from mutepro.racks.generate import generate_plan
    from mutepro.racks.reassign import apply_plan, check_writable, plan_reassignment, write_reassignment_json

    bootstrap = _require_bootstrap(bootstrap_servers)
    for path, what in ((output, "--output"), (rollback, "--rollback")):
        if path is not None:
            check_writable(path, what)
    admin = _admin(bootstrap)
    if seed is not None and not like_kafka:
        raise click.UsageError("--seed applies to --generate only")
    snapshot = snapshot_cluster(admin, list(topics) or None)
    minimal = plan_reassignment(snapshot, fix_leaders=not no_leaders)
    plan = minimal
    if like_kafka:
        seed = random.SystemRandom().randrange(-(2**63), 2**63) if seed is None else seed
        plan = generate_plan(snapshot, list(topics) or None, seed=seed)
    if output:
        write_reassignment_json(plan, output)
    if rollback:
        write_reassignment_json(plan.to_rollback(), rollback)
    applied = apply_plan(plan, admin, bootstrap, timeout_s=timeout) if do_apply and not plan.empty else None
    if as_json:
        doc = plan.to_dict()
        doc["algorithm"] = "kafka-generate" if like_kafka else "fewest-moves"
        doc["seed"] = seed
        doc["fewest_moves_replica_moves"] = minimal.replica_moves
        doc["applied"] = None if applied is None else {
            "partitions": [f"{t}-{p}" for t, p in applied.partitions],
            "elected": [f"{t}-{p}" for t, p in applied.elected],
        }  # fmt: skip
        _emit_json(doc)
        return
    console = _console()
    if like_kafka:
        console.print(f"kafka-reassign-partitions --generate with seed {seed}: {plan.replica_moves} replica move(s); "
                      f"the fewest-moves plan needs {minimal.replica_moves}")  # fmt: skip
    if plan.empty:
        console.print("[green]nothing to move: placement and leaders are already rack-balanced[/green]")
        return
    table = Table(title=f"Reassignment plan: {plan.replica_moves} replica move(s)")
    for col in ("topic", "partition", "current", "proposed", "copies", "why"):
        table.add_column(col)
    for m in plan.moves:
        table.add_row(m.topic, str(m.partition), str(list(m.current)), str(list(m.proposed)),
                      str(m.replica_moves), m.reason)  # fmt: skip
    console.print(table)
    if plan.elections:
        console.print(f"preferred-leader elections: {[f'{t}-{p}' for t, p in plan.elections]}")
    if output:
        console.print(f"reassignment JSON written to {output} (kafka-reassign-partitions --execute)")
    if applied is not None:
        console.print(f"[green]applied: {len(applied.partitions)} partition(s) moved, "
                      f"{len(applied.elected)} leader election(s)[/green]")  # fmt: skip


# -- follower fetching ------------------------------------------------------------------------------------


@racks.command("ready")
@_bootstrap_option
@click.option("--client-rack", help="The consumer's client.rack (default: derived from the environment).")
@_json_option
def ready_command(bootstrap_servers: str | None, client_rack: str | None, as_json: bool) -> None:
    """Check the brokers are set up for follower fetching (KIP-392) and show the derived client.rack."""
    from mutepro.racks.follower import check_follower_fetching, resolve_client_rack

    resolution = resolve_client_rack(client_rack)
    report = check_follower_fetching(_admin(_require_bootstrap(bootstrap_servers)), resolution.rack)
    if as_json:
        doc = report.to_dict()
        doc["client_rack_source"] = resolution.source
        _emit_json(doc)
    else:
        console = _console()
        table = Table(title="Follower fetching readiness")
        for col in ("broker", "broker.rack", "replica.selector.class", "ready"):
            table.add_column(col)
        for b in report.brokers:
            table.add_row(str(b.broker_id), b.rack or "-", b.replica_selector_class or "-",
                          "yes" if b.ready else "no")  # fmt: skip
        console.print(table)
        console.print(f"client.rack: {resolution}")
        for problem in report.all_problems:
            console.print(f"[red]- {problem}[/red]")
        console.print("[green]ready[/green]" if report.ready else "[yellow]not ready[/yellow]")
    if not report.ready:
        raise SystemExit(2)


@racks.command("locality")
@_bootstrap_option
@click.option("-t", "--topic", "topics", multiple=True, required=True, help="Topic to consume (repeatable).")
@click.option("--client-rack", help="client.rack to consume with (default: derived from the environment).")
@click.option("--group", "group_id", help="Consumer group (default: a throw-away group; nothing is committed).")
@click.option("--duration", default=15.0, show_default=True, help="Seconds to consume at most.")
@_json_option
def locality_command(
    bootstrap_servers: str | None,
    topics: tuple[str, ...],
    client_rack: str | None,
    group_id: str | None,
    duration: float,
    as_json: bool,
) -> None:
    """Consume briefly with client.rack and report, per partition, whether fetches stay in the rack."""
    from mutepro.racks.follower import measure_locality, resolve_client_rack
    from mutepro.racks.topics import cluster_racks, missing_topics

    bootstrap = _require_bootstrap(bootstrap_servers)
    rack = resolve_client_rack(client_rack).rack
    admin = _admin(bootstrap)
    broker_racks = cluster_racks(admin)
    absent = missing_topics(admin, topics)
    if absent:
        # consuming a topic that does not exist reads nothing and would report "0/0 in-rack" as success
        raise ConfigError(f"--topic: {absent} do(es) not exist in the cluster; create the topic or fix the name")
    report = measure_locality(bootstrap, list(topics), broker_racks, rack, duration_s=duration, group_id=group_id)
    if as_json:
        _emit_json(report.to_dict())
        return
    _print_locality(report)


def _print_locality(report: Any) -> None:
    console = _console()
    table = Table(title=f"Fetch locality for client.rack={report.client_rack}")
    for col in ("topic", "partition", "fetching from", "leader", "local", "follower"):
        table.add_column(col)
    for p in report.partitions:
        table.add_row(p.topic, str(p.partition), f"{p.fetching_from} ({p.fetch_rack or '?'})",
                      f"{p.leader} ({p.leader_rack or '?'})", "yes" if p.local else "no",
                      "yes" if p.from_follower else "no")  # fmt: skip
    console.print(table)
    console.print(f"{len(report.local)}/{len(report.partitions)} partition(s) fetched in-rack")


# -- static membership ------------------------------------------------------------------------------------


@racks.command("instance-id")
@_bootstrap_option
@click.option("--explicit", help="Use this id (still sanitised).")
@click.option("--suffix", help="Append this (several consumers in one process).")
@click.option("--group", "group_id", help="Check the id is free in this consumer group.")
@click.option("--restart-seconds", type=float, help="p99 restart time; prints a session.timeout.ms advice.")
@_json_option
def instance_id_command(
    bootstrap_servers: str | None,
    explicit: str | None,
    suffix: str | None,
    group_id: str | None,
    restart_seconds: float | None,
    as_json: bool,
) -> None:
    """Derive a stable group.instance.id (KIP-345), check it is unique, advise a session timeout."""
    from mutepro.racks.static import (
        check_instance_id_unique,
        derive_instance_id,
        recommend_session_timeout_ms,
    )

    iid = derive_instance_id(explicit, suffix=suffix)
    doc: dict[str, Any] = {"group_instance_id": iid.value, "source": iid.source}
    if group_id:
        uniq = check_instance_id_unique(_admin(_require_bootstrap(bootstrap_servers)), group_id, iid.value)
        doc["unique"] = uniq.unique
        doc["uniqueness"] = uniq.explain()
    if restart_seconds is not None:
        advice = recommend_session_timeout_ms(restart_seconds)
        doc["config"] = advice.config()
        doc["reasoning"] = list(advice.reasoning)
    if as_json:
        _emit_json(doc)
        return
    console = _console()
    console.print(f"group.instance.id = [bold]{iid.value}[/bold] ({iid.source})")
    if "uniqueness" in doc:
        console.print(("[green]" if doc["unique"] else "[red]") + doc["uniqueness"] + "[/]")
    if "config" in doc:
        console.print(", ".join(f"{k}={v}" for k, v in _as_mapping(doc["config"]).items()))
        for line in doc["reasoning"]:
            console.print(f"- {line}")


def _as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _register_plan() -> None:
    """Add ``plan`` from :mod:`mutepro.racks.cli_plan` (KIP-881 preview) if that module is present.

    Imported here, after ``racks`` exists, so ``cli_plan`` may either export a command named ``plan`` or
    decorate ``racks`` itself; a missing module only means the command is not offered yet.
    """
    import importlib

    try:
        module = importlib.import_module("mutepro.racks.cli_plan")
    except ModuleNotFoundError as err:
        if err.name in ("mutepro.racks.cli_plan",):
            return
        raise
    command = getattr(module, "plan", None)
    if isinstance(command, click.Command) and "plan" not in racks.commands:
        racks.add_command(command, "plan")


_register_plan()
