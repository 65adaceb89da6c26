"""MuteProducer: a drop-in ``confluent_kafka.Producer`` that mutes failing, slow and congested partitions.

This module is the facade: the confluent-kafka API. Its parts are built by :mod:`~mutepro.producer.assembly`;
the work is done by one module per concern (see docs/architecture.md "Module map" for the flow of one stalled
partition through them):

- :mod:`~mutepro.producer.routing`: where a message goes (dispatch to partition N | hold | fail);
- :mod:`~mutepro.producer.holds`: hold queues, their order barrier and releases, re-sends after ``BufferError``;
- :mod:`~mutepro.producer.rescue`: purge, drain and redispatch of a newly muted partition's queue;
- :mod:`~mutepro.producer.reports`: delivery reports -> partition tallies, probes, callbacks;
- :mod:`~mutepro.producer.driver`: the tick (detectors, breakers, rescue, releases) and metadata;
- :mod:`~mutepro.producer.threads`: the driver and metadata threads' loops; :mod:`~mutepro.producer.lifecycle`:
  flush(), close() and len(); :mod:`~mutepro.producer.api`: the pass-through and read-only API;
- :mod:`~mutepro.producer.core`: what they share, and the one way a message is handed to librdkafka.

``produce()``, ``poll()`` and ``flush()`` run in C (:mod:`mutepro.producer._fastpath`, the one implementation of
the per-message rules: docs/architecture.md "The per-message path"); the Python methods here take what the C
code hands over (explicit partitions, unknown topics, muted partitions, held keys, nested and closed calls).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from mutepro.mute.manager import DetectorFactory
from mutepro.mute.store import BreakerStore
from mutepro.partition.protocols import MutingPartitioner
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.effective import Policy
from mutepro.policy.schema import TopicPolicy
from mutepro.producer import compat, options
from mutepro.producer.api import ClientPassthrough, MuteproApi
from mutepro.producer.assembly import Arguments, Hooks, InnerFactory, assemble
from mutepro.producer.core import Clock, GatedLock, Later
from mutepro.producer.lifecycle import Lifecycle
from mutepro.producer.locality import RackSource
from mutepro.producer.message import DeliveryCallback
from mutepro.producer.metrics import register_prometheus
from mutepro.producer.slowpath import ClosedPath, SlowPath
from mutepro.producer.threads import ProducerThreads, start_threads

__all__ = ["InnerFactory", "MuteProducer", "Unbuilt"]


class Unbuilt:
    """What a MuteProducer whose ``__init__`` never ran (a subclass that skips ``super().__init__()``) reads:
    closed, like an uninitialised ``confluent_kafka.Producer``: every call raises
    ``RuntimeError("Producer has been closed")``. A base class of its own, so that MuteProducer's namespace holds
    only documented members (confluent-kafka's ``tests/test_docs.py`` checks each one, private ones included)."""

    _closed = True
    _user_on_delivery: Any = None
    _snapshots: Mapping[str, TopicSnapshot] = MappingProxyType({})
    _lock = GatedLock(Later("the C fast path"))
    _slow: SlowPath | ClosedPath = ClosedPath()
    _fast: Any = ClosedPath()


class MuteProducer(Unbuilt, Lifecycle, ProducerThreads, ClientPassthrough, MuteproApi):
    """A drop-in ``confluent_kafka.Producer`` that mutes bad partitions and sends around them.

    ``config`` is the same dict ``confluent_kafka.Producer`` takes (librdkafka's dotted keys, passed through
    untouched; the dict itself is never modified). mutepro's own settings come apart from it: ``policy`` is a
    :class:`~mutepro.policy.Policy` (``load_policy(...)``), a :class:`~mutepro.policy.TopicPolicy` for every
    topic, a path or mapping to load, or ``None`` for the defaults.

    Plug-in points (typed Protocols): ``partitioner`` (a :class:`~mutepro.partition.MutingPartitioner`, handed
    the mute manager through ``initialize``), ``detector_factory`` (``(topic, TopicPolicy) -> [PartitionDetector]``,
    e.g. ``lambda t, p: [*build_detectors(t, p), MyDetector()]``), ``store`` (a
    :class:`~mutepro.mute.store.BreakerStore` to share mute state), ``clock`` and ``tick_interval_s``.

    ``trace``: a file to record what the detection model sees and decides into (gzip JSON lines, see
    :mod:`mutepro.trace`; ``mutepro trace replay FILE`` shows what the model would decide on it, under any
    policy). Off by default: it costs ~20 us of CPU per busy partition per round (see :mod:`mutepro.trace.record`).

    ``accelerate``: retired. The C extension (``mutepro.producer._fastpath``) is the only per-message path;
    ``accelerate=True`` is accepted with a ``DeprecationWarning``, ``accelerate=False`` raises ``ConfigError``.

    For tests: ``_inner_factory`` builds the wrapped producer from the final librdkafka config (default:
    ``confluent_kafka.cimpl.Producer``; :class:`mutepro.testing.fakes.FakeInnerProducer` needs no broker), and
    ``_threads=False`` starts no driver or metadata thread (the test calls :meth:`_tick` / :meth:`_load_metadata`
    itself, with its own clock).
    """

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        policy: Policy | TopicPolicy | Mapping[str, Any] | str | os.PathLike[str] | None = None,
        clock: Clock = time.monotonic,
        partitioner: MutingPartitioner | str | None = None,
        store: BreakerStore | None = None,
        detector_factory: DetectorFactory | None = None,
        tick_interval_s: float = 0.05,
        name: str | None = None,
        accelerate: bool | None = None,
        _inner_factory: InnerFactory | None = None,
        _threads: bool = True,
        _rack_source: RackSource | None = None,
        trace: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> None:
        options.check_accelerate(accelerate)
        args = Arguments(
            config=config, kwargs=kwargs, policy=policy, clock=clock, partitioner=partitioner, store=store,
            detector_factory=detector_factory, tick_interval_s=tick_interval_s, name=name,
            inner_factory=_inner_factory, rack_source=_rack_source, trace=trace,
        )
        parts = assemble(args, _hooks(self))  # every part, built once (see mutepro.producer.assembly)
        vars(self).update(parts.attributes())  # the facade's attributes: Parts' fields, "_"-prefixed
        self._closed = False
        self._driver_error: BaseException | None = None
        vars(self).update(_c_calls(self))
        self._stop = threading.Event()
        if parts.collector is not None:
            register_prometheus(parts.collector, parts.prometheus_port)
        self._threads = start_threads(self, _threads)

    # -- the confluent_kafka.Producer API ----------------------------------------------------------------

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        on_delivery: DeliveryCallback | None = None,
        timestamp: int = 0,
        headers: Any = None,
        *,
        callback: DeliveryCallback | None = None,
    ) -> None:
        """Produce one message, like ``confluent_kafka.Producer.produce`` (same arguments, same exceptions).

        Raises ``BufferError`` when the local queue is full (or, under ``keyed_policy: hold``, when a muted
        partition's hold queue is full): serve delivery reports with ``poll()`` and retry, as usual.
        """
        self._fast.produce(topic, value, key, partition, on_delivery, timestamp, headers, callback=callback)

    def _produce_slow(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        on_delivery: DeliveryCallback | None = None,
        timestamp: int = 0,
        headers: Any = None,
        *,
        callback: DeliveryCallback | None = None,
    ) -> None:
        """What the C produce() hands over (explicit partitions, unknown topics, muted partitions, held keys, a
        raised gate, a closed producer): the :class:`~mutepro.producer.slowpath.SlowPath` under the lock."""
        cb = on_delivery or callback or self._user_on_delivery
        with self._lock:
            self._slow.produce(topic, value, key, partition, cb, timestamp, headers, self._snapshots.get(topic))
        # its inline report serving is the C produce()'s (FastPath inline_poll_every), which counts this message too

    @compat.surfaces_interrupts
    def poll(self, timeout: float = -1) -> int:
        """Serve queued delivery reports and callbacks; wait up to ``timeout`` s (-1: forever) for one.

        From inside a callback that a poll()/flush() of this producer is running on the same thread, it serves
        nothing and returns 0 at once: the enclosing call runs the next callbacks, in order. (The plain client
        aborts the process there; a nested serve per callback would recurse through the whole queue.)
        """
        if self._closed:
            raise compat.closed_error()
        compat.check_timeout(timeout)
        if self._driver_error is not None:  # checked inline: poll() is per message in the README loop
            self._raise_driver_error()
        if self._serving.nested():
            return 0
        return self._serving.poll(timeout)

    def purge(self, in_queue: bool = True, in_flight: bool = True, blocking: bool = True) -> None:
        """Purge messages like ``confluent_kafka.Producer.purge``; held messages are purged with ``in_queue``.

        Purged messages get a delivery report on the next poll: ``_PURGE_QUEUE`` for queued and held ones,
        ``_PURGE_INFLIGHT`` for those in flight.
        """
        if self._closed:
            raise compat.closed_error()
        with self._lock:
            self._rescuer.user_purge_at = self._clock()
            self._inner.purge(in_queue=in_queue, in_flight=in_flight, blocking=blocking)
            if in_queue:
                self._holding.fail_all(self._core.fail)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        """Cluster metadata from the wrapped producer, as ``confluent_kafka.Producer.list_topics``.

        Returns:
            A ``confluent_kafka.admin.ClusterMetadata``: every topic, or only ``topic``; waits up to ``timeout``
            seconds (-1: the client's ``socket.timeout.ms``).
        """
        return self._wrapped().list_topics(topic, timeout)

    def __bool__(self) -> bool:
        return True  # an empty producer is still a producer (len() would make it falsy)

    def _rescue_in_flight(self, slow_calls: float = 1.0, hedge_after_s: float | None = None) -> int | None:
        """mutepro's Spark sink only (its rows carry identity headers, so copies can be told apart): re-send what
        is stuck in flight to muted partitions once nothing else is outstanding; see Rescuer.rescue_in_flight.
        With ``hedge_after_s``, messages that alone have waited that long mute their brokers first and count as
        overdue from then on (Rescuer.mute_stragglers)."""
        if self._closed:
            raise compat.closed_error()
        now = self._clock()
        if hedge_after_s is not None:
            self._rescuer.mute_stragglers(now, hedge_after_s)
        return self._rescuer.rescue_in_flight(now, slow_calls, hedge_after_s)

    def _produce_rows(
        self, topic: str, values: list[Any], keys: list[Any] | None, fixed: tuple[str, Any] | None, name: str,
        prefix: str | bytes, first: int, begin: int = 0,
    ) -> int:
        """mutepro's Spark sink only: many rows with identity headers in one call, up to the first the queue has no
        room for, in C (``FastPath.produce_rows``: each row as MuteProducer's own produce() takes it, also on a
        subclass that overrides produce())."""
        return int(self._fast.produce_rows(topic, values, keys, fixed, name, prefix, first, begin))

    @property
    def _stragglers(self) -> int:
        """Diagnostics for tests: purge reports of a rescue that reached the producer after it."""
        return self._rescuer.stragglers


