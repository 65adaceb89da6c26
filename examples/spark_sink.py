"""The Spark sink, both forms: a streaming query through foreachBatch, then a batch write with format("mutepro").
Read back with the replay filter.

    mutepro cluster up && export MUTEPRO_BOOTSTRAP=...      # or any cluster
    pip install 'mutepro[spark]'
    python examples/spark_sink.py

On a real cluster, ship the policy with the job (``spark-submit --files config/spark-job.yaml``) and pass its
name: ``KafkaSink(policy="spark-job.yaml", ...)``. This example uses an inline policy with in-process state.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid

from confluent_kafka import Consumer
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from mutepro.spark import KafkaSink, ReplayFilter, register


def main() -> None:
    bootstrap = os.environ.get("MUTEPRO_BOOTSTRAP", "127.0.0.1:9092")
    topic = f"spark-example-{uuid.uuid4().hex[:6]}"
    spark = SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "2").getOrCreate()
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "kafka.delivery.timeout.ms": "60000",  # a Java name: translated to librdkafka's message.timeout.ms
        # mutepro's own settings; a YAML path works too (config/spark-job.yaml)
        "policy": json.dumps({"defaults": {"keyed_policy": "reroute"}}),
    }

    # 1. Streaming: every micro-batch written from the executors through one MuteProducer per Python worker.
    sink = KafkaSink(topic=topic, options=options)
    stream = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1000).load().select(
        F.col("value").cast("string").alias("key"), F.concat(F.lit("event-"), F.col("value")).alias("value")
    )
    query = (stream.writeStream.foreachBatch(sink).option("checkpointLocation", tempfile.mkdtemp())
             .trigger(processingTime="1 second").start())
    query.awaitTermination(10)
    query.stop()
    for figures in sink.history:  # rows, rerouted, held, rescued, failed, muted partitions, write time
        print("batch", figures.batch_id, figures.as_dict())

    # 2. Batch: the same schema and options as Spark's Kafka sink; .mode("append") is required.
    register(spark)
    (spark.range(5000).select(F.concat(F.lit("order-"), F.col("id")).alias("value"))
     .write.format("mutepro").mode("append").options(**options).option("topic", topic).save())

    # 3. Read back, dropping replays (task retries, re-run batches, rescued copies) by their headers.
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"example-{topic}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    replays = ReplayFilter()
    fresh = 0
    for _ in range(20):
        messages = consumer.consume(10_000, timeout=1.0)
        fresh += sum(1 for _ in replays.fresh(m for m in messages if m.error() is None))
    consumer.close()
    print(f"read {fresh} rows, dropped {replays.replays} replays")
    spark.stop()


if __name__ == "__main__":
    main()
