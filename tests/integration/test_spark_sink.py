"""The Spark sink on real Spark (local[2]), the real 3-broker cluster and a real Redis.

One SparkSession for the whole file (Spark is slow to start on 2 cores); each test writes its own topics.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
pytest.importorskip("pandas")

from confluent_kafka import Consumer, TopicPartition  # noqa: E402

import mutepro  # noqa: E402
from mutepro.cluster.launcher import LocalCluster  # noqa: E402
from mutepro.spark import BATCH_HEADER, ROW_HEADER, KafkaSink, ReplayFilter, register, row_identity  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.integration]

_ID_HEADERS = {BATCH_HEADER, ROW_HEADER}


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[2] SparkSession with the mutepro format registered; workers import this checkout's mutepro."""
    from pyspark.sql import SparkSession

    root = str(Path(mutepro.__file__).resolve().parent.parent)
    os.environ["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])
    session = (
        SparkSession.builder.master("local[2]").appName("mutepro-spark-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.streaming.forceDeleteTempCheckpointLocation", "true")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    try:
        yield session
    finally:
        session.stop()


def _consume(bootstrap: str, topics: list[str], expected: int, timeout_s: float = 60.0) -> list[Any]:
    """Every message of ``topics`` from the beginning: until ``expected`` arrived and the ends are reached."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"spark-check-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest", "enable.auto.commit": False, "enable.partition.eof": False,
    })
    consumer.subscribe(topics)
    out: list[Any] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        batch = consumer.consume(2000, timeout=1.0)
        out.extend(m for m in batch if m.error() is None)
        if len(out) >= expected and not batch:
            break
    consumer.close()
    return out


def _end_offsets(bootstrap: str, topic: str, partitions: int) -> int:
    """Messages in the topic (sum of high watermarks)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"wm-{uuid.uuid4().hex[:8]}"})
    try:
        return sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions))
    finally:
        consumer.close()


def _user_headers(msg: Any) -> list[tuple[str, bytes | None]]:
    return [(k, v) for k, v in (msg.headers() or []) if k not in _ID_HEADERS]


class TestBatchWrite:
    def test_all_five_columns_round_trip(self, spark: Any, kafka_cluster: LocalCluster, topic_factory: Any) -> None:
        """df.write.format('mutepro') writes keys, values, explicit partitions, headers and per-row topics exactly."""
        from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructField, StructType

        first, second = topic_factory(partitions=4), topic_factory(partitions=4)
        header_type = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))
        schema = StructType([
            StructField("key", BinaryType()), StructField("value", StringType()), StructField("topic", StringType()),
            StructField("partition", IntegerType()), StructField("headers", header_type),
        ])
        rows = [
            (
                f"k{i}".encode() if i % 5 else None,
                f"value-{i}",
                first if i % 2 else second,
                i % 4 if i % 3 == 0 else None,
                [("h1", str(i).encode()), ("h2", None)] if i % 7 else [],
            )
            for i in range(400)
        ]
        df = spark.createDataFrame(rows, schema).repartition(3)
        (df.write.format("mutepro").mode("append")
         .option("kafka.bootstrap.servers", kafka_cluster.bootstrap_servers).save())

        got = _consume(kafka_cluster.bootstrap_servers, [first, second], len(rows))
        assert len(got) == len(rows)
        by_value = {m.value().decode(): m for m in got}
        for key, value, topic, partition, headers in rows:
            msg = by_value[value]
            assert msg.key() == key
            assert msg.topic() == topic
            if partition is not None:
                assert msg.partition() == partition
            assert _user_headers(msg) == [(k, v) for k, v in headers]
            assert row_identity(msg.headers()) is not None
