"""What one rescue costs: a MuteProducer over a real librdkafka producer with N messages queued, a third of the
partitions muted, one driver round that purges and re-sends everything. No broker: the bootstrap address answers
nothing, so nothing leaves librdkafka and the purge is local; the topic's metadata is given, not fetched.

    python3 benchmarks/rescue_cost.py                    # 40,000 messages, unkeyed and keyed, 5 repetitions

Reports the rescue's wall time per message (median and spread over repetitions). The producing threads and the
application's poll() wait for a rescue, so this is the pause a stall's mute costs a saturated writer.
"""

from __future__ import annotations

import argparse
import sys
import time
from types import SimpleNamespace
from typing import Any

import confluent_kafka
from result_file import meta, spread, write

from mutepro import MuteProducer

TOPIC, PARTITIONS = "rescue-cost", 12


class _Inner(confluent_kafka.Producer):
    """The real client, with the topic's metadata given (three leaders, partition p led by broker 1 + p % 3)."""

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        partitions = {p: SimpleNamespace(id=p, leader=1 + p % 3) for p in range(PARTITIONS)}
        return SimpleNamespace(topics={TOPIC: SimpleNamespace(error=None, partitions=partitions)}, brokers={})


def one(n: int, keyed: bool) -> dict[str, float]:
    conf = {"bootstrap.servers": "127.0.0.1:1", "linger.ms": 5, "message.timeout.ms": 600_000, "log_level": 0}
    # sticky_bytes 16 KB: the messages spread over every partition, as a saturated loop's do over its linger
    # windows (time-only stickiness would put these 40,000, produced in ~15 ms, on two or three partitions, and
    # some runs none on broker 2's)
    policy = {"defaults": {"partitioner": {"sticky_bytes": 16384}}}
    producer = MuteProducer(conf, policy=policy, _inner_factory=_Inner, _threads=False)
    try:
        producer.wait_for_topic(TOPIC, 0)
        producer._load_metadata(time.monotonic())
        assert producer.wait_for_topic(TOPIC, 0)
        value = b"x" * 512
        for i in range(n):
            producer.produce(TOPIC, value, b"k%d" % i if keyed else None, on_delivery=_ignore)
        for p in range(1, PARTITIONS, 3):  # broker 2's partitions
            producer.mute_manager.mute(TOPIC, p)
        now = time.monotonic()
        producer._tick(now)  # schedules the rescue (rescue.after_ms: 1 s)
        began = time.perf_counter()
        producer._tick(now + 2.0)  # due: purge, collect, re-send
        took = time.perf_counter() - began
        counters = producer.counters
        assert counters.rescued + counters.requeued == n, "the rescue did not take everything back"
        return {"us_per_msg": took / n * 1e6, "moved": counters.rescued, "requeued": counters.requeued}
    finally:
        producer.purge()
        producer.close(0)


def _ignore(err: Any, msg: Any) -> None:
    pass


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--messages", type=int, default=40_000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", default=None, help="directory for rescue_cost.json (default benchmarks/results)")
    args = p.parse_args(argv)
    started = meta("rescue_cost", argv, messages=args.messages, reps=args.reps)
    out: dict[str, Any] = {}
    for keyed in (False, True):
        runs = [one(args.messages, keyed) for _ in range(args.reps)]
        costs = [r["us_per_msg"] for r in runs]
        name = "keyed" if keyed else "unkeyed"
        out[name] = {"us_per_msg": spread(costs, 2), "moved": runs[-1]["moved"], "requeued": runs[-1]["requeued"]}
        print(f"{name:8s} {args.messages:,} messages: {out[name]['us_per_msg']['median']} us a message "
              f"({out[name]['us_per_msg']['min']}..{out[name]['us_per_msg']['max']}), "
              f"moved {out[name]['moved']:,}, re-queued {out[name]['requeued']:,}")  # fmt: skip
    print(f"wrote {write('rescue_cost', {'meta': started, **out}, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
