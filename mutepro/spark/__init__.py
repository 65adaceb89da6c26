"""Spark integration: MuteProducer as a Structured Streaming sink, in two forms, with Spark's Kafka sink schema.

    query = df.writeStream.foreachBatch(KafkaSink(policy="job.yaml", topic="orders")).start()

    register(spark)
    df.write.format("mutepro").mode("append").option("kafka.bootstrap.servers", ...).option("topic", ...).save()

See README "Spark sink" for options and delivery semantics (at least once; replays identifiable by headers,
:class:`ReplayFilter` drops them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mutepro._lazy import lazy_exports

if TYPE_CHECKING:  # for type checkers and the API docs; at run time __getattr__ imports each name on first use
    from mutepro.spark.core import BATCH_HEADER, ID_HEADER, ROW_HEADER
    from mutepro.spark.datasource import FORMAT, MuteproDataSource, register
    from mutepro.spark.dedup import ReplayFilter, row_identity
    from mutepro.spark.errors import SinkDeliveryError
    from mutepro.spark.figures import BatchFigures, TaskFigures
    from mutepro.spark.foreach import KafkaSink
    from mutepro.spark.identity import RowId, decode_identity
    from mutepro.spark.options import SinkOptions, parse_options

#: public name -> its module. Importing mutepro.spark (or mutepro.spark.cli, `mutepro spark jars`) loads no pyspark;
#: the data source's names (MuteproDataSource, register, FORMAT) import it when first used.
_LAZY: dict[str, str] = {
    'BATCH_HEADER': 'mutepro.spark.core',
    'ROW_HEADER': 'mutepro.spark.core',
    'ID_HEADER': 'mutepro.spark.core',
    'FORMAT': 'mutepro.spark.datasource',
    'MuteproDataSource': 'mutepro.spark.datasource',
    'register': 'mutepro.spark.datasource',
    'ReplayFilter': 'mutepro.spark.dedup',
    'row_identity': 'mutepro.spark.dedup',
    'RowId': 'mutepro.spark.identity',
    'decode_identity': 'mutepro.spark.identity',
    'SinkDeliveryError': 'mutepro.spark.errors',
    'BatchFigures': 'mutepro.spark.figures',
    'TaskFigures': 'mutepro.spark.figures',
    'KafkaSink': 'mutepro.spark.foreach',
    'SinkOptions': 'mutepro.spark.options',
    'parse_options': 'mutepro.spark.options',
}

__all__ = [
    "BATCH_HEADER",
    "FORMAT",
    "ID_HEADER",
    "ROW_HEADER",
    "BatchFigures",
    "KafkaSink",
    "MuteproDataSource",
    "ReplayFilter",
    "RowId",
    "SinkDeliveryError",
    "SinkOptions",
    "TaskFigures",
    "decode_identity",
    "parse_options",
    "register",
    "row_identity",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
