"""Spark Structured Streaming through mutepro's foreachBatch sink: a keyed rate stream written from the executors
through one MuteProducer per Python worker, with per-batch figures on the driver.

    pip install 'mutepro[spark]'
    python examples/spark_sink.py              # starts (and stops) a local 3-rack cluster
    mutepro cluster up && export MUTEPRO_BOOTSTRAP=...   # or any cluster

    export SPARK_MASTER_URL=$(mutepro spark cluster start --workers 2)   # on a Spark standalone cluster
    python examples/spark_sink.py; mutepro spark cluster stop

On a real cluster, ship the policy with the job (``spark-submit --files config/spark-job.yaml``) and pass its
name: ``KafkaSink(policy="spark-job.yaml", ...)``. This example uses an inline policy with in-process state.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import uuid

from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from mutepro.cluster import use_cluster
from mutepro.spark import KafkaSink
from mutepro.spark.workerenv import mutepro_root


def main() -> None:
    with use_cluster() as cluster:
        topic = f"spark-stream-{uuid.uuid4().hex[:6]}"
        admin = AdminClient(cluster.client_config())  # kept: the future needs its client alive
        admin.create_topics([NewTopic(topic, 6, 1)])[topic].result(30)
        master = os.environ.get("SPARK_MASTER_URL", "local[2]")
        builder = (SparkSession.builder.master(master).config("spark.sql.shuffle.partitions", "2")
                   .config("spark.ui.showConsoleProgress", "false"))
        if master.startswith("spark://"):  # executors elsewhere: reachable driver, and this mutepro on their path
            builder = (builder.config("spark.driver.host", "127.0.0.1").config("spark.executor.memory", "512m")
                       .config("spark.executorEnv.PYTHONPATH", mutepro_root())
                       .config("spark.pyspark.python", sys.executable))
        spark = builder.getOrCreate()
        # Spark's Kafka sink's options; kafka.* go to librdkafka (Java names such as delivery.timeout.ms are
        # translated), policy holds mutepro's own settings (a YAML path works too: config/spark-job.yaml)
        sink = KafkaSink(topic=topic, options={
            "kafka.bootstrap.servers": cluster.bootstrap_servers,
            "kafka.delivery.timeout.ms": "60000",
            "policy": json.dumps({"defaults": {"keyed_policy": "reroute"}}),
        })
        stream = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1000).load().select(
            (F.col("value") % 100).cast("string").alias("key"), F.concat(F.lit("event-"), F.col("value")).alias("value")
        )
        query = (stream.writeStream.foreachBatch(sink).option("checkpointLocation", tempfile.mkdtemp())
                 .trigger(processingTime="1 second").start())
        try:
            # three micro-batches, however long Spark takes to start (bounded: two minutes)
            deadline = time.monotonic() + 120
            while len(sink.history) < 3 and query.isActive and time.monotonic() < deadline:
                query.awaitTermination(1)
            if query.exception() is not None:
                raise RuntimeError(f"the streaming query failed: {query.exception()}")
        finally:
            query.stop()
            spark.stop()
        for figures in sink.history:  # rows, rerouted, held, rescued, failed, muted partitions, write time
            print(f"batch {figures.batch_id}: {figures.rows} rows in {figures.write_seconds:.2f} s, "
                  f"{figures.failed} failed, muted {list(figures.muted_partitions)}")
        print(f"rows written: {sum(f.rows for f in sink.history)} in {len(sink.history)} micro-batches "
              f"by {len({p for f in sink.history for p in f.producers})} producers on {master}")


if __name__ == "__main__":
    main()
