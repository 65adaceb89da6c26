"""The Spark sink on real Spark (local[2]), the real 3-broker cluster and a real Redis.

One SparkSession for the whole file (Spark is slow to start on 2 cores); each test writes its own topics.
"""

from __future__ import annotations

import json
import os
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

from _helpers import end_offsets
from confluent_kafka import Consumer
from pyspark.errors import StreamingQueryException

from mutepro.cluster.launcher import LocalCluster
from mutepro.partition.hashing import murmur2_hash
from mutepro.spark import BATCH_HEADER, ID_HEADER, ROW_HEADER, KafkaSink, ReplayFilter, register, row_identity
from mutepro.spark.workerenv import workers_import_this_mutepro

pytestmark = [pytest.mark.spark, pytest.mark.integration]

_ID_HEADERS = {ID_HEADER, BATCH_HEADER, ROW_HEADER}


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[2] SparkSession with the mutepro format registered; workers import this checkout's mutepro."""
    from pyspark.sql import SparkSession

    session = (
        # Python workers import the same mutepro as this process
        workers_import_this_mutepro(SparkSession.builder).master("local[2]").appName("mutepro-spark-tests")
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
    return sum(end_offsets(bootstrap, topic, partitions).values())


def _user_headers(msg: Any) -> list[tuple[str, bytes | None]]:
    return [(k, v) for k, v in (msg.headers() or []) if k not in _ID_HEADERS]


class TestBatchWrite:
    def test_all_five_columns_round_trip(self, spark: Any, kafka_cluster: LocalCluster, topic_factory: Any) -> None:
        """df.write.format('mutepro') writes keys, values, explicit partitions, headers and per-row topics exactly;
        keys land where Java's murmur2 (Spark's built-in sink) puts them."""
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
            elif key is not None:  # where Spark's built-in (Java) sink puts the key: murmur2, positive, modulo
                assert msg.partition() == (murmur2_hash(key) & 0x7FFFFFFF) % 4
            assert _user_headers(msg) == [(k, v) for k, v in headers]
            assert row_identity(msg.headers()) is not None


class TestBadOptions:
    def test_fail_before_any_row_naming_the_problem(
        self, spark: Any, kafka_cluster: LocalCluster, topic_factory: Any, tmp_path: Path
    ) -> None:
        """Missing value column, wrong types, unknown or Java-only options, a bad policy, a forgotten
        .mode('append'): each fails before any row is written, naming the column or option."""
        from pyspark.sql import functions as F

        topic = topic_factory(partitions=2)
        bootstrap = kafka_cluster.bootstrap_servers
        good = spark.range(50).select(F.col("id").cast("string").alias("value"))
        bad_policy = tmp_path / "bad.yaml"
        bad_policy.write_text("defaults:\n  slow_call:\n    threshold_ms: -5\n")
        base = {"kafka.bootstrap.servers": bootstrap, "topic": topic}
        cases: list[tuple[Any, dict[str, str], str]] = [
            (spark.range(5).select(F.col("id").cast("string").alias("payload")), base, "'value'"),
            (good.withColumn("key", F.lit(1)), base, "'key'"),
            (good.withColumn("partition", F.lit("0")), base, "'partition'"),
            (good, {**base, "kafka.max.block.ms": "1000"}, "kafka.max.block.ms"),
            (good, {**base, "kafka.buffer.memroy": "1"}, "buffer.memroy"),
            (good, {**base, "linger": "5"}, "'linger'"),
            (good, {**base, "policy": str(bad_policy)}, "threshold_ms"),
            (good, {**base, "policy": str(tmp_path / "missing.yaml")}, "missing.yaml"),
        ]
        for df, options, needle in cases:
            with pytest.raises(Exception, match=needle.replace(".", r"\.")):
                df.write.format("mutepro").mode("append").options(**options).save()
        for df, options, needle in cases[:4]:  # the foreachBatch form checks when the sink is built
            with pytest.raises(Exception, match=needle.replace(".", r"\.")):
                KafkaSink(options=options)(df, 0)
        with pytest.raises(Exception, match=r"(?i)append"):
            good.write.format("mutepro").options(**base).save()  # default save mode: ErrorIfExists
        with pytest.raises(Exception, match="append"):
            good.write.format("mutepro").mode("overwrite").options(**base).save()
        assert _end_offsets(bootstrap, topic, 2) == 0


def _committed_batches(checkpoint: Path) -> int:
    """Micro-batches in the checkpoint's commit log (Spark writes one file per committed batch)."""
    commits = checkpoint / "commits"
    return sum(1 for p in commits.iterdir() if p.name.isdigit()) if commits.exists() else 0


def _await_batches(query: Any, checkpoint: Path, count: int, timeout_s: float) -> None:
    """Wait (bounded) until ``count`` batches are committed; a failed query fails the test at once."""
    deadline = time.monotonic() + timeout_s
    while _committed_batches(checkpoint) < count:
        if not query.isActive:
            raise AssertionError(f"query stopped: {query.exception()}")
        assert time.monotonic() < deadline, f"fewer than {count} batches committed within {timeout_s}s"
        query.awaitTermination(0.5)  # returns early when the query ends


def _rate_stream(spark: Any, rows_per_batch: int) -> Any:
    """A deterministic stream: batch b holds ids b*rows_per_batch .. (b+1)*rows_per_batch-1 (replays included)."""
    from pyspark.sql import functions as F

    return (
        spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch)
        .option("numPartitions", 2).load()
        .select(F.concat(F.lpad(F.col("value").cast("string"), 10, "0"), F.lit("|" + "x" * 100)).alias("value"))
    )


