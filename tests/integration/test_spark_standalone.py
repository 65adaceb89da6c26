"""The Spark sink beyond local mode: a Spark standalone cluster (a master and two workers started from PySpark's own
jars, each executor its own JVM with its own Python workers) driven by a classic driver in this process and
through Spark Connect, with the real 3-broker Kafka cluster and a real Redis sharing mute state between executors.

One standalone cluster for the module (mutepro.spark.standalone): workers of 2 cores, and each application
(this process's classic driver, the Connect server's) capped at 2 cores of 1-core executors, so that both run at
once with one executor on each worker. Executors run this interpreter and import this checkout's mutepro
(spark.pyspark.python, spark.executorEnv.PYTHONPATH).
"""

from __future__ import annotations

import json
import os
import sys
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

from _helpers import consume_all, consume_to_end, end_offsets

from mutepro.cluster.launcher import LocalCluster
from mutepro.spark import KafkaSink, register, row_identity
from mutepro.spark.standalone import StandaloneCluster, StandaloneSpec, python_conf
from mutepro.spark.workerenv import mutepro_root

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(420)]

#: each application: two 1-core executors of 512 MB, one per worker (spark.deploy.spreadOut)
_APP_CONF = {"spark.cores.max": "2", "spark.executor.cores": "1", "spark.executor.memory": "512m"}


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    spec = StandaloneSpec(
        run_dir=tmp_path_factory.mktemp("spark-standalone"), workers=2, worker_cores=2, worker_memory="1200m",
        connect=True, python=sys.executable, pythonpath=(mutepro_root(),),
        connect_conf={**_APP_CONF, "spark.sql.shuffle.partitions": "4"},
    )
    with StandaloneCluster(spec, progress=lambda line: print(f"spark: {line}", file=sys.stderr)) as cluster:
        yield cluster


def _stop_classic_session() -> None:
    """Stop this process's SparkContext, if any (e.g. test_spark_sink's local[2] session): one SparkContext per
    process, and PySpark refuses a Connect session while a classic one runs (SESSION_ALREADY_EXIST)."""
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        active.stop()


@pytest.fixture(scope="class")
def classic(standalone: StandaloneCluster) -> Iterator[Any]:
    """A classic SparkSession (driver in this process) on the standalone cluster, for one test class."""
    from pyspark.sql import SparkSession

    _stop_classic_session()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(standalone.master_url).appName("mutepro-standalone-tests")
        .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "1g")
    )
    for key, value in {**_APP_CONF, **python_conf(sys.executable, [mutepro_root()])}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


def _end_offsets(bootstrap: str, topic: str, partitions: int) -> int:
    return sum(end_offsets(bootstrap, topic, partitions).values())


def _read_back_exactly(bootstrap: str, topic: str, partitions: int, tag: str, rows: int) -> list[Any]:
    """Every row ``<tag><i>`` for i < rows was written once: the topic holds ``rows`` messages, each one distinct."""
    messages = consume_all(bootstrap, topic, rows, timeout_s=90)
    assert _end_offsets(bootstrap, topic, partitions) == rows
    values = Counter(m.value() for m in messages)
    assert len(messages) == rows and set(values) == {f"{tag}{i}".encode() for i in range(rows)}
    assert all(row_identity(m.headers()) is not None for m in messages)
    return messages


def _worker_of(pid: int) -> str:
    """Which worker a Python worker process belongs to: its working directory is under its executor's own
    (``<run dir>/worker-N/<app id>/<executor id>``, plus a session directory on Connect)."""
    parts = Path(os.readlink(f"/proc/{pid}/cwd")).parts
    return next(p for p in parts if p.startswith("worker-"))


def _values(spark: Any, tag: str, rows: int, partitions: int) -> Any:
    from pyspark.sql import functions as F

    return spark.range(rows, numPartitions=partitions).select(F.concat(F.lit(tag), F.col("id")).alias("value"))


