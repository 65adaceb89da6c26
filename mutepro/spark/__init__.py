"""Spark integration: MuteProducer as a Structured Streaming sink, in two forms, with Spark's Kafka sink schema.

    query = df.writeStream.foreachBatch(KafkaSink(policy="job.yaml", topic="orders")).start()

    register(spark)
    df.write.format("mutepro").mode("append").option("kafka.bootstrap.servers", ...).option("topic", ...).save()

See README "Spark sink" for options and delivery semantics (at least once; replays identifiable by headers,
:class:`ReplayFilter` drops them).
"""

from __future__ import annotations

from mutepro.spark.core import BATCH_HEADER, ROW_HEADER
from mutepro.spark.datasource import FORMAT, MuteproDataSource, register
from mutepro.spark.dedup import ReplayFilter, row_identity
from mutepro.spark.errors import SinkDeliveryError
from mutepro.spark.figures import BatchFigures, TaskFigures
from mutepro.spark.foreach import KafkaSink
from mutepro.spark.options import SinkOptions, parse_options

__all__ = [
    "BATCH_HEADER",
    "FORMAT",
    "ROW_HEADER",
    "BatchFigures",
    "KafkaSink",
    "MuteproDataSource",
    "ReplayFilter",
    "SinkDeliveryError",
    "SinkOptions",
    "TaskFigures",
    "parse_options",
    "register",
    "row_identity",
]
