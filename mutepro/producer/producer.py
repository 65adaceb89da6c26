"""MuteProducer: a drop-in ``confluent_kafka.Producer`` that mutes failing, slow and congested partitions.

This module is the facade: the confluent-kafka API and the wiring. The work is done by one module per concern
(see README "How it works" for the flow of one stalled partition through them):

- :mod:`~mutepro.producer.routing`: where a message goes (dispatch to partition N | hold | fail);
- :mod:`~mutepro.producer.holds`: hold queues, their order barrier and releases, re-sends after ``BufferError``;
- :mod:`~mutepro.producer.rescue`: purge, drain and redispatch of a newly muted partition's queue;
- :mod:`~mutepro.producer.reports`: delivery reports -> partition tallies, probes, callbacks;
- :mod:`~mutepro.producer.driver`: the tick (detectors, breakers, rescue, releases) and metadata;
- :mod:`~mutepro.producer.core`: what they share, and the one way a message is handed to librdkafka.

``produce()``, ``poll()`` and ``flush()`` run in C (:mod:`mutepro.producer._fastpath`, the one implementation of
the per-message rules: docs/architecture.md "The per-message path"); the Python methods here take what the C
code hands over (explicit partitions, unknown topics, muted partitions, held keys, nested and closed calls).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import confluent_kafka

from mutepro.errors import MuteproError
from mutepro.logs import apply_policy_logging, get_logger
from mutepro.mute.factory import build_detectors
from mutepro.mute.manager import DetectorFactory, MuteEvent, ProducerMuteManager
from mutepro.mute.store import BreakerStore, MemoryStore
from mutepro.partition.protocols import DefaultMutingPartitioner, HomePartitioner, MutingPartitioner
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.effective import Policy
from mutepro.policy.schema import TopicPolicy
from mutepro.producer import compat, options
from mutepro.producer.api import ClientPassthrough, MuteproApi
from mutepro.producer.core import Clock, Core, GatedLock
from mutepro.producer.driver import METADATA_RETRY_S, Driver
from mutepro.producer.holds import HoldQueues
from mutepro.producer.locality import AdminRackSource, LocalityMeter, RackSource
from mutepro.producer.message import DeliveryCallback
from mutepro.producer.metrics import MuteproCollector, ProducerCounters, register_prometheus, unregister_prometheus
from mutepro.producer.pacing import IDLE_ROUND_S, release
from mutepro.producer.reports import ReportHandler
from mutepro.producer.rescue import Rescuer
from mutepro.producer.routing import Router
from mutepro.producer.serving import DirectServing, build_fast_path
from mutepro.producer.slowpath import ClosedPath, SlowPath
from mutepro.producer.tracker import OutstandingTracker
from mutepro.trace.record import TraceRecorder

log = get_logger("mutepro.producer")

#: ``(config) -> the wrapped producer``: confluent_kafka's C class by default, a fake in unit tests.
InnerFactory = Callable[[dict[str, Any]], Any]

#: Python's produce() (what C hands over) serves delivery reports inline every this many messages (see
#: _serve_reports); C's own produce() every 1,024 (FastPath inline_poll_every).
_INLINE_POLL_EVERY = 256
#: flush() waits for reports this long at a time, then counts what is left (a report arriving ends the wait at
#: once): librdkafka's own flush re-checks every 10 ms, so the plain client wakes as often. Each wake costs
#: CPU (~40-60 us on the 2-core test machine after 10 ms asleep): 5 ms cost 2x the plain client's flush(1.0).
_FLUSH_RECHECK_S = 0.01
#: librdkafka waits whole milliseconds (confluent-kafka truncates: a wait of 0.9 ms is a poll(0))
_MIN_WAIT_S = 0.001


class Unbuilt:
    """What a MuteProducer whose ``__init__`` never ran (a subclass that skips ``super().__init__()``) reads:
    closed, like an uninitialised ``confluent_kafka.Producer``: every call raises
    ``RuntimeError("Producer has been closed")``. A base class of its own, so that MuteProducer's namespace holds
    only documented members (confluent-kafka's ``tests/test_docs.py`` checks each one, private ones included)."""

    _closed = True
    _user_on_delivery: Any = None
    _snapshots: Mapping[str, TopicSnapshot] = MappingProxyType({})
    _lock = GatedLock()
    _slow: SlowPath | ClosedPath = ClosedPath()
    _fast: Any = ClosedPath()


class MuteProducer(Unbuilt, ClientPassthrough, MuteproApi):
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
        conf = compat.config_from_args(config, kwargs)  # a copy: the caller's dict is never touched
        if isinstance(partitioner, str):  # Producer(conf, partitioner="murmur2"): librdkafka's setting, not ours
            conf["partitioner"], partitioner = partitioner, None
        options.refuse_mutepro_keys(conf)
        self._policy = options.coerce_policy(policy)
        client_rack, rack_aware_all = options.rack_awareness(conf, self._policy)
        apply_policy_logging(self._policy)  # the policy's logging: section, if it has one (see mutepro.logs)
        self._clock = clock
        options.check_tick(tick_interval_s)
        self._tick_s = tick_interval_s
        self.name = name or f"mutepro-{next(_ids)}"

        users = options.UserCallbacks(conf)
        self._user_on_delivery: DeliveryCallback | None = users.on_delivery
        self._only_errors = users.only_errors
        if "statistics.interval.ms" not in conf:
            conf["statistics.interval.ms"] = 1000  # broker-level detection reads librdkafka's statistics
        conf.setdefault("error_cb", self._on_error)
        conf.setdefault("stats_cb", self._on_stats)
        conf.setdefault("throttle_cb", self._on_throttle)
        # First, so that every setting librdkafka refuses raises what the real client raises (KafkaException
        # _INVALID_ARG naming the property, TypeError for a bad callback); only then mutepro's own checks. The C
        # class itself, not the name confluent_kafka.Producer: a test run (mutepro.testing.dropin) or an
        # application may point that name at MuteProducer.
        self._inner = (_inner_factory or confluent_kafka.cimpl.Producer)(conf)

        self._policy = compat.adapt_slow_call(self._policy, compat.message_timeout_ms(conf))
        transactional = "transactional.id" in conf
        self._partitioner_name = str(conf.get("partitioner", "consistent_random"))
        self._partitioner = partitioner or options.default_partitioner(conf, self._policy_for(""))
        self._home_of = self._partitioner.home_partition if isinstance(self._partitioner, HomePartitioner) else None

        self._tracker = OutstandingTracker(
            options.setting(conf, "queue.buffering.max.messages"),
            options.setting(conf, "queue.buffering.max.kbytes") * 1024,
        )
        self._totals = self._tracker.totals
        self.counters = ProducerCounters(self._totals)
        breakers = store if store is not None else options.store_of(self._policy)
        # A store this producer alone writes (none given, or the policy's "memory") changes only in its own
        # rounds: a parked driver sleeps until the next send. Another store may be written by other producers:
        # an idle round each IDLE_ROUND_S adopts their mutes before the next message goes out (see pacing).
        private = store is None and (breakers is None or isinstance(breakers, MemoryStore))
        self._idle_round_s = None if private else IDLE_ROUND_S
        self._manager = ProducerMuteManager(
            self._policy_for, clock=clock, store=breakers,
            on_event=self._on_mute_event,
            detector_factory=detector_factory or build_detectors, client_rack=client_rack,
            rack_aware_all=rack_aware_all,
        )
        self._manager.bind_counts(self.outstanding, self.accumulated, self.in_flight)
        self._partitioner.initialize(self._manager)
        self._snapshots = self._manager.snapshots
        default = self._partitioner if type(self._partitioner) is DefaultMutingPartitioner else None
        self._sticky = options.sticky_chooser(default, self._partitioner_name)

        # the parts (one module each, see the module docstring), sharing one Core
        core = self._core = Core(
            inner=self._inner, clock=clock, tracker=self._tracker, counters=self.counters, manager=self._manager,
            policy_for=self._policy_for, only_errors=self._only_errors,
        )
        self._callbacks = core.callbacks
        self._lock = core.lock
        self._pacer = core.pacer
        self._holding = HoldQueues(core)
        self._holds = self._holding.queues  # shared with the C fast path: "anything held?" per message
        self._router = Router(
            self._partitioner, self._home_of, self._sticky, probing=self._manager.probing,
            grant=self._grant_probe, keyed_policy=lambda t: self._policy_for(t).keyed_policy,
            reason=self._mute_reason,
        )
        self._rescuer = Rescuer(
            core, self._router, self._holding, idempotent=options.is_idempotent(conf), transactional=transactional,
        )
        self._slow = SlowPath(core, self._router, self._holding)
        self._reports = ReportHandler(core, self._rescuer)
        core.make_reporter = self._reports.make_reporter
        self._reporters = core.reporters
        self._flush_pause_s = min(_FLUSH_RECHECK_S, tick_interval_s / 2)
        self._since_poll = 0
        self._closed = False
        self._driver_error: BaseException | None = None

        self._collector: MuteproCollector | None = None
        metrics = self._policy.metrics if isinstance(self._policy, Policy) else None
        if metrics is not None and metrics.prometheus_port is not None:
            self._collector = MuteproCollector(self.name, self.metrics, metrics.namespace)
            register_prometheus(self._collector, metrics.prometheus_port)

        # The hot path: produce() in C, callbacks run straight from the application's poll (see
        # mutepro.producer.serving); what C hands over comes back to the Python methods below.
        self._fast = build_fast_path(
            inner=self._inner, snapshots=self._snapshots, tracker=self._tracker, holds=self._holds,
            slow_produce=MuteProducer._produce_slow.__get__(self), on_report=self._reports.on_report,
            callbacks=self._callbacks, default_cb=self._user_on_delivery, only_errors=self._only_errors,
            default=default, sticky=self._sticky is not None, partitioner_name=self._partitioner_name,
            inline_poll_every=1024, reroutes=core.reroutes,
        )
        self._lock.fast = self._fast
        core.fast = self._fast
        self._pacer.fast = self._fast
        self._serving: DirectServing = DirectServing(self._fast, self._inner.poll, self._callbacks)
        if type(self).produce is MuteProducer.produce:  # a subclass overriding produce() keeps its own
            self.produce = self._fast.produce  # type: ignore[method-assign]
        # poll(0) in C too (FastPath.poll); every other call, and a subclass's own poll, stays in Python
        self._fast.slow_poll = MuteProducer.poll.__get__(self)
        self._fast.poll_error = compat.LOST_INTERRUPT_CONVERTER
        if type(self).poll is MuteProducer.poll:
            self.poll = self._fast.poll  # type: ignore[method-assign]
        # flush() likewise waits in C, in the wrapped producer's own flush (FastPath.flush)
        self._fast.slow_flush = MuteProducer.flush.__get__(self)
        self._fast.pending = MuteProducer.__len__.__get__(self)
        self._fast.resends = self._holding.retry
        self._fast.inner_flush = self._inner.flush
        if type(self).flush is MuteProducer.flush:
            self.flush = self._fast.flush  # type: ignore[method-assign]
        self._rescuer.serving = self._serving
        self._locality = LocalityMeter() if client_rack is not None else None
        self._driver_part = Driver(
            core, self._holding, self._rescuer, self._serving, name=self.name,
            user_stats_cb=users.stats_cb, user_error_cb=users.error_cb, user_throttle_cb=users.throttle_cb,
            racks=None if client_rack is None else (_rack_source or AdminRackSource(conf)), locality=self._locality,
            recorder=None if trace is None else TraceRecorder(trace, conf, clock=clock),
        )

        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        if _threads:
            # The threads see the producer through a weak proxy: an application that drops a producer without
            # close() gets it collected, its threads ended and the wrapped handle destroyed, as with the plain
            # client.
            me = weakref.proxy(self)
            for loop, role in ((MuteProducer._drive, "driver"), (MuteProducer._metadata_loop, "metadata")):
                thread = threading.Thread(
                    target=_while_alive, args=(loop, me), name=f"{self.name}-{role}", daemon=True
                )
                thread.start()
                self._threads.append(thread)
            # the metadata thread sleeps until a refresh is due, the driver while idle: wake them when the producer
            # goes, so they end now
            weakref.finalize(self, self._core.metadata_wanted.set)
            weakref.finalize(self, release, self._pacer.gate)

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
            self._since_poll += 1
            if self._since_poll >= _INLINE_POLL_EVERY:
                self._serve_reports()

    def _serve_reports(self) -> None:
        """Serve librdkafka's delivery reports on this thread (producer lock held).

        Why on the producing thread: confluent-kafka drops and retakes the GIL around every report callback. On
        a second thread that means a GIL hand-over per message while the application is busy producing, which
        cost ~10 us a message here — more than the message itself. Served inline every few hundred messages (and
        from poll()/flush()), reports cost what they cost the plain client; the driver thread serves them once per
        tick before judging the partitions, so muting never waits for the application.
        """
        self._since_poll = 0
        self._inner.poll(0)

    def _grant_probe(self, topic: str, partition: int) -> bool:
        """Whether a message may go to a muted partition now as its probe (one at a time, see the mute manager's
        ``try_probe``): True grants it."""
        return self._manager.try_probe(topic, partition)

    def _mute_reason(self, topic: str, partition: int) -> str | None:
        """Why ``topic``'s ``partition`` is muted, as the mute manager's state says it: None when it is not."""
        reason: str | None = self._manager.state()["topics"].get(topic, {}).get(partition, {}).get("reason")
        return reason

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

    @compat.surfaces_interrupts
    def flush(self, timeout: float = -1) -> int:
        """Wait until every message (held ones too) has its final report and its callback ran; returns how many
        are still outstanding when ``timeout`` (-1: forever) runs out."""
        if self._closed:
            raise compat.closed_error()
        compat.check_timeout(timeout)
        deadline = None if timeout < 0 else time.monotonic() + timeout
        if self._serving.nested():
            # Called from a callback that this thread's poll()/flush() is running: the reports still to come are
            # delivered by that enclosing call after the callback returns, so waiting here could never end.
            # Report what is left, like flush(0). (The plain client aborts the process here.)
            return len(self)
        self._raise_driver_error()
        self._serving.flush_round()
        remaining = len(self)
        if remaining == 0:
            return 0
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return remaining
            # never less than librdkafka's millisecond (less would be a poll(0) spin until the deadline)
            pause = self._flush_pause_s if left is None else max(_MIN_WAIT_S, min(self._flush_pause_s, left))
            self._serving.flush_wait(pause)
            self._raise_driver_error()
            remaining = len(self)
            if remaining == 0:
                return 0

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

    def __len__(self) -> int:
        """Messages not yet fully handled: outstanding in librdkafka, held, awaiting re-send, or whose callback
        has not run yet (like ``len(confluent_kafka.Producer)``); 0 once closed."""
        if self._closed:
            return 0
        return self._tracker.total + len(self._holding) + self._rescuer.in_hand + len(self._callbacks)

    def __bool__(self) -> bool:
        return True  # an empty producer is still a producer (len() would make it falsy)

    def close(self, timeout: float | None = None, *_ignored: object, **_ignored_kw: object) -> bool:
        """Deliver what is still outstanding, stop mutepro's threads and destroy the wrapped producer; returns
        True, like ``confluent_kafka.Producer.close()``. Afterwards produce/poll/flush/purge and the transaction
        calls raise ``RuntimeError("Producer has been closed")`` and ``len()`` is 0, as with the real client.

        Like the real client it waits for every message (up to its ``message.timeout.ms``); ``timeout`` (s)
        bounds that wait instead: what is left then is purged (its callbacks run here, with ``_PURGE_QUEUE``)
        and a ``RuntimeWarning`` says how many. A callback's exception propagates, the producer closed anyway.
        The real client's ``close()`` accepts and ignores any arguments (confluent-kafka 2.16: ``close(5)``,
        ``close("x")``, ``close(1, 2)``, ``close(foo=1)`` all return True); so does this one, beyond a
        ``timeout`` that is a number or None (any other ``timeout`` waits as the real client does).
        """
        if self._closed:
            return True
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            timeout = None  # close(True), close("x"): ignored, as by the real client
        failed = True
        try:
            self.flush(-1 if timeout is None else timeout)
            failed = False
        finally:
            self._shut_down(warn=not failed)
        return True

    def _shut_down(self, warn: bool) -> None:
        """The second half of :meth:`close`: purge what is left, stop the threads, destroy the wrapped producer and
        run the last callbacks. ``warn``: say with a ``RuntimeWarning`` how many messages were purged (False when
        the flush raised: that exception already tells the application)."""
        left = len(self)
        if left:
            # so that destroying the wrapped producer cannot wait any longer (its close() flushes forever)
            self.purge(in_queue=True, in_flight=True, blocking=True)
        self._closed = self._slow.closed = True
        self._serving.closing()
        self._stop.set()
        self._pacer.wake()  # the driver may be parked
        self._core.metadata_wanted.set()  # the metadata thread may be asleep until its next refresh
        for thread in self._threads:
            thread.join(5)
        self._driver_part.close()
        self._inner.close()  # serves the last reports (purged ones) into the callback queue
        if self._collector is not None:
            unregister_prometheus(self._collector)
        # The report closures refer back to this producer; dropping them lets the wrapped librdkafka handle (and
        # its connections and log lines) go as soon as the application drops the producer.
        self._reporters.clear()
        self._last_reporter = None
        self._serving.closed()
        if left and warn:
            warnings.warn(
                f"Producer flush failed during close: {left} messages still undelivered after the close timeout "
                "were purged", RuntimeWarning, stacklevel=3,
            )
        self._callbacks.serve(0)  # the application's callbacks for the last reports, as the real close() runs

    def _policy_for(self, topic: str) -> TopicPolicy:
        """The policy of ``topic``: its entry in the :class:`~mutepro.policy.Policy` (the defaults for ``""``), or
        the one TopicPolicy the producer was given for every topic."""
        policy = self._policy
        if isinstance(policy, Policy):
            return policy.for_topic(topic) if topic else policy.defaults
        return policy

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
        prefix: str, first: int, begin: int = 0,
    ) -> int:
        """mutepro's Spark sink only: many rows with identity headers in one call, up to the first the queue has no
        room for, in C (``FastPath.produce_rows``: each row as MuteProducer's own produce() takes it, also on a
        subclass that overrides produce())."""
        return int(self._fast.produce_rows(topic, values, keys, fixed, name, prefix, first, begin))

    @property
    def _stragglers(self) -> int:
        """Diagnostics for tests: purge reports of a rescue that reached the producer after it."""
        return self._rescuer.stragglers

    # -- the threads (each on a weak proxy of the producer; see __init__) ----------------------------------

    def _drive(self) -> None:
        """The driver thread's loop: one :meth:`_tick` every ``tick_interval_s`` until close, or parked while idle
        (see :mod:`mutepro.producer.pacing`). An exception ends the loop and is kept for the application: its next
        poll()/flush() raises it (see :meth:`_driver_failed`)."""
        # Only the pacer's gate is held here across sleeps: this thread sees the producer through a weak proxy,
        # and a local naming any part that leads back to it (the pacer: the C fast path) would keep it alive.
        gate = self._pacer.gate
        next_tick = 0.0
        try:
            while not self._stop.is_set():
                # Reports are normally served by the producing thread (see _serve_reports); the driver serves
                # them once per tick, right before judging the partitions, so an idle or blocked application
                # never delays a mute by more than one tick. With nothing to judge it parks (see pacing).
                now = self._clock()
                parked = False
                if now >= next_tick:
                    next_tick = now + self._tick_s
                    self._tick(now)
                    if self._driver_part.quiet:
                        self._pacer.park()
                        parked = self._driver_part.idle()
                        if not parked:
                            self._pacer.unpark()
                if parked:
                    # -1: until a send, a mute by hand or close()
                    gate.acquire(timeout=-1 if self._idle_round_s is None else self._idle_round_s)
                    self._pacer.unpark()
                    next_tick = 0.0  # woken by a send (its round dates it), or the idle round is due
                else:
                    gate.acquire(timeout=max(0.001, next_tick - self._clock()))
        except BaseException as err:  # surfaced to the application on its next poll/flush
            self._driver_failed(err)
            log.error("driver_thread_failed", producer=self.name, error=repr(err))
            self._callbacks.wake()

    def _driver_failed(self, err: BaseException) -> None:
        """Keep a driver or metadata thread's exception ``err`` for the application, and make the C fast path's
        poll(0) hand over to Python, which raises it (see :meth:`_raise_driver_error`)."""
        self._driver_error = err
        if self._fast is not None:
            self._fast.broken = 1  # the C poll(0) leaves the call to Python, which raises it

    def _raise_driver_error(self) -> None:
        """Raise a MuteproError for the exception a producer thread failed with, if one did: the application
        learns of it on its next poll()/flush() instead of muting silently stopping."""
        if self._driver_error is not None:
            raise MuteproError(f"the MuteProducer driver thread failed: {self._driver_error!r}") from self._driver_error

    def _metadata_loop(self) -> None:
        """Load and refresh topic metadata on its own thread: list_topics() blocks up to its timeout (a stalled
        broker makes it wait), and the driver thread must not stop judging partitions meanwhile. Between rounds
        it sleeps until the next one has work or :meth:`Core.want_metadata` (or close) wakes it."""
        wanted = self._core.metadata_wanted
        try:
            idle = METADATA_RETRY_S
            while not self._stop.is_set():
                wanted.wait(idle)
                wanted.clear()  # before the round: a topic wanted during it wakes the next wait at once
                if self._stop.is_set():
                    return
                idle = self._load_metadata(self._clock())
        except BaseException as err:  # surfaced to the application on its next poll/flush
            self._driver_failed(err)

    def _tick(self, now: float) -> None:
        """One driver round (see :class:`~mutepro.producer.driver.Driver`)."""
        self._driver_part.tick(now)

    def _load_metadata(self, now: float) -> float:
        """One metadata round at ``now`` (see :class:`~mutepro.producer.driver.Driver`).

        Returns:
            Seconds until the next round is due.
        """
        return self._driver_part.load_metadata(now)

    # -- librdkafka's callbacks (handed to the wrapped producer before the parts exist) --------------------

    def _on_stats(self, raw: str) -> None:
        """librdkafka's ``stats_cb``: the JSON statistics ``raw`` go to the driver, which reads each partition's
        leader from them and queues them for the application's own ``stats_cb``, if it set one."""
        self._driver_part.on_stats(raw)

    def _on_error(self, err: Any) -> None:
        """librdkafka's ``error_cb``: the client-level ``KafkaError`` ``err`` goes to the driver, which logs it and
        queues it for the application's own ``error_cb``, if it set one."""
        self._driver_part.on_error(err)

    def _on_throttle(self, event: Any) -> None:
        """librdkafka's ``throttle_cb``: a broker's ``ThrottleEvent`` goes to the driver, which queues it for the
        application's own ``throttle_cb``, if it set one."""
        self._driver_part.on_throttle(event)

    def _on_mute_event(self, event: MuteEvent) -> None:
        """The mute manager's listener: a mute or unmute ``event`` goes to the driver (its log and the trace) and
        to the producer's counters; a mute by hand while the driver is parked wakes it (its rescue is due)."""
        driver = self.__dict__.get("_driver_part")  # None while the manager is being built
        if driver is not None:
            driver.note_event(event)
        pacer = self.__dict__.get("_pacer")
        if pacer is not None and pacer.parked:
            pacer.wake()
        if event.kind.muted:
            self.counters.mutes += 1
        elif event.kind == "unmute":
            self.counters.unmutes += 1


def _while_alive(loop: Callable[[Any], None], producer: Any) -> None:
    """Run a producer thread's loop on a weak proxy; it ends once the producer was garbage collected."""
    with contextlib.suppress(ReferenceError):
        loop(producer)


_ids = itertools.count(1)