class TestStandaloneCluster:
    def test_foreachbatch_sink_writes_every_row_from_two_executors(
        self, classic: Any, kafka_cluster: LocalCluster, topic_factory: Any
    ) -> None:
        """KafkaSink on the 2-worker cluster: 20,000 rows over 8 Spark partitions, all read back exactly once,
        written by the Python workers of two executors, one on each worker (not by the driver's process)."""
        topic = topic_factory(partitions=6)
        sink = KafkaSink(topic=topic, options={"kafka.bootstrap.servers": kafka_cluster.bootstrap_servers})
        started = time.monotonic()
        figures = sink(_values(classic, "row-", 20_000, 8))
        print(f"20,000 rows in {time.monotonic() - started:.1f}s: {figures.as_dict()}", file=sys.stderr)
        assert figures.rows == 20_000 and figures.failed == 0 and figures.tasks == 8
        _read_back_exactly(kafka_cluster.bootstrap_servers, topic, 6, "row-", 20_000)
        pids = {int(p.split("/")[0]) for p in figures.producers}
        assert os.getpid() not in pids
        assert {_worker_of(pid) for pid in pids} == {"worker-1", "worker-2"}

    def test_a_partition_muted_in_one_executor_is_avoided_by_the_other(
        self, classic: Any, kafka_cluster: LocalCluster, topic_factory: Any, redis_url: str
    ) -> None:
        """With the policy's Redis state, partition 0 muted by hand in one executor's producer is adopted by the
        other executor's producer (a separate JVM on the other worker), and no row of the next write lands there."""
        topic = topic_factory(partitions=4)
        policy = {"state": {"backend": "redis", "url": redis_url, "key_prefix": f"sa-{uuid.uuid4().hex[:8]}"}}
        sink = KafkaSink(options={"kafka.bootstrap.servers": kafka_cluster.bootstrap_servers, "topic": topic,
                                  "policy": json.dumps(policy)})
        sink_options = sink.options
        warm = sink(_values(classic, "warm-", 2000, 2))  # both executors build their producer and learn the topic
        assert warm.rows == 2000

        def mute(batches: Any) -> Any:
            import pyarrow as pa

            from mutepro.spark import cache

            producer = cache.worker_for(sink_options).producer
            assert producer.wait_for_topic(topic, 15)
            producer.mute_manager.mute(topic, 0)
            yield pa.RecordBatch.from_pydict({"pid": [os.getpid()], "cwd": [os.getcwd()]})

        def sees_mute(batches: Any) -> Any:
            import pyarrow as pa

            from mutepro.spark import cache

            producer = cache.worker_for(sink_options).producer
            producer.wait_for_topic(topic, 15)
            manager = producer.mute_manager
            deadline = time.monotonic() + 15
            while not manager.is_muted(topic, 0) and time.monotonic() < deadline:
                time.sleep(0.05)  # the producer adopts the other executor's Redis record on its own tick
            yield pa.RecordBatch.from_pydict(
                {"pid": [os.getpid()], "cwd": [os.getcwd()], "muted": [manager.is_muted(topic, 0)]})

        muter = classic.range(1, numPartitions=1).mapInArrow(mute, "pid long, cwd string").collect()[0]
        seen = classic.range(2, numPartitions=2).mapInArrow(sees_mute, "pid long, cwd string, muted boolean").collect()
        others = [r for r in seen if r.cwd != muter.cwd]
        print(f"muted in {muter.cwd} (pid {muter.pid}); seen: {[r.asDict() for r in seen]}", file=sys.stderr)
        assert others, f"both probes ran in the muting executor {muter.cwd}: no other executor to check"
        assert all(r.muted for r in others), seen
        after = sink(_values(classic, "after-", 4000, 2))
        assert after.rows == 4000 and len({p.split("/")[0] for p in after.producers}) == 2, after
        assert f"{topic}:0" in after.muted_partitions, after  # still muted at the tasks' end
        messages = consume_all(kafka_cluster.bootstrap_servers, topic, 6000, timeout_s=90)
        assert len(messages) == 6000
        landed = Counter(m.partition() for m in messages if m.value().startswith(b"after-"))
        assert sum(landed.values()) == 4000 and landed[0] == 0, landed


