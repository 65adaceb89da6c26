"""``mutepro.aio.AIOProducer``: confluent-kafka's asyncio producer over a :class:`~mutepro.MuteProducer`.

confluent-kafka's ``AIOProducer`` builds its own ``confluent_kafka.Producer(conf)`` inside ``__init__``, so the
only ways to give it a MuteProducer are monkey-patching that module-level name (which would change every other
AIOProducer in the process too) or a subclass that builds the parts itself. This is the subclass: its
``__init__`` assembles confluent-kafka's own orchestration classes (``ProducerBatchExecutor``, the batch buffer,
``BufferTimeoutManager``) around an inner producer made by an overridable factory; every other method --
``produce``, ``flush``, ``poll``, ``purge``, ``__len__``, transactions, ``list_topics``, ``cluster_id`` -- is
confluent-kafka's, inherited unchanged.

The batch path keeps muting: ``ProducerBatchExecutor`` calls ``produce_batch`` on the inner producer, and
``MuteProducer.produce_batch`` routes every message through ``MuteProducer.produce`` with its own callback (so a
message may be rerouted, held or rescued like any other), recording a refused one as ``_error`` the way the
executor expects. Nothing had to change at that layer; what did change is where the callbacks resolve their
futures (see :mod:`mutepro.aio.batching`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka.aio import AIOProducer as _ConfluentAIOProducer
from confluent_kafka.aio import _common
from confluent_kafka.aio.producer._buffer_timeout_manager import BufferTimeoutManager
from confluent_kafka.aio.producer._kafka_batch_executor import ProducerBatchExecutor

from mutepro.aio.batching import LoopSafeBatchManager
from mutepro.producer import MuteProducer

# The parts AIOProducer assembles, confluent-kafka's own re-exported with mutepro's: benchmarks/conformance.py runs
# confluent-kafka's tests of each against what mutepro.aio uses, imported from here.
__all__ = ["AIOProducer", "BufferTimeoutManager", "LoopSafeBatchManager", "ProducerBatchExecutor", "ProducerFactory"]


#: Builds the inner producer: ``factory(config, **mute_options)``, where ``config`` is a private copy of the
#: librdkafka config (its ``error_cb``/``stats_cb``/``throttle_cb``/``logger`` already wrapped for the event loop) and
#: ``mute_options`` are the keyword arguments :class:`AIOProducer` did not take itself (``policy=``, ``store=``, ...).
#: :class:`~mutepro.MuteProducer` is one; so is ``functools.partial(MuteProducer, _inner_factory=fake.factory,
#: _threads=False)`` in a test. (A plain callable type: MuteProducer's typed keyword arguments match no narrower one.)
ProducerFactory = Callable[..., Any]


class AIOProducer(_ConfluentAIOProducer):
    """confluent-kafka's ``AIOProducer`` (same constructor arguments, same methods, an instance of it) whose
    inner producer is a :class:`~mutepro.MuteProducer`, so muted partitions are routed around for asyncio code.

    ``await producer.produce(topic, value, key, partition=..., timestamp=...)`` buffers the message and returns
    an ``asyncio.Future``; the buffer goes to the MuteProducer in batches (``batch_size`` messages, or after
    ``buffer_timeout`` s of inactivity, or on ``flush()``), on ``executor`` (a ``ThreadPoolExecutor`` of
    ``max_workers`` when not given). The future resolves to the delivered ``Message`` -- wherever MuteProducer
    finally placed it: its home partition, a partition it was rerouted to, or a re-send after a hold or a rescue
    (``msg.partition()``/``msg.offset()`` say where it landed) -- or fails with ``KafkaException`` carrying the
    final ``KafkaError`` (``_MSG_TIMED_OUT``, ``_PURGE_QUEUE``, ``_QUEUE_FULL`` when the local queue or a hold
    queue is full, ...). Like confluent-kafka's, futures resolve when the producer is polled: after each batch,
    in ``flush()``/``poll()``, and by the buffer-timeout task (every ``buffer_timeout`` s or so when idle).

    Args:
        producer_conf: the librdkafka config, as for ``confluent_kafka.Producer``. Never modified: the callbacks
            are wrapped in a copy (``error_cb``, ``stats_cb`` and ``throttle_cb`` must be coroutine functions, as
            with confluent-kafka's AIOProducer).
        max_workers, executor, batch_size, buffer_timeout: as confluent-kafka's ``AIOProducer``.
        producer_factory: builds the inner producer (see :data:`ProducerFactory`); ``None`` means
            ``mutepro.aio.producer.MuteProducer``, looked up when the producer is built (the one name to patch to
            intercept construction, like ``confluent_kafka.Producer`` for confluent-kafka's class).
        **mute_options: MuteProducer's keyword arguments (``policy=``, ``store=``, ``partitioner=``, ...), passed
            to ``producer_factory``.

    ``close()`` (or leaving ``async with``) flushes everything, held messages included, then closes the
    MuteProducer: its threads stop and its librdkafka handle is destroyed.
    """

    def __init__(
        self,
        producer_conf: Mapping[str, Any],
        max_workers: int = 4,
        executor: concurrent.futures.Executor | None = None,
        batch_size: int = 1000,
        buffer_timeout: float = 1.0,
        *,
        producer_factory: ProducerFactory | None = None,
        **mute_options: Any,
    ) -> None:
        # Not super().__init__(): it would build a confluent_kafka.Producer. The same parts, in the same order and
        # under the same attribute names, so that every inherited method finds what it uses.
        owns_executor = executor is None
        self.executor = executor if executor is not None else concurrent.futures.ThreadPoolExecutor(max_workers)
        self._loop = asyncio.get_running_loop()
        self._producer_closed = False
        conf = dict(producer_conf)  # confluent-kafka's class wraps the callbacks in the caller's own dict
        _common.wrap_common_callbacks(self._loop, conf)
        factory: ProducerFactory = producer_factory if producer_factory is not None else MuteProducer
        try:
            self._producer = factory(conf, **mute_options)
        except BaseException:
            if owns_executor:  # nothing else will ever shut the threads of a producer that was never built
                self.executor.shutdown(wait=False)
            raise
        self._batch_size = batch_size
        self._is_closed = False
        self._kafka_executor = ProducerBatchExecutor(self._producer, self.executor)
        self._batch_processor = LoopSafeBatchManager(self._kafka_executor)
        self._buffer_timeout_manager = BufferTimeoutManager(self._batch_processor, self._kafka_executor, buffer_timeout)
        if buffer_timeout > 0:
            self._buffer_timeout_manager.start_timeout_monitoring()

    @property
    def mute_producer(self) -> Any:
        """The inner producer (a :class:`~mutepro.MuteProducer` unless ``producer_factory`` built another): its
        ``mute_manager``, ``metrics()``, ``held()``, ``counters``. Call its blocking methods from an executor,
        not from the event loop."""
        return self._producer

    async def close(self) -> None:
        """Flush every buffered and outstanding message (held ones included) and wait for their futures, stop the
        buffer-timeout task and the executor (confluent-kafka's ``close()``), then close the MuteProducer. A
        second call does nothing."""
        if self._producer_closed:
            return
        await super().close()
        # confluent-kafka's close() leaves its producer to the garbage collector; a MuteProducer has threads of its
        # own, so it is closed here, everything having been delivered. Not on self.executor: that is shut down.
        await asyncio.get_running_loop().run_in_executor(None, self._producer.close)
        self._producer_closed = True