def _hooks(producer: MuteProducer) -> Hooks:
    """What the parts call on ``producer`` (see :class:`~mutepro.producer.assembly.Hooks`): MuteProducer's own
    produce/poll/flush/len, bound, whatever a subclass overrides (the C code hands its leftovers to these)."""
    return Hooks(
        slow_produce=MuteProducer._produce_slow.__get__(producer), slow_poll=MuteProducer.poll.__get__(producer),
        slow_flush=MuteProducer.flush.__get__(producer), pending=MuteProducer.__len__.__get__(producer),
        metrics=producer.metrics, outstanding=producer.outstanding, accumulated=producer.accumulated,
        in_flight=producer.in_flight, on_error=producer._on_error, on_stats=producer._on_stats,
        on_throttle=producer._on_throttle,
    )


def _c_calls(producer: MuteProducer) -> dict[str, Any]:
    """produce(), poll() and flush() straight into C on the instance (``FastPath.produce`` / ``.poll`` /
    ``.flush``), set while the producer builds itself. Why not the class's Python methods, forwarding: a Python
    frame per message, the one cost the C path exists to avoid -- produce() through MuteProducer.produce took
    1,351 ns a message against 1,119 straight into C (fake client, 2-core machine, best of 5 x 20,000). A
    subclass that overrides one keeps its own."""
    kind = type(producer)
    return {
        call: getattr(producer._fast, call)
        for call in ("produce", "poll", "flush")
        if getattr(kind, call) is getattr(MuteProducer, call)
    }
