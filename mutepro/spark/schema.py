"""The input schema of Spark's Kafka sink, checked before any row is written.

``value`` (string or binary) is required; ``key`` (string or binary), ``topic`` (string), ``partition`` (int)
and ``headers`` (``array<struct<key: string, value: binary>>``) are optional; other columns are ignored, as by
Spark's sink. The ``topic`` option overrides the column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mutepro.errors import ConfigError
from mutepro.spark.options import SinkOptions

_BYTES = ("string", "binary")


@dataclass(frozen=True)
class WritePlan:
    """Which columns a task reads (all checked), and the options it writes with."""

    options: SinkOptions
    has_key: bool
    has_topic_column: bool
    has_partition: bool
    has_headers: bool

    @property
    def simple(self) -> bool:
        """Only value (and key) to a fixed topic: the fast loop applies."""
        return not (self.has_partition or self.has_headers or (self.has_topic_column and not self.options.topic))


def plan_write(schema: Any, options: SinkOptions) -> WritePlan:
    """Check a ``pyspark.sql.types.StructType`` against the Kafka sink's columns; errors name the column."""
    fields = {f.name.lower(): f.dataType for f in schema.fields}
    names = ", ".join(f.name for f in schema.fields) or "none"
    if "value" not in fields:
        raise ConfigError(f"column 'value' is required (string or binary); the DataFrame has: {names}")
    _expect("value", fields["value"], _BYTES)
    if "key" in fields:
        _expect("key", fields["key"], _BYTES)
    if "topic" in fields:
        _expect("topic", fields["topic"], ("string",))
    elif not options.topic:
        raise ConfigError("no topic: set .option('topic', ...) or give the DataFrame a string column 'topic'")
    if "partition" in fields:
        _expect("partition", fields["partition"], ("int",))
    if "headers" in fields and options.include_headers:
        _expect_headers(fields["headers"])
    return WritePlan(
        options,
        has_key="key" in fields,
        has_topic_column="topic" in fields,
        has_partition="partition" in fields,
        has_headers="headers" in fields and options.include_headers,
    )


def _expect(name: str, data_type: Any, allowed: tuple[str, ...]) -> None:
    found = data_type.simpleString()
    if found not in allowed:
        raise ConfigError(f"column {name!r} has type {found}; expected {' or '.join(allowed)} (cast it first)")


def _expect_headers(data_type: Any) -> None:
    found = data_type.simpleString()
    if found != "array<struct<key:string,value:binary>>":
        raise ConfigError(
            f"column 'headers' has type {found}; expected array<struct<key:string,value:binary>> "
            "(as Spark's Kafka source reads them)"
        )
