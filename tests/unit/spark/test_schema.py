"""The Kafka sink's input schema, checked before any row is written."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from mutepro.errors import ConfigError
from mutepro.spark.options import parse_options
from mutepro.spark.schema import plan_write

WITH_TOPIC = parse_options({"kafka.bootstrap.servers": "b:9092", "topic": "t"})
NO_TOPIC = parse_options({"kafka.bootstrap.servers": "b:9092"})
HEADERS = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def schema(**columns: object) -> StructType:
    return StructType([StructField(name, dtype) for name, dtype in columns.items()])  # type: ignore[arg-type]


class TestPlanWrite:
    def test_value_only_is_the_simple_path(self) -> None:
        """value (string or binary) with the topic option takes the fast loop."""
        for value_type in (StringType(), BinaryType()):
            plan = plan_write(schema(value=value_type), WITH_TOPIC)
            assert plan.simple and not plan.has_key

    def test_all_five_columns(self) -> None:
        """key, topic, partition and headers are read when present; the general loop applies."""
        plan = plan_write(
            schema(key=BinaryType(), value=StringType(), topic=StringType(), partition=IntegerType(), headers=HEADERS),
            NO_TOPIC,
        )
        assert (plan.has_key, plan.has_topic_column, plan.has_partition, plan.has_headers) == (True,) * 4
        assert not plan.simple

    def test_missing_value_named(self) -> None:
        """No value column: the error names it and lists the DataFrame's columns."""
        with pytest.raises(ConfigError, match=r"'value' is required.*payload"):
            plan_write(schema(payload=StringType()), WITH_TOPIC)

    @pytest.mark.parametrize(
        ("column", "dtype"),
        [("value", LongType()), ("key", IntegerType()), ("topic", BinaryType()), ("partition", LongType()),
         ("headers", ArrayType(StringType()))],
    )
    def test_wrong_types_named(self, column: str, dtype: object) -> None:
        """A column of the wrong type fails naming the column and the types it takes."""
        columns = {"value": StringType(), column: dtype}
        with pytest.raises(ConfigError, match=f"'{column}' has type"):
            plan_write(schema(**columns), WITH_TOPIC)

    def test_topic_needed_somewhere(self) -> None:
        """Neither a topic option nor a topic column: the error says how to give one."""
        with pytest.raises(ConfigError, match="no topic"):
            plan_write(schema(value=StringType()), NO_TOPIC)

    def test_include_headers_false_skips_the_column(self) -> None:
        """includeHeaders=false leaves a headers column unread (and unchecked)."""
        opts = parse_options({"kafka.bootstrap.servers": "b:9092", "topic": "t", "includeHeaders": "false"})
        assert not plan_write(schema(value=StringType(), headers=ArrayType(StringType())), opts).has_headers

    def test_extra_columns_ignored(self) -> None:
        """Other columns are ignored, as by Spark's Kafka sink."""
        assert plan_write(schema(value=StringType(), id=LongType()), WITH_TOPIC).simple