def _check_committed_rows(messages: list[Any], committed_rows: int) -> ReplayFilter:
    """Every committed id was consumed; after dropping replays by their headers, each id appears once."""
    ids = Counter(int(m.value()[:10]) for m in messages)
    missing = [i for i in range(committed_rows) if i not in ids]
    assert not missing, f"{len(missing)} committed rows missing, e.g. {missing[:5]}"
    replays = ReplayFilter()
    fresh = Counter(int(m.value()[:10]) for m in replays.fresh(messages))
    twice = [i for i, n in fresh.items() if n > 1]
    assert not twice, "duplicates without a repeated identity: " + repr(
        [(m.partition(), m.offset(), m.headers()) for m in messages if int(m.value()[:10]) in twice[:2]]
    )
    assert replays.replays == sum(ids.values()) - len(ids)
    return replays


class TestRegister:
    def test_a_stream_starts_once_registered_on_the_starting_thread(self, spark: Any, tmp_path: Path) -> None:
        """writeStream.format('mutepro').start() fails with DATA_SOURCE_NOT_FOUND when the JVM thread has no active
        session (Spark looks the Python source up there), and starts once register() ran on the same thread."""
        def start() -> Any:
            return (
                _rate_stream(spark, 10).writeStream.format("mutepro")
                .option("kafka.bootstrap.servers", "127.0.0.1:9").option("topic", "never-written")
                .option("checkpointLocation", str(tmp_path / f"ckpt-{uuid.uuid4().hex[:6]}"))
                .trigger(processingTime="1 hour").start()
            )

        spark._jvm.SparkSession.clearActiveSession()
        with pytest.raises(Exception, match="DATA_SOURCE_NOT_FOUND"):
            start()
        register(spark)
        query = start()
        try:
            assert query.isActive
        finally:
            query.stop()


