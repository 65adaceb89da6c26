"""The ``mutepro`` command. Each area contributes one click group; nothing imports this module.

``mutepro cluster ...`` (local Kafka), ``mutepro config ...`` (YAML policies), ``mutepro racks ...`` (rack
helpers), ``mutepro demo`` (the end-to-end job), ``mutepro spark jars`` (Spark's built-in Kafka sink, to compare).
"""

from __future__ import annotations

import importlib
import sys

import click

from mutepro import __version__
from mutepro.errors import MuteproError
from mutepro.logs import configure_logging

# (module, attribute) of every sub-command group; a group whose module is absent, or needs an optional extra that
# is not installed (`mutepro spark` needs mutepro[spark]), is simply not offered.
_OPTIONAL_EXTRAS = frozenset({"pyspark", "pyarrow", "pandas"})
_GROUPS = (
    ("mutepro.cluster.cli", "cluster"),
    ("mutepro.policy.cli", "config"),
    ("mutepro.racks.cli", "racks"),
    ("mutepro.demo", "demo"),
    ("mutepro.spark.cli", "spark"),
    ("mutepro.trace.cli", "trace"),
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mutepro")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]), help="Events shown on stderr.")
@click.option("--log-format", default="console", show_default=True, type=click.Choice(["console", "json"]))
def cli(log_level: str, log_format: str) -> None:
    """mutepro: keep Kafka producers healthy when part of the cluster is not."""
    configure_logging(log_level, log_format)


for _module, _attr in _GROUPS:
    try:
        _command = getattr(importlib.import_module(_module), _attr)
    except ModuleNotFoundError as _err:
        if _err.name and (_module.startswith(_err.name) or _err.name.split(".")[0] in _OPTIONAL_EXTRAS):
            continue
        raise
    cli.add_command(_command)


def main() -> None:
    """Entry point: mutepro errors become one readable line and exit code 1, not a traceback."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)
    except MuteproError as err:
        click.secho(f"error: {err}", fg="red", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
