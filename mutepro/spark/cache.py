"""One MuteProducer per Python worker process, reused by every task and micro-batch the worker runs.

Spark reuses Python workers (``spark.python.worker.reuse``, on by default), and module state of an importable
module survives from task to task: the producer keeps its connections, metadata and mute state. A worker runs
one task at a time, so the task's error log can be reset at its start. A producer whose task failed is thrown
away (purged and closed): leftovers of the failed attempt must neither satisfy nor poison the retry's flush.
Producers are closed when the worker exits; correctness never depends on it (idle workers are SIGKILLed).
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, Message

from mutepro.logs import get_logger
from mutepro.mute.store import BreakerStore, MemoryStore, make_store
from mutepro.policy import Policy
from mutepro.producer import MuteProducer
from mutepro.producer.options import RACK_AWARE_KEY
from mutepro.spark.options import SinkOptions
from mutepro.spark.sinkpolicy import load_sink_policy

log = get_logger("mutepro.spark")

_FIRST_ERRORS = 5


@dataclass
class ErrorLog:
    """Final delivery errors of the current task: a count, and the first few distinct (topic, partition, error).

    Fed by the producer's default delivery callback with ``delivery.report.only.error``: successful deliveries
    cost no Python call at all (a per-row callback through MuteProducer would double the sink's CPU per row).
    """

    count: int = 0
    first: dict[tuple[str, int, str], int] = field(default_factory=dict)

    def record(self, err: KafkaError | None, msg: Message) -> None:
        if err is None:
            return
        self.count += 1
        partition = msg.partition()
        where = (str(msg.topic()), -1 if partition is None else partition, f"{err.str()} ({err.name()})")
        if where in self.first or len(self.first) < _FIRST_ERRORS:
            self.first[where] = self.first.get(where, 0) + 1

    def reset(self) -> None:
        self.count = 0
        self.first = {}


@dataclass
class Worker:
    """The cached producer of one (client config, policy), and its task's error log."""

    producer: MuteProducer
    errors: ErrorLog
    policy: Policy
    events_seen: float = float("-inf")  # clock time of the newest mute event already reported by a task


_lock = threading.Lock()
_workers: dict[str, Worker] = {}
_said: set[str] = set()
_logging_configured = False


def worker_for(options: SinkOptions) -> Worker:
    """This process's producer for ``options``, built on first use."""
    key = options.cache_key
    with _lock:
        worker = _workers.get(key)
        if worker is None:
            worker = _workers[key] = _build(options)
        return worker


def discard(options: SinkOptions) -> None:
    """Drop (purge and close) the producer for ``options``: its task failed."""
    with _lock:
        worker = _workers.pop(options.cache_key, None)
    if worker is not None:
        try:
            worker.producer.purge()
            worker.producer.close(5.0)
        except Exception as err:  # a broken producer must not mask the task's own error
            log.warning("spark_producer_close_failed", error=repr(err))


def close_all(timeout_s: float = 10.0) -> None:
    """Close every cached producer (at worker exit)."""
    with _lock:
        workers = list(_workers.values())
        _workers.clear()
    for worker in workers:
        try:
            worker.producer.close(timeout_s)
        except Exception as err:
            log.warning("spark_producer_close_failed", error=repr(err))


atexit.register(close_all)


def _build(options: SinkOptions) -> Worker:
    policy = load_sink_policy(options.policy, options.client)
    _configure_logging(policy)
    errors = ErrorLog()
    config: dict[str, Any] = {**policy.client, "delivery.report.only.error": True, "on_delivery": errors.record}
    _executor_rack(config, policy)
    producer = MuteProducer(config, policy=policy, store=_store(policy))
    return Worker(producer, errors, policy)


def _executor_rack(config: dict[str, Any], policy: Policy) -> None:
    """Rack-aware partitioning on without ``kafka.client.rack``: this executor's own rack, from its environment
    (``MUTEPRO_CLIENT_RACK``, else the cloud zone variables, as the consumer helpers derive it), since executors of
    one job run in different zones and one rack set on the driver would be wrong for most of them."""
    if config.get("client.rack"):
        return
    wanted = str(config.get(RACK_AWARE_KEY, "false")).lower() == "true" or any(
        t.partitioner.rack_aware for t in (policy.defaults, *policy.topics.values())
    )
    if wanted:
        from mutepro.racks.follower import client_rack

        rack = client_rack()
        if rack is not None:
            config["client.rack"] = rack


def _store(policy: Policy) -> BreakerStore | None:
    """The policy's shared store; local state (said once per worker) when its Redis cannot be reached."""
    state = policy.state
    if state.backend != "redis":
        return None
    store = make_store(state.backend, state.url, state.key_prefix)
    try:
        store.read("spark-sink-probe")
    except Exception as err:
        if state.url not in _said:
            _said.add(state.url or "")
            log.warning(
                "spark_mute_state_local",
                reason=f"Redis unreachable: {err}",
                detail="mute state stays in this worker until it restarts; other executors decide on their own",
            )
        store.close()
        return MemoryStore()
    return store


def _configure_logging(policy: Policy) -> None:
    # A Python worker has no application to configure logging (mutepro is silent then, and a stalled run once
    # printed 58k per-message debug lines before that): the policy's logging section decides.
    global _logging_configured
    if _logging_configured or not _in_spark_task():
        return
    from mutepro.logs import configure_logging

    configure_logging(policy.logging.level, policy.logging.format)
    _logging_configured = True


def _in_spark_task() -> bool:
    try:
        from pyspark import TaskContext
    except ImportError:
        return False
    return TaskContext.get() is not None