class TestStreaming:
    def test_rate_stream_through_a_stalled_broker_loses_nothing(
        self, spark: Any, kafka_cluster: LocalCluster, topic_factory: Any, tmp_path: Path
    ) -> None:
        """writeStream.format('mutepro') runs on while broker 2 is stalled and resumed: every row of every
        committed batch is consumed back, and any replay carries the identity of its first copy."""
        topic = topic_factory(partitions=6, replication_factor=1)
        checkpoint = tmp_path / "ckpt"
        register(spark)  # on this thread, right before start() (see register's docstring)
        query = (
            _rate_stream(spark, 2000).writeStream.format("mutepro")
            .option("kafka.bootstrap.servers", kafka_cluster.bootstrap_servers).option("topic", topic)
            .option("kafka.message.timeout.ms", "15000").option("kafka.request.timeout.ms", "10000")
            .option("checkpointLocation", str(checkpoint)).trigger(processingTime="1 second").start()
        )
        try:
            _await_batches(query, checkpoint, 2, 120)
            with kafka_cluster.stalled(2):
                before = _committed_batches(checkpoint)
                _await_batches(query, checkpoint, before + 3, 90)  # batches keep committing during the stall
            _await_batches(query, checkpoint, _committed_batches(checkpoint) + 2, 90)
        finally:
            query.stop()
        committed_rows = _committed_batches(checkpoint) * 2000
        messages = _consume(kafka_cluster.bootstrap_servers, [topic], committed_rows, timeout_s=90)
        _check_committed_rows(messages, committed_rows)


def _await_history(query: Any, sink: KafkaSink, found: Any, timeout_s: float) -> Any:
    """Wait (bounded) until a batch in ``sink.history`` satisfies ``found``; returns it."""
    deadline = time.monotonic() + timeout_s
    while True:
        hit = next((b for b in list(sink.history) if found(b)), None)
        if hit is not None:
            return hit
        if not query.isActive:
            raise AssertionError(f"query stopped: {query.exception()}")
        assert time.monotonic() < deadline, f"no such batch within {timeout_s}s: {list(sink.history)[-3:]}"
        query.awaitTermination(0.2)


