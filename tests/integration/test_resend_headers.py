"""Messages re-sent by a rescue keep their headers (a delivery report carries none), on both paths."""

from __future__ import annotations

from typing import Any

from _helpers import consume_all, wait_for

from mutepro import MuteProducer
from mutepro.cluster.launcher import LocalCluster


def test_rescued_messages_keep_their_headers(kafka_cluster: LocalCluster, topic_factory: Any) -> None:
    """300 messages with headers wait in librdkafka (linger.ms 3 s); their partition is muted by hand, so they are
    purged and re-sent elsewhere: every one is written once, with its own headers plus x-mutepro-rescued-from."""
    topic = topic_factory(partitions=6, replication_factor=1)
    producer = MuteProducer(kafka_cluster.client_config(**{"linger.ms": 3000}))
    producer.produce(topic, value=b"warm")
    assert producer.flush(30) == 0
    assert wait_for(lambda: producer.mute_manager.snapshot(topic) is not None, 30, step=lambda: producer.poll(0.1))
    for i in range(300):
        producer.produce(topic, value=f"m{i}".encode(), headers=[("app", f"h{i}".encode()), ("trace", b"t")])
    queued = [p for p in range(6) if producer.outstanding(topic, p)]
    assert len(queued) == 1
    producer.mute_manager.mute(topic, queued[0], reason="test")
    assert wait_for(lambda: producer.counters.rescued >= 300, 30, step=lambda: producer.poll(0.1))
    assert producer.flush(60) == 0
    records = [r for r in consume_all(kafka_cluster.bootstrap_servers, topic, 301) if r.value() != b"warm"]
    assert len(records) == 300
    for record in records:
        headers = dict(record.headers() or [])
        i = int(record.value().decode()[1:])
        assert headers.get("app") == f"h{i}".encode() and headers.get("trace") == b"t", record.headers()
        assert "x-mutepro-rescued-from" in headers  # (the partition it last left: a copy may move twice)
        assert record.partition() != queued[0]
    producer.close()