@pytest.fixture(scope="class")
def remote(standalone: StandaloneCluster) -> Iterator[Any]:
    """A Spark Connect session on the cluster's Connect server (no classic session may run beside it)."""
    pytest.importorskip("grpc", reason="Spark Connect's client needs mutepro[spark-connect]")
    from pyspark.sql import SparkSession

    _stop_classic_session()
    session = SparkSession.builder.remote(standalone.connect_url).getOrCreate()
    try:
        yield session
    finally:
        session.stop()  # before the server stops: the client's exit hook would otherwise retry a gone server


class TestSparkConnect:
    def test_foreachbatch_sink_through_connect(
        self, remote: Any, kafka_cluster: LocalCluster, topic_factory: Any
    ) -> None:
        """KafkaSink called with a Connect DataFrame: its mapInArrow runs on the cluster's executors; every row is
        read back exactly once, written by two executor processes."""
        topic = topic_factory(partitions=4)
        sink = KafkaSink(topic=topic, options={"kafka.bootstrap.servers": kafka_cluster.bootstrap_servers})
        figures = sink(_values(remote, "connect-", 8000, 4))
        print(f"Connect foreachBatch sink: {figures.as_dict()}", file=sys.stderr)
        assert figures.rows == 8000 and figures.failed == 0
        _read_back_exactly(kafka_cluster.bootstrap_servers, topic, 4, "connect-", 8000)
        assert {_worker_of(int(p.split("/")[0])) for p in figures.producers} == {"worker-1", "worker-2"}

    def test_streaming_foreachbatch_through_connect(
        self, remote: Any, kafka_cluster: LocalCluster, topic_factory: Any, tmp_path: Path
    ) -> None:
        """writeStream.foreachBatch(KafkaSink) through Connect: the server runs the function in its own Python
        process per micro-batch; the rows of the committed batches are read back."""
        topic = topic_factory(partitions=4)
        sink = KafkaSink(topic=topic, options={"kafka.bootstrap.servers": kafka_cluster.bootstrap_servers})
        from pyspark.sql import functions as F

        stream = (remote.readStream.format("rate-micro-batch").option("rowsPerBatch", 500)
                  .option("numPartitions", 2).load()
                  .select(F.concat(F.lit("stream-"), F.col("value").cast("string")).alias("value")))
        query = (stream.writeStream.foreachBatch(sink).option("checkpointLocation", str(tmp_path / "ckpt"))
                 .trigger(processingTime="1 second").start())
        commits = tmp_path / "ckpt" / "commits"

        def committed() -> int:
            return len([f for f in commits.iterdir() if f.name.isdigit()]) if commits.is_dir() else 0

        try:
            deadline = time.monotonic() + 120
            while committed() < 3:
                assert query.isActive, query.exception()
                assert time.monotonic() < deadline, "fewer than 3 batches committed within 120 s"
                time.sleep(0.5)
        finally:
            query.stop()
        # Stopping a query interrupts the batch in progress: its rows may be partly written (at-least-once), so
        # what must be there is every row of the batches the checkpoint committed, and nothing from beyond the
        # one batch after them.
        done = committed()
        # everything written so far, read to each partition's end: a count of 500 * done could be reached with
        # rows of the interrupted batch while a committed one is still unread
        messages = consume_to_end(kafka_cluster.bootstrap_servers, topic, 4, timeout_s=60)
        ids = {int(m.value().removeprefix(b"stream-")) for m in messages}
        assert set(range(500 * done)) <= ids, (done, len(ids))
        assert max(ids) < 500 * (done + 1), (done, max(ids))

    def test_data_source_through_connect(self, remote: Any, kafka_cluster: LocalCluster, topic_factory: Any) -> None:
        """format("mutepro") registered on a Connect session (``register`` sends the class to the server): a
        batch write of 8,000 rows over 4 partitions, every row read back exactly once."""
        topic = topic_factory(partitions=4)
        register(remote)
        (_values(remote, "source-", 8000, 4).write.format("mutepro").mode("append")
         .option("kafka.bootstrap.servers", kafka_cluster.bootstrap_servers).option("topic", topic).save())
        _read_back_exactly(kafka_cluster.bootstrap_servers, topic, 4, "source-", 8000)