class TestStalledBrokerBound:
    def test_a_batch_caught_by_a_stall_finishes_while_the_broker_is_still_stopped(
        self, spark: Any, kafka_cluster: LocalCluster, topic_factory: Any, tmp_path: Path
    ) -> None:
        """Broker 2 stalled under a keyed stream (message.timeout.ms left at librdkafka's 5 min): the batch caught
        by it mutes broker 2 from its flush (the hedge: its last messages waited there alone, long before the
        5 s stall rule), takes back what is stuck in flight there and finishes while broker 2 is still stopped;
        after the resume every committed row is consumed, and any duplicate (the stalled broker writing its originals)
        carries the identity headers of its first copy, so ReplayFilter drops every one."""
        from pyspark.sql import functions as F

        topic = topic_factory(partitions=6, replication_factor=1)
        checkpoint = tmp_path / "ckpt"
        sink = KafkaSink(topic=topic, options={"kafka.bootstrap.servers": kafka_cluster.bootstrap_servers})
        stream = _rate_stream(spark, 2000).withColumn("key", F.substring(F.col("value"), 1, 10))
        query = (stream.writeStream.foreachBatch(sink).option("checkpointLocation", str(checkpoint))
                 .trigger(processingTime="1 second").start())
        try:
            _await_batches(query, checkpoint, 2, 120)
            assert all(b.inflight_rescues == 0 for b in sink.history)
            with kafka_cluster.stalled(2):
                # bounded far below message.timeout.ms (300 s): without the in-flight rescue this never comes
                caught = _await_history(query, sink, lambda b: b.inflight_rescues > 0, 120)
                assert caught.failed == 0 and caught.rescued > 0 and caught.muted_partitions
                assert caught.hedged > 0, caught
            _await_batches(query, checkpoint, _committed_batches(checkpoint) + 2, 90)
        finally:
            query.stop()
        committed_rows = _committed_batches(checkpoint) * 2000
        messages = _consume(kafka_cluster.bootstrap_servers, [topic], committed_rows, timeout_s=90)
        _check_committed_rows(messages, committed_rows)
        copies: dict[int, list[Any]] = {}
        for m in messages:
            copies.setdefault(int(m.value()[:10]), []).append(m)
        for row, msgs in copies.items():
            identities = {row_identity(m.headers()) for m in msgs}
            assert len(identities) == 1 and None not in identities, (row, [m.headers() for m in msgs])
        strict = ReplayFilter(headerless_are_copies=False)
        assert len(list(strict.fresh(messages))) == len(copies)


    def test_with_rf3_and_acks_all_a_stalled_follower_holds_the_batch_until_the_isr_shrinks(
        self, spark: Any, kafka_cluster: LocalCluster, topic_factory: Any, tmp_path: Path
    ) -> None:
        """RF 3, acks=all (both defaults), 3 brokers: every partition has a replica on broker 2, so while it is
        stalled every batch waits for it, whoever leads, until the leaders drop it from their ISR
        (replica.lag.time.max.ms: 10 s on this cluster, 30 s by Kafka's default); batches commit again while broker
        2 is still stopped, and every committed row is consumed afterwards.

        Not asserted: whether the flush hedge fires. Each leader checks its followers every
        replica.lag.time.max.ms / 2, so the leaders drop broker 2 up to 5 s apart, and once one has, its partitions
        deliver while the others still wait: that is the hedge's evidence, and muting the waiting ones then is
        right (one CI run did so 8 s into the stall). That it never fires while nothing is delivered anywhere is
        the rule's unit test (tests/unit/producer/test_inflight.py)."""
        topic = topic_factory(partitions=6, replication_factor=3)
        checkpoint = tmp_path / "ckpt"
        sink = KafkaSink(topic=topic, options={"kafka.bootstrap.servers": kafka_cluster.bootstrap_servers})
        query = (_rate_stream(spark, 2000).writeStream.foreachBatch(sink).option("checkpointLocation", str(checkpoint))
                 .trigger(processingTime="1 second").start())
        try:
            _await_batches(query, checkpoint, 2, 120)
            with kafka_cluster.stalled(2):
                before = _committed_batches(checkpoint)
                # bounded: the ISR shrinks after 10 s; then batches commit again with broker 2 still stopped
                _await_batches(query, checkpoint, before + 3, 120)
                during = [b for b in list(sink.history) if b.batch_id is not None and b.batch_id >= before]
            _await_batches(query, checkpoint, _committed_batches(checkpoint) + 2, 90)
        finally:
            query.stop()
        assert during
        committed_rows = _committed_batches(checkpoint) * 2000
        messages = _consume(kafka_cluster.bootstrap_servers, [topic], committed_rows, timeout_s=90)
        _check_committed_rows(messages, committed_rows)

class TestUndeliverable:
    def test_fails_the_query_clearly_then_replays_from_the_checkpoint(
        self, spark: Any, kafka_cluster: LocalCluster, topic_factory: Any, tmp_path: Path
    ) -> None:
        """Every broker stalled past message.timeout.ms: the foreachBatch query fails naming topic, partition and
        the Kafka error; restarted from its checkpoint after the brokers resume, no committed row is missing."""
        topic = topic_factory(partitions=3, replication_factor=1)
        checkpoint = tmp_path / "ckpt"
        sink = KafkaSink(topic=topic, options={
            "kafka.bootstrap.servers": kafka_cluster.bootstrap_servers, "kafka.message.timeout.ms": "8000",
            "kafka.request.timeout.ms": "6000",
        })

        def start() -> Any:
            return (_rate_stream(spark, 500).writeStream.foreachBatch(sink)
                    .option("checkpointLocation", str(checkpoint)).trigger(processingTime="1 second").start())

        query = start()
        try:
            _await_batches(query, checkpoint, 2, 120)
            for broker in kafka_cluster.brokers:
                kafka_cluster.stall(broker)
            try:
                with pytest.raises(StreamingQueryException) as failed:
                    query.awaitTermination(120)
            finally:
                for broker in kafka_cluster.brokers:
                    kafka_cluster.resume(broker)
            error = str(failed.value)
            assert topic in error and "partition" in error and "timed out" in error.lower(), error
            assert "SinkDeliveryError" in error
        finally:
            query.stop()
        failed_at = _committed_batches(checkpoint)
        query = start()
        try:
            _await_batches(query, checkpoint, failed_at + 2, 120)
        finally:
            query.stop()
        committed_rows = _committed_batches(checkpoint) * 500
        messages = _consume(kafka_cluster.bootstrap_servers, [topic], committed_rows, timeout_s=90)
        _check_committed_rows(messages, committed_rows)
        assert sink.history[-1].rows == 500
        # one producer per Python worker, reused across tasks and micro-batches (not one per task)
        tasks = sum(b.tasks for b in sink.history)
        producers = {p for b in sink.history for p in b.producers}
        assert tasks >= 6 and len(producers) < tasks, (tasks, producers)


