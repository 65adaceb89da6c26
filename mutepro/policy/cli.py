"""``mutepro config``: check policy files, show the effective policy (redacted), print the JSON Schema.

    mutepro config check base.yaml prod.yaml     # exit 0 if valid, 1 with every problem listed
    mutepro config show base.yaml prod.yaml      # effective policy as YAML (--json; --topic orders)
    mutepro config schema > mutepro.schema.json  # for editors

Registered on the top-level ``mutepro`` command by ``mutepro/cli.py``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
import yaml

from mutepro.policy.effective import Policy
from mutepro.policy.errors import PolicyError
from mutepro.policy.loader import load_policy
from mutepro.policy.schema_export import json_schema

_FILES = click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))


@click.group("config")
def config() -> None:
    """Validate and inspect mutepro policy files (YAML)."""


def _load(files: tuple[str, ...]) -> Policy:
    try:
        return load_policy(*files)
    except PolicyError as err:
        click.echo(str(err), err=True)
        sys.exit(1)


@config.command("check")
@_FILES
def check(files: tuple[str, ...]) -> None:
    """Validate FILES (merged in order); exit 1 listing every problem."""
    policy = _load(files)
    entries = len(policy.topics)
    click.echo(f"ok: {' + '.join(files)} ({entries} topic {'entry' if entries == 1 else 'entries'})")


@config.command("show")
@_FILES
@click.option("--json", "as_json", is_flag=True, help="JSON instead of YAML.")
@click.option("--topic", "topic", metavar="NAME", help="Only the effective policy of topic NAME.")
def show(files: tuple[str, ...], as_json: bool, topic: str | None) -> None:
    """Print the effective policy of FILES after defaults, merges and overrides (secrets redacted)."""
    policy = _load(files)
    data: dict[str, Any]
    if topic is None:
        data = policy.to_redacted_dict()
    else:
        rule = policy.rule_for(topic)
        data = {
            "topic": topic,
            "matched": rule if rule is not None else "defaults",
            "policy": policy.redacted_topic(topic),
        }
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(yaml.safe_dump(data, sort_keys=False, default_flow_style=False).rstrip())


@config.command("schema")
def schema() -> None:
    """Print the policy JSON Schema (for editor validation and completion)."""
    click.echo(json.dumps(json_schema(), indent=2))
