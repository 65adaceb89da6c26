"""``mutepro spark ...``: helpers around the Spark sink."""

from __future__ import annotations

import click

from mutepro.spark.jars import resolve_spark_kafka


@click.group("spark")
def spark() -> None:
    """The Spark sink: jars for comparing with Spark's built-in Kafka sink."""


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
