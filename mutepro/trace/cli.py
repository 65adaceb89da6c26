"""``mutepro trace``: record a trace of your own cluster, and see what the detection model decides on it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click


@click.group("trace")
def trace() -> None:
    """Record what the detection model sees on a cluster, and replay it through the model (tune with evidence)."""


@trace.command("record")
@click.option("-b", "--bootstrap-servers", required=True, help="bootstrap.servers of the cluster to record.")
@click.option("-t", "--topic", required=True, help="Topic to produce to (it must exist).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Trace file to write (gzip JSON lines, e.g. run.jsonl.gz).")
@click.option("--seconds", default=60.0, show_default=True, type=click.FloatRange(1, 3600),
              help="How long to produce.")
@click.option("--rate", default=1000, show_default=True, type=click.IntRange(0, 10_000_000),
              help="Messages per second (0: as fast as the producer takes them, a closed loop).")
@click.option("--value-bytes", default=512, show_default=True, type=click.IntRange(0, 10_000_000))
@click.option("--keyed/--unkeyed", default=False, show_default=True, help="Keys cycle through 1,000 values.")
@click.option("--policy", "policy_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="A mutepro policy file (default: the default policy).")
@click.option("-X", "extra", multiple=True, metavar="KEY=VALUE", help="A librdkafka setting (repeatable).")
def record(
    bootstrap_servers: str, topic: str, output: Path, seconds: float, rate: int, value_bytes: int, keyed: bool,
    policy_path: str | None, extra: tuple[str, ...],
) -> None:
    """Produce a bounded load through a MuteProducer that records its trace. Faults are whatever your cluster
    does meanwhile; the model's live decisions are recorded too."""
    from mutepro.producer.producer import MuteProducer

    conf: dict[str, Any] = {"bootstrap.servers": bootstrap_servers}
    for item in extra:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="-X")
        conf[key] = value
    producer = MuteProducer(conf, policy=policy_path, trace=output)
    payload = bytes(value_bytes)
    sent = refused = 0
    start = time.monotonic()
    next_report = start + 5.0
    try:
        while (now := time.monotonic()) - start < seconds:
            if rate and sent >= rate * (now - start):
                producer.poll(min(0.01, 1.0 / rate))
                continue
            try:
                producer.produce(topic, payload, f"key-{sent % 1000:04d}".encode() if keyed else None)
                sent += 1
            except BufferError:
                refused += 1
                producer.poll(0.01)
            if now >= next_report:
                next_report += 5.0
                click.echo(f"{now - start:5.0f}s  sent {sent:,}  refused {refused:,}  "
                           f"muted {producer.muted_partitions()}", err=True)
        producer.flush(30.0)
    finally:
        producer.close()
    click.echo(f"recorded {output} ({output.stat().st_size:,} bytes): {sent:,} messages, {refused:,} refused")


@trace.command("replay")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option("--policy", "policy_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Replay under this policy file's defaults instead of the recorded policy.")
@click.option("--json", "as_json", is_flag=True, help="Print the decisions and the summary as JSON.")
@click.option("--plot", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Also draw the timeline (ages per partition, mutes, faults) into this PNG (needs matplotlib).")
def replay_cmd(path: str, policy_path: str | None, as_json: bool, plot: Path | None) -> None:
    """Show what the detection model decides on a recorded trace, beside what the recording producer decided."""
    from dataclasses import asdict

    from mutepro.trace.replay import replay
    from mutepro.trace.summary import describe, summarize

    policy = None
    if policy_path is not None:
        from mutepro.policy.loader import load_policy

        policy = load_policy(policy_path).defaults
    import logging

    previous = logging.getLogger("mutepro").level
    logging.getLogger("mutepro").setLevel(logging.ERROR)  # the decisions are printed below, not logged as they fall
    try:
        result = replay(path, policy)
    finally:
        logging.getLogger("mutepro").setLevel(previous)
    summary = summarize(result)
    if as_json:
        click.echo(json.dumps({
            "decisions": [asdict(d) for d in result.decisions],
            "recorded": [asdict(d) for d in result.recorded],
            "summary": asdict(summary),
        }, default=str))
    else:
        click.echo(f"{path}: {result.end:.1f}s, {result.rounds} rounds, {len(result.faults)} faults")
        for d in result.decisions:
            if d.event != "probe":
                click.echo(f"  {d.t:8.2f}s  {d.event:7s} {d.topic}[{d.partition}] broker {d.broker}  {d.reason}")
        click.echo(f"recorded producer: {sum(1 for d in result.recorded if d.event in ('mute', 'remute'))} mutes; "
                   f"model now: {summary.mutes}")
        for line in describe(summary):
            click.echo(line)
    if plot is not None:
        from mutepro.trace.plot import plot_replay

        plot_replay(path, result, plot)
        click.echo(f"plot: {plot}", err=True)


replay_cmd.name = "replay"

