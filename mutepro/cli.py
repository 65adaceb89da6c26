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

# name -> (module, attribute) of every sub-command group. Each module is imported only when its command runs (or
# `mutepro --help` lists them): `mutepro config check` loads the policy code, not pyspark, the producer or the cluster
# launcher. A group whose module is absent, or needs an optional extra that is not installed (`mutepro spark` needs
# mutepro[spark]), is simply not offered.
_OPTIONAL_EXTRAS = frozenset({"pyspark", "pyarrow", "pandas"})
_GROUPS = {
    "cluster": ("mutepro.cluster.cli", "cluster"),
    "config": ("mutepro.policy.cli", "config"),
    "racks": ("mutepro.racks.cli", "racks"),
    "demo": ("mutepro.demo", "demo"),
    "spark": ("mutepro.spark.cli", "spark"),
    "trace": ("mutepro.trace.cli", "trace"),
}


class _LazyGroup(click.Group):
    """A click group whose sub-commands are imported from :data:`_GROUPS` when first looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *(n for n in _GROUPS if self.get_command(ctx, n) is not None)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in _GROUPS:
            return command
        module, attr = _GROUPS[cmd_name]
        try:
            command = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as err:
            if err.name and (module.startswith(err.name) or err.name.split(".")[0] in _OPTIONAL_EXTRAS):
                return None
            raise
        self.add_command(command, cmd_name)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mutepro")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]), help="Events shown on stderr.")
@click.option("--log-format", default="console", show_default=True, type=click.Choice(["console", "json"]))
def cli(log_level: str, log_format: str) -> None:
    """mutepro: keep Kafka producers healthy when part of the cluster is not."""
    configure_logging(log_level, log_format)


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
