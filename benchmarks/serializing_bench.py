"""produce() CPU cost of MuteSerializingProducer against confluent-kafka's SerializingProducer: does the C fast path
still run for the serialized bytes?

    python3 benchmarks/serializing_bench.py                 # 100,000 messages per run, 3 rounds
    python3 benchmarks/serializing_bench.py --messages 200000 --rounds 5

No broker: each producer wraps the real librdkafka client (``confluent_kafka.cimpl.Producer``) pointed at a closed
port, whose ``list_topics`` alone is answered locally, so MuteProducer knows the topic's six partitions and treats
them as healthy. Messages are keyed (100 keys, ``StringSerializer``) with a 64-character ``StringSerializer`` value
and stay queued in librdkafka (sized to hold them all), so a run measures the produce() call itself: serializing,
MuteProducer's routing and librdkafka's enqueue. Runs, each in a fresh producer, alternated per round:

- ``serializing``: confluent-kafka's SerializingProducer (librdkafka partitions);
- ``mute-c``: MuteSerializingProducer on the C fast path (the bytes go to ``FastPath.produce``);
- ``mute-plain-c``: plain MuteProducer, C path, the same serializers called by the loop (what an application
  serializing by hand pays).

Time is the producing thread's CPU time (``time.thread_time``: the produce() calls, librdkafka's enqueue included,
without librdkafka's own threads), so that other work on a busy machine does not count. Prints the median µs of CPU
per message of each run and, for ``mute-c``, how many produce() calls the C path handed to
Python (``FastPath.fallbacks``; 0 means every message stayed in C).
"""

from __future__ import annotations

import argparse
import statistics
import time
from types import SimpleNamespace
from typing import Any

import confluent_kafka
from confluent_kafka import SerializingProducer
from confluent_kafka.serialization import MessageField, SerializationContext, StringSerializer
from result_file import meta, spread, write

from mutepro import MuteProducer, MuteSerializingProducer

TOPIC = "bench"
PARTITIONS = 6
CONF = {
    "bootstrap.servers": "127.0.0.1:1",
    "queue.buffering.max.messages": 2_000_000,
    "queue.buffering.max.kbytes": 2_000_000,
    "log_level": 0,
}


class OfflineProducer(confluent_kafka.cimpl.Producer):
    """librdkafka's producer (its produce() untouched, in C) with a local answer to list_topics: six partitions."""

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        parts = {p: SimpleNamespace(id=p, leader=1) for p in range(PARTITIONS)}
        return SimpleNamespace(topics={TOPIC: SimpleNamespace(error=None, partitions=parts)})


def _ready(producer: MuteProducer) -> MuteProducer:
    producer.wait_for_topic(TOPIC, 0)
    producer._load_metadata(time.monotonic())
    if not producer.wait_for_topic(TOPIC, 0):
        raise SystemExit("the offline metadata was not taken")
    return producer


def run(kind: str, messages: int, keys: list[str], value: str) -> tuple[float, int | None]:
    """CPU seconds per message for one fresh producer of ``kind``; the C path's fallbacks for mute-c."""
    ser = StringSerializer("utf_8")
    serdes = {"key.serializer": ser, "value.serializer": ser}
    fallbacks: int | None = None
    if kind == "serializing":
        producer: Any = SerializingProducer({**CONF, **serdes})
    elif kind == "mute-c":
        producer = _ready(MuteSerializingProducer(
            {**CONF, **serdes}, _inner_factory=OfflineProducer, _threads=False,
        ))
    else:
        producer = _ready(MuteProducer(CONF, _inner_factory=OfflineProducer, _threads=False))
    before = producer._fast.fallbacks if kind == "mute-c" else 0
    produce = producer.produce
    started = time.thread_time()
    if kind == "mute-plain-c":
        kctx = SerializationContext(TOPIC, MessageField.KEY)
        vctx = SerializationContext(TOPIC, MessageField.VALUE)
        for i in range(messages):
            produce(TOPIC, ser(value, vctx), ser(keys[i % len(keys)], kctx))
    else:
        for i in range(messages):
            produce(TOPIC, key=keys[i % len(keys)], value=value)
    elapsed = time.thread_time() - started
    if kind == "mute-c":
        fallbacks = producer._fast.fallbacks - before
    if len(producer) < messages:
        raise SystemExit(f"{kind}: only {len(producer)} of {messages} messages queued")
    producer.purge()
    if isinstance(producer, MuteProducer):
        producer.close(0)  # purged: nothing left to wait for
    else:
        producer.flush(0)
    return elapsed / messages, fallbacks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=None, help="directory for serializing_bench.json (default benchmarks/results)")
    args = parser.parse_args(argv)
    started = meta("serializing_bench", argv, messages=args.messages, rounds=args.rounds, keys=100, value_bytes=64,
                   measure="process CPU time per produce() call, rounds interleaved")
    keys = [f"key-{i}" for i in range(100)]
    value = "v" * 64
    kinds = ["serializing", "mute-c", "mute-plain-c"]
    seen: dict[str, list[float]] = {k: [] for k in kinds}
    fallbacks: list[int] = []
    for _ in range(args.rounds):
        for kind in kinds:
            per, fb = run(kind, args.messages, keys, value)
            seen[kind].append(per)
            if fb is not None:
                fallbacks.append(fb)
    base = statistics.median(seen["serializing"])
    print(f"{args.messages} keyed messages per run, {args.rounds} rounds (median; all runs in µs of CPU per message)")
    for kind in kinds:
        med = statistics.median(seen[kind])
        runs = ", ".join(f"{s * 1e6:.2f}" for s in seen[kind])
        print(f"{kind:>13}: {med * 1e6:6.2f} µs/msg  ({med / base:4.2f}x SerializingProducer)  [{runs}]")
    print(f"mute-c: produce() calls handed to Python per run: {fallbacks}")
    result = {
        "meta": started,
        "us_per_msg": {kind: spread([v * 1e6 for v in seen[kind]], 2) for kind in kinds},
        "over_serializing": {kind: spread([v / b for v, b in zip(seen[kind], seen["serializing"], strict=True)])
                             for kind in kinds if kind != "serializing"},
        "handed_to_python_per_run": max(fallbacks, default=0),
    }  # fmt: skip
    print(f"wrote {write('serializing_bench', result, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
