"""Spark's Kafka sink schema through format("mutepro") (a PySpark data source, Spark 4): a batch write with every
column (key, value, topic, partition, headers), read back with the replay filter.

    pip install 'mutepro[spark]'
    python examples/spark_datasource.py        # starts (and stops) a local 3-rack cluster
    mutepro cluster up && export MUTEPRO_BOOTSTRAP=...   # or any cluster
"""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from mutepro.cluster import use_cluster
from mutepro.spark import ReplayFilter, register


def main() -> None:
    with use_cluster() as cluster:
        topic = f"spark-batch-{uuid.uuid4().hex[:6]}"
        admin = AdminClient(cluster.client_config())  # kept: the future needs its client alive
        admin.create_topics([NewTopic(topic, 6, 1)])[topic].result(30)
        spark = (SparkSession.builder.master("local[2]").config("spark.sql.shuffle.partitions", "2")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
        register(spark)  # once per session
        rows = spark.range(5000).select(
            F.concat(F.lit("customer-"), (F.col("id") % 50).cast("string")).alias("key"),
            F.concat(F.lit("order-"), F.col("id").cast("string")).alias("value"),
            F.array(F.struct(F.lit("source").alias("key"), F.lit(b"example").alias("value"))).alias("headers"),
        )
        # the same options as Spark's own sink; .mode("append") is required for a batch write
        (rows.write.format("mutepro").mode("append")
         .option("kafka.bootstrap.servers", cluster.bootstrap_servers).option("topic", topic).save())
        spark.stop()

        # Read back. ReplayFilter drops task retries, re-run batches and rescued copies by their headers.
        consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": f"example-{topic}",
                             "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        replays = ReplayFilter()
        fresh = 0
        for _ in range(30):
            messages = [m for m in consumer.consume(10_000, timeout=1.0) if m.error() is None]
            fresh += sum(1 for _ in replays.fresh(messages))
            if fresh >= 5000 and not messages:
                break
        consumer.close()
        print(f"read {fresh} rows, dropped {replays.replays} replays")


if __name__ == "__main__":
    main()