class TestSharedMuteState:
    def test_a_partition_muted_by_one_worker_is_avoided_by_the_other(
        self, spark: Any, kafka_cluster: LocalCluster, topic_factory: Any, redis_url: str
    ) -> None:
        """With the policy's Redis state, a partition muted in one Python worker's producer is avoided by the
        producer of the other worker: no row of the next write lands there."""
        from pyspark.sql import functions as F

        topic = topic_factory(partitions=4)
        policy = {"state": {"backend": "redis", "url": redis_url, "key_prefix": f"spark-{uuid.uuid4().hex[:8]}"}}
        options = {"kafka.bootstrap.servers": kafka_cluster.bootstrap_servers, "topic": topic,
                   "policy": json.dumps(policy)}
        sink = KafkaSink(options=options)
        sink_options = sink.options

        def df(tag: str, rows: int) -> Any:
            return spark.range(rows, numPartitions=2).select(F.concat(F.lit(tag), F.col("id")).alias("value"))

        warm = sink(df("warm-", 2000))  # both workers build their producer and learn the topic
        assert warm.rows == 2000

        def mute(batches: Any) -> Any:
            import pyarrow as pa

            from mutepro.spark import cache

            producer = cache.worker_for(sink_options).producer
            assert producer.wait_for_topic(topic, 15)
            producer.mute_manager.mute(topic, 0)
            yield pa.RecordBatch.from_pydict({"pid": [os.getpid()]})

        def sees_mute(batches: Any) -> Any:
            import pyarrow as pa

            from mutepro.spark import cache

            producer = cache.worker_for(sink_options).producer
            producer.wait_for_topic(topic, 15)
            manager = producer.mute_manager
            deadline = time.monotonic() + 15
            while not manager.is_muted(topic, 0) and time.monotonic() < deadline:
                time.sleep(0.05)  # the producer adopts the other process's Redis record on its own tick
            yield pa.RecordBatch.from_pydict({"pid": [os.getpid()], "muted": [manager.is_muted(topic, 0)]})

        # mapInArrow: the same pool of Python workers as the sink's own tasks
        muter = spark.range(1, numPartitions=1).mapInArrow(mute, "pid long").collect()[0].pid
        seen = {r.pid: r.muted for r in spark.range(2, numPartitions=2).mapInArrow(sees_mute, "pid long, muted boolean")
                .collect()}
        assert any(pid != muter for pid in seen), "both tasks ran in the muting worker; no second worker to check"
        assert all(seen.values()), seen
        after = sink(df("after-", 4000))
        assert after.rows == 4000
        messages = _consume(kafka_cluster.bootstrap_servers, [topic], 6000)
        landed = Counter(m.partition() for m in messages if m.value().startswith(b"after-"))
        assert len(messages) == 6000
        assert sum(landed.values()) == 4000
        assert landed[0] == 0, landed
