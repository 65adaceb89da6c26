"""MuteProducer: a drop-in ``confluent_kafka.Producer`` that mutes failing, slow and congested partitions.

How one message travels (see README "How it works"):

1. ``produce()`` reads the topic's immutable :class:`~mutepro.partition.snapshot.TopicSnapshot` (no lock) and
   picks the partition: explicit ``partition=`` as given; keyed -> librdkafka's own hash (identical placement),
   then the topic's keyed policy if that partition is muted; unkeyed -> sticky over writable partitions,
   weighted away from partitions that are filling up.
2. The message is handed to the wrapped ``confluent_kafka.Producer`` with a per-message envelope as its
   delivery callback, and counted as outstanding for its partition.
3. A driver thread polls the wrapped producer continuously: delivery reports feed the partition's detectors;
   every tick (50 ms) the mute manager checks each partition's load (the age of its oldest undelivered message
   too, since a stalled broker reports nothing), trips breakers, and publishes new snapshots.
4. When a partition is muted, the messages still queued in librdkafka are purged and re-sent: to a writable
   partition (unkeyed, keyed ``reroute``), into the hold queue (keyed ``hold``), failed (keyed ``fail``) or to
   the same partition (messages of healthy partitions, explicit partitions, keyed ``ignore``), in their
   original order, while producing threads wait on the producer lock.
5. The application's callbacks are queued and run from its own ``poll()``/``flush()``, as with confluent-kafka.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import threading
import time
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, Message

from mutepro.detect.errors import counts_against_partition
from mutepro.detect.stats import StatsParseError, StatsSnapshot, parse_stats
from mutepro.errors import ConfigError
from mutepro.logs import apply_policy_logging, get_logger
from mutepro.mute.factory import build_detectors
from mutepro.mute.manager import DetectorFactory, MuteEvent, ProducerMuteManager
from mutepro.mute.store import BreakerStore, make_store
from mutepro.partition.protocols import DefaultMutingPartitioner, MutingPartitioner
from mutepro.partition.reroute import reroute_partition
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.partition.sticky import linger_from_config
from mutepro.policy.effective import Policy
from mutepro.policy.schema import KeyedPolicy, TopicPolicy
from mutepro.producer import accel, compat
from mutepro.producer.callbacks import CallbackQueue
from mutepro.producer.metrics import MuteproCollector, ProducerCounters, register_prometheus, unregister_prometheus
from mutepro.producer.tracker import UNASSIGNED, OutstandingTracker

log = get_logger("mutepro.producer")

Clock = Callable[[], float]
DeliveryCallback = Callable[[KafkaError | None, Message], None]

_LIBRDKAFKA_DEFAULTS = {
    "queue.buffering.max.messages": 100_000,
    "queue.buffering.max.kbytes": 1_048_576,
    "message.timeout.ms": 300_000,
}
#: Final errors after which an unkeyed (or keyed ``reroute``) message is re-sent to another partition.
_RESCUABLE = frozenset({KafkaError._MSG_TIMED_OUT, KafkaError._TIMED_OUT})
_PURGED = frozenset({KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT})
_METADATA_REFRESH_S = 10.0
_METADATA_POLL_S = 0.05
_WEIGHTS_REFRESH_S = 0.1
#: The producing thread serves delivery reports inline every this many messages (see _serve_reports).
_INLINE_POLL_EVERY = 256


# What a message's delivery report must know, folded into the report callback (one cached closure per user
# callback and kind, so the hot path allocates nothing per message).
NORMAL = 0
EXPLICIT = 1  # partition= given by the application: never moved
UNCOUNTED = 2  # not in a partition tally (partitioned by librdkafka, or sent before the topic's metadata)
PROBE = 4  # a probe of a half-open partition
RESCUED = 8  # re-sent by a rescue already: not rescued again after a timeout
_REPORTER_CACHE = 512
_DIRECT_WAIT_S = 0.2  # a blocking poll() waits in librdkafka this long at a time (then checks the queue again)
_RESCUE_QUIET_S = 1.0
_RESCUE_DRAIN_S = 0.025  # a rescue waits at most this long for other threads to leave librdkafka's poll
# the built-in partitioner settings the C fast path places keyed messages for (others: the Python path)
_KEY_MODES = {
    "consistent": "KP_CONSISTENT",
    "consistent_random": "KP_CONSISTENT_RANDOM",
    "murmur2": "KP_MURMUR2",
    "murmur2_random": "KP_MURMUR2_RANDOM",
    "fnv1a": "KP_FNV1A",
    "fnv1a_random": "KP_FNV1A_RANDOM",
}


class _GatedLock:
    """The producer lock. While it is held, the C fast path's ``gate`` is raised, so a produce() on another
    thread takes the Python path (and waits for the lock there) instead of counting while Python code is in
    the middle of reading or changing the same counters."""

    __slots__ = ("_lock", "fast")

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.fast: Any = None

    def __enter__(self) -> None:
        self._lock.acquire()
        if self.fast is not None:
            self.fast.gate += 1

    def __exit__(self, *exc: object) -> None:
        if self.fast is not None:
            self.fast.gate -= 1
        self._lock.release()


class _Held:
    """A keyed message kept by ``keyed_policy: hold`` (the slow path: only while its partition is muted)."""

    __slots__ = ("callback", "enqueued", "headers", "key", "purged", "timestamp", "topic", "value")

    def __init__(
        self, topic: str, value: Any, key: Any, headers: Any, timestamp: int, callback: Any,
        enqueued: float | None = None, purged: bool = False,
    ) -> None:
        self.topic = topic
        self.value = value
        self.key = key
        self.headers = headers
        self.timestamp = timestamp
        self.callback = callback
        # when the application produced it (time.monotonic): a hold queue is kept in this order
        self.enqueued = time.monotonic() if enqueued is None else enqueued
        # taken back from librdkafka by a purge: ``enqueued`` then comes from the report and counts from the
        # message's last hand-over to librdkafka (a release or re-send restarts it), not from the application
        self.purged = purged


def _topic_of(msg: Message) -> str:
    return msg.topic() or ""


def _partition_of(msg: Message) -> int:
    p = msg.partition()
    return p if p is not None else UNASSIGNED


def _create_time(msg: Message) -> int:
    kind, ts = msg.timestamp()
    return ts if kind == confluent_kafka.TIMESTAMP_CREATE_TIME else 0


class MuteProducer:
    """A drop-in ``confluent_kafka.Producer`` that mutes bad partitions and sends around them.

    ``config`` is the same dict ``confluent_kafka.Producer`` takes (librdkafka's dotted keys, passed through
    untouched; the dict itself is never modified). mutepro's own settings come apart from it: ``policy`` is a
    :class:`~mutepro.policy.Policy` (``load_policy(...)``), a :class:`~mutepro.policy.TopicPolicy` for every
    topic, a path or mapping to load, or ``None`` for the defaults.

    Plug-in points (typed Protocols): ``partitioner`` (a :class:`~mutepro.partition.MutingPartitioner`, handed
    the mute manager through ``initialize``), ``detector_factory`` (``(topic, TopicPolicy) -> [PartitionDetector]``,
    e.g. ``lambda t, p: [*build_detectors(t, p), MyDetector()]``), ``store`` (a
    :class:`~mutepro.mute.store.BreakerStore` to share mute state), ``clock`` and ``tick_interval_s``.

    ``accelerate``: the C fast path (``mutepro.producer._fastpath``) runs ``produce()`` and the delivery-report
    bookkeeping for healthy and partly muted topics; ``None`` (default) uses it when it was built, ``False``
    runs the pure-Python path (same behaviour, ~3x the CPU per message), ``True`` requires it.
    """

    # An instance whose __init__ never ran (a subclass that skips super().__init__()) is closed, like an
    # uninitialised confluent_kafka.Producer: every call raises RuntimeError("Producer has been closed").
    _closed = True
    _user_on_delivery: Any = None
    _snapshots: Mapping[str, TopicSnapshot] = MappingProxyType({})
    _lock = _GatedLock()

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
        **kwargs: Any,
    ) -> None:
        conf = compat.config_from_args(config, kwargs)  # a copy: the caller's dict is never touched
        if isinstance(partitioner, str):  # Producer(conf, partitioner="murmur2"): librdkafka's setting, not ours
            conf["partitioner"], partitioner = partitioner, None
        bad = sorted(k for k in conf if k.startswith("mutepro."))
        if bad:
            raise ConfigError(
                f"{bad[0]}: mutepro settings do not go in the librdkafka config dict; pass them as "
                "MuteProducer(config, policy={...}) or in a YAML policy (MuteProducer.from_policy)"
            )
        self._policy = _coerce_policy(policy)
        apply_policy_logging(self._policy)  # the policy's logging: section, if it has one (see mutepro.logs)
        self._clock = clock
        if not 0.001 <= tick_interval_s <= 10:
            raise ConfigError(
                f"tick_interval_s: {tick_interval_s!r} is outside 0.001-10 s; the driver judges partitions once per "
                "tick (default 0.05)"
            )
        self._tick_s = tick_interval_s
        self.name = name or f"mutepro-{next(_ids)}"

        # The application's callbacks are served from its poll(); ours run on the driver thread. A value the
        # real client refuses (not callable, not a bool) stays in the config, so the wrapped producer raises
        # exactly what confluent_kafka.Producer raises for it.
        def user_callback(key: str) -> Any:
            value = conf.get(key)
            return conf.pop(key, None) if value is None or callable(value) else None

        self._user_on_delivery: DeliveryCallback | None = user_callback("on_delivery")
        self._user_error_cb = user_callback("error_cb")
        self._user_stats_cb = user_callback("stats_cb")
        self._user_throttle_cb = user_callback("throttle_cb")
        only_errors = conf.get("delivery.report.only.error", False)
        self._only_errors = only_errors is True
        if isinstance(only_errors, bool):
            conf.pop("delivery.report.only.error", None)
        if "statistics.interval.ms" not in conf:
            conf["statistics.interval.ms"] = 1000  # broker-level detection reads librdkafka's statistics
        conf.setdefault("error_cb", self._on_error)
        conf.setdefault("stats_cb", self._on_stats)
        conf.setdefault("throttle_cb", self._on_throttle)
        # First, so that every setting librdkafka refuses raises what the real client raises (KafkaException
        # _INVALID_ARG naming the property, TypeError for a bad callback); only then mutepro's own checks. The C
        # class itself, not the name confluent_kafka.Producer: a test run (mutepro.testing.dropin) or an
        # application may point that name at MuteProducer.
        self._inner = confluent_kafka.cimpl.Producer(conf)

        def setting(key: str) -> int:
            try:
                return int(conf.get(key, _LIBRDKAFKA_DEFAULTS[key]))
            except (TypeError, ValueError):  # a form librdkafka reads and int() does not
                return _LIBRDKAFKA_DEFAULTS[key]

        self._policy = compat.adapt_slow_call(self._policy, compat.message_timeout_ms(conf))
        self._transactional = "transactional.id" in conf
        # The rescue purge is not safe for an idempotent producer: librdkafka numbers a partition's messages when
        # they are queued, so purging queued ones leaves a gap in the sequence; the broker answers the next batch
        # with OUT_OF_ORDER_SEQUENCE_NUMBER and librdkafka bumps the epoch, after which it can no longer rule out
        # duplicates, and keys came out of order (sequences 85 written before 84) on the real cluster.
        self._idempotent = self._transactional or str(conf.get("enable.idempotence", "false")).lower() in ("true", "1")
        self._rescue_skip_logged = False
        self._partitioner_name = str(conf.get("partitioner", "consistent_random"))
        defaults = self._policy_for("")
        self._partitioner: MutingPartitioner = partitioner or DefaultMutingPartitioner(
            self._partitioner_name,
            # librdkafka's batches go up to batch.size (1 MB by default): switching after Java's 16 KB would
            # cut them to 32 messages of 512 B and cost ~25 % of the throughput
            sticky_bytes=defaults.partitioner.sticky_bytes or int(conf.get("batch.size", 1_000_000)),
            linger_s=linger_from_config(conf),
        )
        self._home_of = getattr(self._partitioner, "home_partition", None)

        if accelerate and not accel.available():
            raise ConfigError(
                "accelerate=True: the C fast path (mutepro.producer._fastpath) is not available here (built without "
                "a C compiler, or MUTEPRO_PURE_PYTHON is set); reinstall mutepro with gcc present, or drop the option"
            )
        native = accel.available() if accelerate is None else accelerate
        self._tracker = OutstandingTracker(
            setting("queue.buffering.max.messages"), setting("queue.buffering.max.kbytes") * 1024, native=native
        )
        # the per-message totals (produced/delivered/buffer_errors) are bumped on this object directly: going
        # through ProducerCounters' attribute forwarding would cost two Python calls per message
        self._totals = self._tracker.totals
        self.counters = ProducerCounters(self._totals)
        if store is None:
            state = self._policy.state if isinstance(self._policy, Policy) else None
            store = make_store(state.backend, state.url, state.key_prefix) if state is not None else None
        self._manager = ProducerMuteManager(
            self._policy_for, clock=clock, store=store, on_event=self._on_mute_event,
            detector_factory=detector_factory or build_detectors,
        )
        self._manager.bind_counts(self.outstanding, self.accumulated, self.in_flight)
        self._partitioner.initialize(self._manager)
        self._snapshots = self._manager.snapshots
        # The built-in partitioner's unkeyed choice is called directly on the hot path (one call, not three).
        # Only where librdkafka itself spreads NULL keys randomly (the *_random partitioners and random): under
        # consistent / murmur2 / fnv1a a NULL key is hashed like b"" and must land on that hash's partition.
        default = self._partitioner if type(self._partitioner) is DefaultMutingPartitioner else None
        null_is_random = self._partitioner_name == "random" or self._partitioner_name.endswith("_random")
        self._sticky = default.chooser if default is not None and null_is_random else None
        self._callbacks = CallbackQueue()
        self._lock = _GatedLock()
        self._reporters: dict[tuple[Any, int], Callable[[KafkaError | None, Message], None]] = {}
        self._holds: dict[tuple[str, int], deque[_Held]] = {}
        self._held_total = 0
        self._retry: deque[tuple[_Held, int]] = deque()
        self._rescuing = False
        # (enqueue time, cb, kind, msg) of each message our rescue purged, re-sent in enqueue order
        self._rescue_batch: list[tuple[float | None, DeliveryCallback | None, int, Message]] = []
        # Whose purge a purge report belongs to: the application's (report it) or our rescue's (re-send it).
        # A report outside a rescue belongs to whichever purged last.
        self._user_purge_at = float("-inf")
        self._rescue_purge_at = float("-inf")
        self._stragglers = 0  # purge reports of a rescue that reached us after it (see _on_error_report)
        self._no_rescue = threading.Event()  # cleared while a rescue keeps other threads out of librdkafka's poll
        self._no_rescue.set()
        self._wanted_topics: set[str] = set()
        # Topics with messages left to librdkafka's partitioner (sent before their metadata was known) and no
        # report yet showing librdkafka placed them. Their messages wait in librdkafka's unassigned queue until
        # ITS metadata arrives; a message sent meanwhile with an explicit partition (ours) could reach the
        # partition's queue first and be written before older ones of the same key (seen: a key's sequences
        # 35-40 written after 41-42, at start). librdkafka places the whole unassigned queue at once, so the first
        # report of such a message with a partition shows the way is clear: only then is the topic routed here.
        self._unassigned_topics: set[str] = set()
        # ... and those librdkafka has placed since: it knows them, so it places later unassigned sends at once
        self._placed_topics: set[str] = set()
        # keyed reroutes since the last tick, (topic, home) -> {target: count}: one event per tick, not per message
        self._reroutes: dict[tuple[str, int], dict[int, int]] = {}
        # messages moved by rescues since the last tick, (topic, origin, why) -> {target: count}
        self._rescue_moves: dict[tuple[str, int, str], dict[int, int]] = {}
        self._weights_at = 0.0
        self._poll_pause_s = min(0.005, tick_interval_s / 2)
        self._since_poll = 0
        self._last_cb: Any = object()  # no callback matches this until the first produce()
        self._last_reporter: Callable[[KafkaError | None, Message], None] | None = None
        self._topic_checked: dict[str, float] = {}
        self._stats: StatsSnapshot | None = None
        self._closed = False
        self._driver_error: BaseException | None = None

        self._collector: MuteproCollector | None = None
        metrics = self._policy.metrics if isinstance(self._policy, Policy) else None
        if metrics is not None and metrics.prometheus_port is not None:
            self._collector = MuteproCollector(self.name, self.metrics, metrics.namespace)
            register_prometheus(self._collector, metrics.prometheus_port)

        self._fast: Any = None
        self._app_polls_seen = -1
        if native:
            self._fast = self._build_fast_path(default)
            self._lock.fast = self._fast
            if type(self).produce is MuteProducer.produce:  # a subclass overriding produce() keeps its own
                self.produce = self._fast.produce  # type: ignore[method-assign]

        self._stop = threading.Event()
        # The threads see the producer through a weak proxy: an application that drops a producer without
        # close() gets it collected, its threads ended and the wrapped handle destroyed, as with the plain client.
        me = weakref.proxy(self)
        self._driver = threading.Thread(
            target=_while_alive, args=(MuteProducer._drive, me), name=f"{self.name}-driver", daemon=True
        )
        self._driver.start()
        self._metadata = threading.Thread(
            target=_while_alive, args=(MuteProducer._metadata_loop, me), name=f"{self.name}-metadata", daemon=True
        )
        self._metadata.start()

    def _build_fast_path(self, default: DefaultMutingPartitioner | None) -> Any:
        """The C fast path: produce() and delivery reports for healthy topics without a Python frame.

        It covers what the Python fast path in :meth:`produce` covers -- the built-in partitioner's keyed
        placement and its sticky choice for unkeyed messages (when its clock is the real monotonic clock) -- and
        hands every other call to :meth:`produce` itself.
        """
        assert accel.fastpath is not None
        chooser = default.chooser if default is not None else None
        picker = None
        if self._sticky is not None and chooser is not None and getattr(chooser, "_clock", None) is time.monotonic:
            picker = chooser.pick
        key_mode = _KEY_MODES.get(self._partitioner_name, "KP_NONE") if default is not None else "KP_NONE"
        return accel.fastpath.FastPath(
            inner_produce=self._inner.produce,
            inner_poll=self._inner.poll,
            snapshots=self._snapshots,
            tallies=self._tracker.topics,
            holds=self._holds,
            slow_produce=MuteProducer.produce.__get__(self),
            on_report=self._on_report,
            queue=self._callbacks,
            picker=picker,
            default_cb=self._user_on_delivery,
            counts=self._tracker.totals,
            key_mode=getattr(accel.fastpath, key_mode),
            only_errors=int(self._only_errors),
            sticky_bytes=int(getattr(chooser, "_sticky_bytes", 0) or 0),
            linger_s=float(getattr(chooser, "_linger_s", 0.0) or 0.0),
            inline_poll_every=_INLINE_POLL_EVERY * 4,
        )

    # -- construction from YAML ------------------------------------------------------------------------

    @classmethod
    def from_policy(
        cls,
        *sources: str | os.PathLike[str] | Mapping[str, Any] | Policy,
        config: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> MuteProducer:
        """Build a producer from YAML policy files (merged in order): their ``client:`` block is the librdkafka
        config (``config`` entries override it), the rest is the mute policy."""
        from mutepro.policy.loader import load_policy

        single = sources[0] if len(sources) == 1 else None
        policy = single if isinstance(single, Policy) else load_policy(*sources)  # type: ignore[arg-type]
        client = policy.client
        client.update(config or {})
        if "bootstrap.servers" not in client:
            raise ConfigError(
                "client.bootstrap.servers: the policy has no bootstrap servers; add it under `client:` "
                "(e.g. ${KAFKA_BOOTSTRAP}) or pass config={'bootstrap.servers': ...}"
            )
        return cls(client, policy=policy, **kwargs)

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
        cb = on_delivery or callback or self._user_on_delivery
        with self._lock:
            # The fast path: a healthy topic (nothing muted or held), no explicit partition. Inlined on purpose:
            # every Python call here costs about as much as librdkafka's produce() itself.
            snap = self._snapshots.get(topic)
            if snap is not None and partition == -1 and not snap.muted and not self._holds and not self._closed:
                size = len(value) if value is not None else 0
                if key is None and self._sticky is not None:
                    p = self._sticky.choose(snap, size)
                else:
                    p = self._home_of(key, snap.partition_count) if self._home_of is not None else None
                tally = self._tracker.topics.get(topic)
                if p is not None and tally is not None and p < tally.count:
                    if cb is self._last_cb:  # most applications pass the same callback every time
                        reporter = self._last_reporter
                    else:
                        reporter = self._reporter(cb, NORMAL)
                        self._last_cb, self._last_reporter = cb, reporter
                    if headers is not None:
                        reporter = _keeping_headers(reporter, headers)  # type: ignore[arg-type]
                    try:
                        self._inner.produce(
                            topic, value, key, partition=p, on_delivery=reporter, timestamp=timestamp, headers=headers
                        )
                    except BufferError:
                        self._totals.buffer_errors += 1
                        raise
                    tally.sent[p] += 1
                    tally.sent_bytes[p] += size
                    self._totals.sent_total += 1
                    self._totals.produced += 1
                    self._since_poll += 1
                    if self._since_poll >= _INLINE_POLL_EVERY:
                        self._serve_reports()
                    return
            self._produce_slow(topic, value, key, partition, cb, timestamp, headers, snap)
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

    def _produce_slow(
        self, topic: str, value: Any, key: Any, partition: int, cb: DeliveryCallback | None, timestamp: int,
        headers: Any, snap: TopicSnapshot | None,
    ) -> None:
        """Everything but the fast path: explicit partitions, unknown topics, muted partitions, held keys."""
        if not isinstance(topic, str):
            raise TypeError(f"topic must be a str, got {type(topic).__name__}")
        if self._closed:
            raise compat.closed_error()
        if snap is None:
            # Metadata not known yet: the driver thread loads it in the background; meanwhile librdkafka
            # partitions the message exactly as the plain client would.
            self._wanted_topics.add(topic)
        try:
            if partition is not None and partition != -1:
                # as given, also when negative: librdkafka answers with the plain client's error (-1 alone means
                # "choose for me")
                self._dispatch(topic, value, key, headers, timestamp, cb, partition, EXPLICIT)
            elif snap is None:
                if topic not in self._placed_topics:
                    self._unassigned_topics.add(topic)
                self._dispatch(topic, value, key, headers, timestamp, cb, UNASSIGNED, UNCOUNTED)
            else:
                self._route(topic, value, key, headers, timestamp, cb, snap)
        except BufferError:
            self._totals.buffer_errors += 1
            raise
        self._totals.produced += 1

    def produce_batch(
        self,
        topic: str,
        messages: list[dict[str, Any]],
        partition: int = -1,
        callback: DeliveryCallback | None = None,
        on_delivery: DeliveryCallback | None = None,
    ) -> int:
        """Produce a list of message dicts (``value``, ``key``, ``partition``, ``callback``) like
        ``confluent_kafka.Producer.produce_batch``: returns how many were accepted; a rejected one gets an
        ``_error`` entry (a ``KafkaError``). Every message is checked before any is sent (``TypeError`` for a
        wrong type, ``NotImplementedError`` for a ``timestamp``); ``headers`` are checked, then dropped, as the
        real client does."""
        if not isinstance(topic, str):
            raise TypeError(f"produce_batch() argument 'topic' must be str, not {type(topic).__name__}")
        if not isinstance(partition, int):
            raise TypeError(f"produce_batch() argument 'partition' must be int, not {type(partition).__name__}")
        if not isinstance(messages, list):
            raise TypeError("messages must be a list")
        if not messages:
            return 0
        if self._closed:
            raise compat.closed_error()
        batch = compat.validate_batch(messages, partition, callback or on_delivery)
        produce = self.produce
        accepted = 0
        for m, entry in zip(batch, messages, strict=True):
            try:
                produce(topic, m.value, m.key, m.partition, m.callback)
            except (BufferError, KafkaException) as err:
                entry["_error"] = compat.batch_error(compat.error_code(err))
            else:
                accepted += 1
        return accepted

    @compat.surfaces_interrupts
    def poll(self, timeout: float | None = -1) -> int:
        """Serve queued delivery reports and callbacks; wait up to ``timeout`` s (-1/None: forever) for one.

        From inside a callback that a poll()/flush() of this producer is running on the same thread, it serves
        nothing and returns 0 at once: the enclosing call runs the next callbacks, in order. (The plain client
        aborts the process there; a nested serve per callback would recurse through the whole queue.)
        """
        if self._closed:
            raise compat.closed_error()
        self._raise_driver_error()
        if self._nested():
            return 0
        if self._fast is None:
            with self._lock:
                self._serve_reports()
            return self._callbacks.serve(None if timeout is None or timeout < 0 else timeout)
        deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
        while True:
            served = self._serve_direct(0.0)
            if served:
                return served
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return 0
            # wait in librdkafka itself (GIL released), a slice at a time: reports the driver thread queues
            # meanwhile are picked up on the next round
            served = self._serve_direct(_DIRECT_WAIT_S if left is None else min(left, _DIRECT_WAIT_S))
            if served:
                return served

    def _serve_direct(self, wait_s: float) -> int:
        """Queued callbacks first (they are older), then librdkafka's reports with the application's callbacks
        run right here, on the application's thread inside its poll()/flush(), as the plain client does, then
        whatever that poll queued (failed reports, statistics): poll() returns only after the callbacks ran.

        Returns the callbacks run and reports served; librdkafka events of mutepro's own (its statistics when
        the application set no ``stats_cb``) do not count, so ``poll(timeout)`` keeps waiting past them.

        Never called from inside a callback of this producer's poll on the same thread (see :meth:`_nested`).
        """
        fast = self._fast
        served = self._callbacks.serve(0)
        direct = fast.direct_reports
        token = fast.enter_direct()
        if token is None:  # a rescue is collecting its purge reports: they must all reach it (see _rescue)
            self._no_rescue.wait(wait_s)
            return served + self._callbacks.serve(0)
        try:
            self._inner.poll(0.0 if served else wait_s)
        finally:
            fast.leave_direct(token)
        return served + (fast.direct_reports - direct) + self._callbacks.serve(0)

    def _nested(self) -> bool:
        """True inside a callback that this producer's poll()/flush() runs on this thread: queued callbacks
        served by CallbackQueue.serve, or (C path) a delivery callback run straight from librdkafka's poll,
        where confluent-kafka's poll must not be entered again (it loses the outer call's state and aborts)."""
        return self._callbacks.serving_here() or (self._fast is not None and self._fast.polling() > 0)

    @compat.surfaces_interrupts
    def flush(self, timeout: float | None = -1) -> int:
        """Wait until every message (held ones too) has its final report and its callback ran; returns how many
        are still outstanding when ``timeout`` (-1/None: forever) runs out."""
        if self._closed:
            raise compat.closed_error()
        deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
        if self._nested():
            # Called from a callback that this thread's poll()/flush() is running: the reports still to come are
            # delivered by that enclosing call after the callback returns, so waiting here could never end.
            # Report what is left, like flush(0). (The plain client aborts the process here.)
            return len(self)
        while True:
            self._raise_driver_error()
            if self._fast is None:
                with self._lock:
                    self._serve_reports()
                self._callbacks.serve(0)
            else:
                self._serve_direct(0.0)
            remaining = len(self)
            if remaining == 0:
                return 0
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return remaining
            pause = self._poll_pause_s if left is None else min(self._poll_pause_s, left)
            if self._fast is None:
                self._callbacks.wait(pause)
            else:
                self._serve_direct(pause)  # waits in librdkafka: back as soon as a report arrives

    def purge(self, in_queue: bool = True, in_flight: bool = True, blocking: bool = True) -> None:
        """Purge messages like ``confluent_kafka.Producer.purge``; held messages are purged with ``in_queue``.

        Purged messages get a delivery report with ``_PURGE_QUEUE`` / ``_PURGE_INFLIGHT`` on the next poll.
        """
        if self._closed:
            raise compat.closed_error()
        with self._lock:
            self._user_purge_at = self._clock()
            self._inner.purge(in_queue=in_queue, in_flight=in_flight, blocking=blocking)
            if in_queue:
                for (_topic, p), queue in list(self._holds.items()):
                    while queue:
                        held = queue.popleft()
                        self._held_total -= 1
                        self._fail(held, KafkaError(KafkaError._PURGE_QUEUE, "purged while held by mutepro"), p)
                self._holds.clear()
                while self._retry:
                    item, p = self._retry.popleft()
                    self._fail(item, KafkaError(KafkaError._PURGE_QUEUE, "purged while awaiting re-send"), p)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        return self._wrapped().list_topics(topic, timeout)

    def __len__(self) -> int:
        """Messages not yet fully handled: outstanding in librdkafka, held, awaiting re-send, or whose callback
        has not run yet (like ``len(confluent_kafka.Producer)``); 0 once closed."""
        if self._closed:
            return 0
        return self._tracker.total + self._held_total + len(self._retry) + len(self._callbacks)

    def __bool__(self) -> bool:
        return True  # an empty producer is still a producer (len() would make it falsy)

    # transactions: pass-through (muting never moves a message out of an open transaction: rescue is off)
    def init_transactions(self, *args: Any, **kwargs: Any) -> None:
        self._open_inner().init_transactions(*args, **kwargs)

    def begin_transaction(self, *args: Any, **kwargs: Any) -> None:
        self._open_inner().begin_transaction(*args, **kwargs)

    def send_offsets_to_transaction(self, *args: Any, **kwargs: Any) -> None:
        self._open_inner().send_offsets_to_transaction(*args, **kwargs)

    def commit_transaction(self, *args: Any, **kwargs: Any) -> None:
        self._open_inner().commit_transaction(*args, **kwargs)

    def abort_transaction(self, *args: Any, **kwargs: Any) -> None:
        self._open_inner().abort_transaction(*args, **kwargs)

    def _open_inner(self) -> Any:
        """The wrapped producer, or the real client's RuntimeError once closed."""
        if self._closed:
            raise compat.closed_error()
        return self._inner

    def _wrapped(self) -> Any:
        """The wrapped producer for calls the real client still takes once closed (they raise there, with the
        handle's own message); an instance whose __init__ never ran has none."""
        inner = self.__dict__.get("_inner")
        if inner is None:
            raise RuntimeError("Handle has been closed")
        return inner

    def __getattr__(self, name: str) -> Any:
        # Anything else confluent_kafka.Producer offers (set_sasl_credentials, ...) goes to the wrapped one.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._wrapped(), name)

    def __enter__(self) -> MuteProducer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, timeout: float | None = None) -> bool:
        """Deliver what is still outstanding, stop mutepro's threads and destroy the wrapped producer; returns
        True, like ``confluent_kafka.Producer.close()``. Afterwards produce/poll/flush/purge and the transaction
        calls raise ``RuntimeError("Producer has been closed")`` and ``len()`` is 0, as with the real client.

        Like the real client it waits for every message (up to its ``message.timeout.ms``); ``timeout`` (s)
        bounds that wait instead: what is left then is purged (its callbacks run here, with ``_PURGE_QUEUE``)
        and a ``RuntimeWarning`` says how many. A callback's exception propagates, the producer closed anyway.
        """
        if self._closed:
            return True
        failed = True
        try:
            self.flush(-1 if timeout is None else timeout)
            failed = False
        finally:
            self._shut_down(warn=not failed)
        return True

    def _shut_down(self, warn: bool) -> None:
        left = len(self)
        if left:
            # so that destroying the wrapped producer cannot wait any longer (its close() flushes forever)
            self.purge(in_queue=True, in_flight=True, blocking=True)
        self._closed = True
        if self._fast is not None:
            self._fast.closed = 1
        self._stop.set()
        self._driver.join(5)
        self._metadata.join(5)
        self._inner.close()  # serves the last reports (purged ones) into the callback queue
        if self._collector is not None:
            unregister_prometheus(self._collector)
        # The report closures refer back to this producer; dropping them lets the wrapped librdkafka handle (and
        # its connections and log lines) go as soon as the application drops the producer.
        self._reporters.clear()
        self._last_reporter = None
        if self._fast is not None:
            self._fast.forget_reporters()
        if left and warn:
            warnings.warn(
                f"Producer flush failed during close: {left} messages still undelivered after the close timeout "
                "were purged", RuntimeWarning, stacklevel=3,
            )
        self._callbacks.serve(0)  # the application's callbacks for the last reports, as the real close() runs

    # -- mutepro's own API ---------------------------------------------------------------------------------

    @property
    def mute_manager(self) -> ProducerMuteManager:
        """The :class:`ProducerMuteManager`: muted partitions and brokers, manual mute/unmute, state."""
        return self._manager

    def wait_for_topic(self, topic: str, timeout: float = 10.0) -> bool:
        """Load ``topic``'s metadata (and, with a shared store, its mute state) before the first produce();
        True once known. Without it, messages produced before the metadata arrives are partitioned by
        librdkafka alone, blind to mutes (a fresh Spark worker would write its first rows to a partition
        another worker muted)."""
        deadline = time.monotonic() + timeout
        if self._manager.snapshot(topic) is None:
            self._wanted_topics.add(topic)
        while not self._topic_ready(topic):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._stop.wait(min(_METADATA_POLL_S, left))
        return True

    def _topic_ready(self, topic: str) -> bool:
        # Every partition in the snapshot: while ensure_topic() builds the partitions, a mute adopted from the
        # shared store publishes a snapshot of the partitions built so far (the first one: none), in which
        # unkeyed messages fall back to librdkafka's own partitioning, blind to the mute.
        snap = self._manager.snapshot(topic)
        tally = self._tracker.topics.get(topic)
        return snap is not None and tally is not None and snap.partition_count == tally.count > 0

    def outstanding(self, topic: str, partition: int) -> int:
        """Messages of ``topic[partition]`` handed to librdkafka without a final report yet."""
        return self._tracker.count(topic, partition)

    def accumulated(self, topic: str, partition: int) -> int:
        """Messages queued in librdkafka for the partition, not yet sent (from the latest statistics)."""
        stats = self._stats
        ps = stats.partitions.get((topic, partition)) if stats is not None else None
        return (ps.msgq_cnt + ps.xmit_msgq_cnt) if ps is not None else 0

    def in_flight(self, topic: str, partition: int) -> int:
        """Messages sent to the broker and awaiting its response (from the latest statistics)."""
        stats = self._stats
        ps = stats.partitions.get((topic, partition)) if stats is not None else None
        return ps.msgs_inflight if ps is not None else 0

    def held(self, topic: str | None = None) -> int:
        """Messages held by ``keyed_policy: hold`` (for ``topic``, or all)."""
        if topic is None:
            return self._held_total
        return sum(len(q) for (t, _), q in list(self._holds.items()) if t == topic)

    def metrics(self) -> dict[str, Any]:
        """Counters and per-partition state as a dict (what the Prometheus collector exports)."""
        state = self._manager.state()
        partitions: dict[str, dict[int, dict[str, Any]]] = {}
        for topic, parts in state["topics"].items():
            partitions[topic] = {
                p: {**info, "outstanding": self._tracker.count(topic, p), "held": len(self._holds.get((topic, p), ()))}
                for p, info in parts.items()
            }
        return {
            "counters": self.counters.as_dict(),
            "partitions": partitions,
            "muted": self._manager.muted_partitions(),
            "muted_brokers": self._manager.muted_brokers(),
            "held": self._held_total,
            "outstanding": self._tracker.total,
        }

    def __repr__(self) -> str:
        return f"<MuteProducer {self.name} outstanding={self._tracker.total} muted={self._manager.muted_partitions()}>"

    # -- routing (producer lock held) ----------------------------------------------------------------------

    def _policy_for(self, topic: str) -> TopicPolicy:
        policy = self._policy
        if isinstance(policy, Policy):
            return policy.for_topic(topic) if topic else policy.defaults
        return policy

    def _reporter(self, cb: DeliveryCallback | None, kind: int) -> Callable[[KafkaError | None, Message], None]:
        """The delivery callback handed to librdkafka: one cached closure per (user callback, kind)."""
        try:
            return self._reporters[(cb, kind)]
        except KeyError:
            pass
        except TypeError:  # an unhashable callable: no caching
            return self._make_reporter(cb, kind)
        reporter = self._make_reporter(cb, kind)
        if len(self._reporters) >= _REPORTER_CACHE:
            self._reporters.clear()  # applications that pass a fresh lambda per message must not grow this
        self._reporters[(cb, kind)] = reporter
        return reporter

    def _make_reporter(self, cb: DeliveryCallback | None, kind: int) -> Callable[[KafkaError | None, Message], None]:
        on_report = self._on_report
        if kind != NORMAL or self._fast is not None:
            # (with the C fast path, reports are not served under the producer lock: every Python report goes
            # through _on_report, which takes it)

            def report_other(err: KafkaError | None, msg: Message) -> None:
                on_report(cb, kind, err, msg)

            return report_other
        # The common report — a success on a warm, tracked partition — is handled right here, with everything it
        # touches bound as closure variables; anything else goes through _on_report.
        topics = self._tracker.topics
        totals = self._totals
        queue = self._callbacks
        only_errors = self._only_errors

        def report(err: KafkaError | None, msg: Message) -> None:
            if err is None:
                tally = topics.get(msg.topic())  # type: ignore[arg-type]
                if tally is not None:
                    p: int = msg.partition()  # type: ignore[assignment]
                    if tally.reported[p] >= tally.warm[p] >= 0:
                        tally.reported[p] += 1
                        totals.reported_total += 1
                        totals.delivered += 1
                        tally.ok[p] += 1
                        if (msg.latency() or 0.0) > tally.slow_s:
                            tally.slow[p] += 1
                        if cb is not None and not only_errors:
                            queue.put_report(cb, msg)
                        elif queue.has_waiters():
                            queue.wake()
                        return
            on_report(cb, kind, err, msg)

        return report

    def _dispatch(
        self, topic: str, value: Any, key: Any, headers: Any, timestamp: int, cb: DeliveryCallback | None,
        partition: int, kind: int,
    ) -> None:
        """Hand one message to librdkafka for ``partition`` (UNASSIGNED: librdkafka's partitioner) and count it."""
        tally = self._tracker.topics.get(topic) if partition >= 0 else None
        counted = tally is not None and partition < tally.count
        if not counted:
            kind |= UNCOUNTED
        try:
            reporter = self._reporters[(cb, kind)]
        except (KeyError, TypeError):
            reporter = self._reporter(cb, kind)
        if headers is not None:
            reporter = _keeping_headers(reporter, headers)
        self._inner.produce(
            topic, value, key, partition=partition, on_delivery=reporter, timestamp=timestamp, headers=headers
        )
        self._totals.sent_total += 1
        if counted:
            assert tally is not None
            tally.sent[partition] += 1
            if value is not None:
                tally.sent_bytes[partition] += len(value)

    def _route(
        self, topic: str, value: Any, key: Any, headers: Any, timestamp: int, cb: DeliveryCallback | None,
        snap: TopicSnapshot,
    ) -> None:
        """Choose the partition for a message without an explicit one and send, hold or fail it."""
        size = len(value) if value is not None else 0
        if key is None and self._sticky is not None:
            partition = self._sticky.choose(snap, size)  # the common unkeyed case, in one call
        else:
            home = self._home_of(key, snap.partition_count) if self._home_of is not None else None
            if home is not None:
                if not snap.muted and not self._holds:
                    self._dispatch(topic, value, key, headers, timestamp, cb, home, NORMAL)
                    return
                self._route_keyed(topic, value, key, headers, timestamp, cb, home, snap)
                return
            partition = self._partitioner.partition(topic, key, size, snap)
            if partition is not None and partition >= 0 and key is not None and partition in snap.muted:
                # a custom partitioner chose a muted home for a keyed message: the keyed policy applies
                self._route_keyed(topic, value, key, headers, timestamp, cb, partition, snap)
                return
        if snap.muted:
            # Probes first, also (above all) when nothing is writable: otherwise half-open partitions would
            # never get the messages that can close them.
            for candidate in self._manager.probing(topic):
                if self._manager.try_probe(topic, candidate):
                    self.counters.probes += 1
                    self._dispatch(topic, value, key, headers, timestamp, cb, candidate, PROBE)
                    return
        if partition is None or partition < 0:
            self._dispatch(topic, value, key, headers, timestamp, cb, UNASSIGNED, UNCOUNTED)  # nothing writable
            return
        self._dispatch(topic, value, key, headers, timestamp, cb, partition, NORMAL)

    def _route_keyed(
        self, topic: str, value: Any, key: Any, headers: Any, timestamp: int, cb: DeliveryCallback | None,
        home: int, snap: TopicSnapshot,
    ) -> None:
        if self._holds.get((topic, home)):
            # Earlier messages of this partition are held: this one queues behind them, so keys keep their order.
            self._hold(_Held(topic, value, key, headers, timestamp, cb), home)
            return
        if home not in snap.muted:
            self._dispatch(topic, value, key, headers, timestamp, cb, home, NORMAL)
            return
        policy = self._policy_for(topic).keyed_policy
        if policy == KeyedPolicy.HOLD and self._tracker.count(topic, home):
            # Older messages of this partition are still in librdkafka (in flight to the muted leader, or queued
            # behind it): anything sent now, probe included, could be written before them once they are retried.
            self._hold(_Held(topic, value, key, headers, timestamp, cb), home)
            return
        probing = policy != KeyedPolicy.REROUTE and home in self._manager.probing(topic)
        if probing and self._manager.try_probe(topic, home):
            self.counters.probes += 1
            self._dispatch(topic, value, key, headers, timestamp, cb, home, PROBE)
            return
        if policy == KeyedPolicy.HOLD:
            self._hold(_Held(topic, value, key, headers, timestamp, cb), home)
        elif policy == KeyedPolicy.REROUTE:
            target = reroute_partition(key, home, snap)
            if target is None:
                self._dispatch(topic, value, key, headers, timestamp, cb, home, NORMAL)  # nothing writable
                return
            self._dispatch(topic, value, key, headers, timestamp, cb, target, NORMAL)
            self.counters.rerouted += 1
            moves = self._reroutes.setdefault((topic, home), {})
            moves[target] = moves.get(target, 0) + 1
        elif policy == KeyedPolicy.FAIL:
            self.counters.muted_fail += 1
            reason = self._manager.state()["topics"].get(topic, {}).get(home, {}).get("reason")
            error = KafkaError(
                KafkaError._STATE, f"mutepro: {topic}[{home}] is muted ({reason or 'muted'}); keyed_policy=fail",
                retriable=True,
            )
            self._fail(_Held(topic, value, key, headers, timestamp, cb), error, home)
        else:  # ignore
            self._dispatch(topic, value, key, headers, timestamp, cb, home, NORMAL)

    def _hold(self, held: _Held, home: int) -> None:
        key = (held.topic, home)
        queue = self._holds.get(key)
        limit = self._policy_for(held.topic).hold.max_messages
        if queue is not None and len(queue) >= limit:
            raise BufferError(
                f"mutepro: the hold queue of muted partition {held.topic}[{home}] is full ({limit} messages, "
                "hold.max_messages); poll() and retry, or raise hold.max_messages"
            )
        if queue is None:
            queue = self._holds[key] = deque()
        queue.append(held)
        self._held_total += 1
        self.counters.held += 1

    def _fail(self, held: _Held, error: KafkaError, partition: int) -> None:
        """Give a message that never reached librdkafka its final, failed report now (served by poll)."""
        self.counters.failed += 1
        if held.callback is not None:
            msg = Message(
                topic=held.topic, partition=partition, value=held.value, key=held.key, headers=held.headers,
                error=error,
            )
            self._callbacks.put(held.callback, error, msg)
        else:
            self._callbacks.wake()

    # -- delivery reports (driver thread, inside inner.poll) ---------------------------------------------

    def _on_report(self, cb: DeliveryCallback | None, kind: int, err: KafkaError | None, msg: Message) -> None:
        if self._fast is None:
            self._on_report_locked(cb, kind, err, msg)  # poll() holds the lock around every report already
            return
        with self._lock:
            self._on_report_locked(cb, kind, err, msg)

    def _on_report_locked(
        self, cb: DeliveryCallback | None, kind: int, err: KafkaError | None, msg: Message
    ) -> None:
        tracker = self._tracker
        self._totals.reported_total += 1
        tally = None
        p = -1
        if kind & UNCOUNTED and self._unassigned_topics and (msg.partition() or 0) >= 0:
            self._placed_topics.add(msg.topic())  # type: ignore[arg-type]
            self._unassigned_topics.discard(msg.topic())
        if not kind & UNCOUNTED:
            tally = tracker.topics.get(msg.topic())  # type: ignore[arg-type]  # a report always has a topic
            p = msg.partition()  # type: ignore[assignment]
            if tally is not None:
                tally.reported[p] += 1
        if err is None:
            self._totals.delivered += 1
            if tally is not None:
                latency = msg.latency() or 0.0
                if kind & PROBE:
                    self._manager.probe_result(_topic_of(msg), p, latency <= tally.slow_s)
                elif tally.reported[p] > tally.warm[p] >= 0:
                    tally.ok[p] += 1
                    if latency > tally.slow_s:
                        tally.slow[p] += 1
                elif tally.warm[p] < 0:
                    # The partition's first delivery: everything sent until now waited for metadata and a fresh
                    # connection (3,000 queued messages on a cold start can all take > 500 ms), which says nothing
                    # about the partition's health. The detectors see the messages sent from here on.
                    tally.warm[p] = tally.sent[p]
            if cb is not None and not self._only_errors:
                self._callbacks.put_report(cb, msg)
            else:
                self._callbacks.wake()  # flush() may be waiting for the count to reach zero
            return
        self._on_error_report(cb, kind, err, msg, tally, p)

    def _on_error_report(
        self, cb: DeliveryCallback | None, kind: int, err: KafkaError, msg: Message, tally: Any, p: int
    ) -> None:
        code = err.code()
        if code in _PURGED:
            if self._rescuing:
                # Purged by our own rescue: batched and re-sent in enqueue order. librdkafka reports a purge in
                # parts (the partition's queue first, then each broker's transmit queue, which holds the OLDER
                # messages), so report order is not produce order: re-sent as reported, a key's messages came out
                # of order (e.g. sequences 201-205 written after 213). The enqueue time is now - latency, both on
                # CLOCK_MONOTONIC, read here in the report itself.
                self._rescue_batch.append((_enqueued_at(msg), cb, kind, msg))
                return
            if self._rescue_purge_at > self._user_purge_at:
                # A straggler of our rescue (served on another thread after the rescue ran): re-sent on its own.
                self._stragglers += 1
                with self._lock:
                    held_back: dict[tuple[str, int], list[_Held]] = {}
                    self._redispatch(cb, kind, msg, held_back)
                    self._hold_front(held_back, straggler=True)
                return
        else:
            if not counts_against_partition(code):
                # the message's or the application's error (too large, invalid, not authorized, ...): the broker
                # answered, so a probe shows a responsive partition; nothing is judged against it
                if kind & PROBE:
                    self._manager.probe_result(_topic_of(msg), p, True)
            elif kind & PROBE:
                self._manager.probe_result(_topic_of(msg), p, False)
            elif tally is not None:
                tally.failed[p] += 1
            if code in _RESCUABLE and self._may_rescue(kind, msg):
                with self._lock:
                    self._rescue_timed_out(cb, msg)
                return
        self.counters.failed += 1
        if cb is not None:
            self._callbacks.put(cb, err, msg)
        else:
            self._callbacks.wake()

    def _may_rescue(self, kind: int, msg: Message) -> bool:
        if kind & (EXPLICIT | RESCUED) or self._transactional:
            return False
        policy = self._policy_for(_topic_of(msg))
        if not policy.rescue.enabled:
            return False
        return msg.key() is None or policy.keyed_policy == KeyedPolicy.REROUTE

    def _rescue_timed_out(self, cb: DeliveryCallback | None, msg: Message) -> None:
        """Re-send a timed-out message to a writable partition other than its own, if there is one."""
        topic, current = _topic_of(msg), _partition_of(msg)
        snap = self._manager.snapshot(topic)
        target = None
        if snap is not None:
            key = msg.key()
            home = self._home_of(key, snap.partition_count) if (key is not None and self._home_of) else None
            if home is not None:
                target = reroute_partition(key, home, snap)
            else:
                target = self._partitioner.partition(topic, None, len(msg.value() or b""), snap)
        if target is None or target < 0 or target == current:
            # librdkafka's own error, as the plain client reports it ("Local: Message timed out")
            err = msg.error() or KafkaError(KafkaError._MSG_TIMED_OUT)
            self.counters.failed += 1
            if cb is not None:
                self._callbacks.put(cb, err, msg)
            return
        self._move(cb, msg, target, "timeout")

    def _move(self, cb: DeliveryCallback | None, msg: Message, target: int, why: str) -> None:
        """Re-send a reported (purged or timed-out) message to ``target``, marked with the rescue header."""
        topic, origin = _topic_of(msg), _partition_of(msg)
        headers = msg.headers()
        header = self._policy_for(topic).rescue.header
        if header:
            headers = _with_header(headers, header, str(origin).encode())
        self.counters.rescued += 1
        self._resend(topic, msg.value(), msg.key(), headers, _create_time(msg), cb, target, RESCUED)
        # one event per partition and tick (see _tick), never one per message: a rescue moves thousands
        moves = self._rescue_moves.setdefault((topic, origin, why), {})
        moves[target] = moves.get(target, 0) + 1

    def _resend(
        self, topic: str, value: Any, key: Any, headers: Any, timestamp: int, cb: DeliveryCallback | None,
        partition: int, kind: int,
    ) -> None:
        try:
            self._dispatch(topic, value, key, headers, timestamp, cb, partition, kind & ~(PROBE | UNCOUNTED))
        except BufferError:
            self._retry.append((_Held(topic, value, key, headers, timestamp, cb), partition))

    # -- driver thread ---------------------------------------------------------------------------------------

    def _drive(self) -> None:
        next_tick = 0.0
        try:
            while not self._stop.is_set():
                # Reports are normally served by the producing thread (see _serve_reports); the driver serves
                # them once per tick, right before judging the partitions, so an idle or blocked application
                # never delays a mute by more than one tick.
                now = self._clock()
                if now >= next_tick:
                    next_tick = now + self._tick_s
                    self._tick(now)
                self._stop.wait(max(0.001, next_tick - self._clock()))
        except BaseException as err:  # surfaced to the application on its next poll/flush
            self._driver_error = err
            log.error("driver_thread_failed", producer=self.name, error=repr(err))
            self._callbacks.wake()

    def _raise_driver_error(self) -> None:
        if self._driver_error is not None:
            from mutepro.errors import MuteproError

            raise MuteproError(f"the MuteProducer driver thread failed: {self._driver_error!r}") from self._driver_error

    def _metadata_loop(self) -> None:
        """Load and refresh topic metadata on its own thread: list_topics() blocks up to its timeout (a stalled
        broker makes it wait), and the driver thread must not stop judging partitions meanwhile."""
        try:
            while not self._stop.wait(_METADATA_POLL_S):
                self._load_metadata(self._clock())
        except BaseException as err:  # surfaced to the application on its next poll/flush
            self._driver_error = err

    def _tick(self, now: float) -> None:
        tracker = self._tracker
        # Judge only on served reports: a partition whose reports merely sit unserved must not look silent.
        if self._fast is None:
            with self._lock:
                self._serve_reports()
        elif self._fast.app_polls == self._app_polls_seen and not self._fast.app_pollers:
            # The application has not polled since the last tick and is not waiting in poll()/flush() right now:
            # serve its reports here (queued for its next poll). When it does poll, its own poll() runs the
            # callbacks directly and the driver stays out of the way: serving here would queue reports and make
            # every later one queue behind them.
            self._inner.poll(0)  # the C reporter needs no lock (and Python reports take it themselves)
        if self._fast is not None:
            self._app_polls_seen = self._fast.app_polls
        with self._lock:  # the C fast path counts on other threads: read-and-zero under the gate
            tracker.checkpoint(now)
            drained = list(tracker.drain())
        for topic, p, calls, failures, slow in drained:
            self._manager.record_many(topic, p, calls, failures, slow, now)
        opened = self._manager.evaluate(tracker.load, self._stats)
        if opened:
            self._rescue(opened)
        if self._holds:
            self._release_holds()
        if self._retry:
            self._resend_retries()
        if self._rescue_moves:
            with self._lock:
                rescued, self._rescue_moves = self._rescue_moves, {}
            for (topic, origin, why), targets in rescued.items():
                log.debug(
                    "messages_rescued", topic=topic, partition=origin, why=why, rescued=sum(targets.values()),
                    to_partitions=targets,
                )
        if self._reroutes:
            with self._lock:
                reroutes, self._reroutes = self._reroutes, {}
            for (topic, home), targets in reroutes.items():
                log.info(
                    "partition_reroute", topic=topic, partition=home, broker=self._manager.leader(topic, home),
                    rerouted=sum(targets.values()), to_partitions=targets,
                )
        self._refresh_weights(now)

    def _load_metadata(self, now: float) -> None:
        due = [t for t in self._manager.known_topics() if now - self._topic_checked.get(t, 0.0) > _METADATA_REFRESH_S]
        wanted = [t for t in self._wanted_topics if t not in self._unassigned_topics]  # see _unassigned_topics
        for topic in {*wanted, *due}:
            self._topic_checked[topic] = now
            try:
                md = self._inner.list_topics(topic, timeout=1.0)
            except KafkaException as err:
                log.debug("metadata_unavailable", topic=topic, error=str(err))
                continue
            tmd = md.topics.get(topic)
            if tmd is None or tmd.error is not None or not tmd.partitions:
                continue
            leaders = {p: pm.leader for p, pm in tmd.partitions.items()}
            policy = self._policy_for(topic)
            slow_s = policy.slow_call.threshold_ms / 1000.0 if policy.slow_call.enabled else float("inf")
            with self._lock:
                self._tracker.ensure(topic, len(tmd.partitions), slow_s)
            self._manager.ensure_topic(topic, len(tmd.partitions), leaders)
            self._wanted_topics.discard(topic)

    def _refresh_weights(self, now: float) -> None:
        if now - self._weights_at < _WEIGHTS_REFRESH_S:
            return
        self._weights_at = now
        for topic in self._manager.known_topics():
            if self._policy_for(topic).partitioner.adaptive:
                self._manager.refresh_weights(topic, self._tracker.counts(topic))

    def _rescue(self, opened: Sequence[tuple[str, int]]) -> None:
        """Purge librdkafka's queues and re-send what was queued, routed around the newly muted partitions."""
        if self._idempotent:
            # New messages still go around the muted partitions (or wait in the hold); what librdkafka already
            # queued for them waits for their broker, as in the plain client. Said once, not on every mute.
            if not self._rescue_skip_logged:
                self._rescue_skip_logged = True
                log.info(
                    "rescue_skipped",
                    reason="transactional producer" if self._transactional else "enable.idempotence=true",
                    detail="messages already queued for a muted partition stay queued (a purge would break the "
                    "idempotent sequence); new messages are routed or held as the policy says",
                )
            return
        moved: dict[tuple[str, int], dict[int, int]] = {}
        fast = self._fast
        if fast is not None:
            # C path: the application's poll() runs without the producer lock, so it could serve some of the
            # purge reports below, late and on its own thread. Keep new polls out and wait (bounded: a poll waits
            # in librdkafka at most _DIRECT_WAIT_S at a time) until no other thread is inside one.
            self._no_rescue.clear()
            fast.rescue_pending = 1
            deadline = time.monotonic() + _RESCUE_QUIET_S
            while (fast.app_pollers or fast.inline_pollers) and time.monotonic() < deadline:
                time.sleep(0.001)
        try:
            batch = self._rescue_locked(moved)
        finally:
            if fast is not None:
                fast.rescue_pending = 0
                self._no_rescue.set()
        for (topic, partition), targets in moved.items():
            log.info(
                "partition_rescue", topic=topic, partition=partition, broker=self._manager.leader(topic, partition),
                rescued=sum(targets.values()), to_partitions=targets,
            )
        if batch:
            log.info("rescue_done", purged=len(batch), moved=sum(sum(t.values()) for t in moved.values()))

    def _rescue_locked(self, moved: dict[tuple[str, int], dict[int, int]]) -> list[Any]:
        with self._lock:
            self._rescuing = True
            self._rescue_batch = []
            self._rescue_purge_at = self._clock()
            try:
                self._inner.purge(in_queue=True, in_flight=False, blocking=True)
                # drain until librdkafka has had a moment with nothing more to report (a report still on its way
                # when the drain ends would be re-sent late, behind newer messages)
                while self._inner.poll(_RESCUE_DRAIN_S) > 0:
                    pass
            finally:
                self._rescuing = False
            batch, self._rescue_batch = _in_enqueue_order(self._rescue_batch), []
            held_back: dict[tuple[str, int], list[_Held]] = {}
            for cb, kind, msg in batch:
                before = _partition_of(msg)
                target = self._redispatch(cb, kind, msg, held_back)
                if target is not None and target != before:
                    counts = moved.setdefault((_topic_of(msg), before), {})
                    counts[target] = counts.get(target, 0) + 1
            self._hold_front(held_back)
        return batch

    def _hold_front(self, held_back: dict[tuple[str, int], list[_Held]], straggler: bool = False) -> None:
        """Put purged messages back into their hold queues, in front of everything held there.

        A purged message is older than anything its partition holds: while a partition is muted its messages are
        held, and the only ones handed to librdkafka are released from the head of the queue (probes, releases).
        Their times do not say so: a purge report's time counts from the last hand-over (a probe released at T
        reports T, later than the messages produced before T that wait behind it), so merging by time put a
        released-then-purged message behind younger ones (key 2: sequence 85 written before 84). Among
        themselves, purged messages are ordered by that time (one purge is reported in parts, not in order).
        A straggler (a purge report served after its rescue) belongs among the purged run at the front."""
        for key, items in held_back.items():
            ordered = sorted(items, key=_by_enqueue_time)
            queue = self._holds.get(key)
            if queue:
                if straggler:
                    run: list[_Held] = []
                    while queue and queue[0].purged:
                        run.append(queue.popleft())
                    ordered = list(heapq.merge(run, ordered, key=_by_enqueue_time))
                ordered.extend(queue)
            self._holds[key] = deque(ordered)
            self._held_total += len(items)
            self.counters.held += len(items)

    def _redispatch(
        self, cb: DeliveryCallback | None, kind: int, msg: Message, held_back: dict[tuple[str, int], list[_Held]]
    ) -> int | None:
        """Re-send one purged message; returns its new partition (None if held or failed)."""
        topic, current = _topic_of(msg), _partition_of(msg)
        value, key, headers, timestamp = msg.value(), msg.key(), msg.headers(), _create_time(msg)
        snap = self._manager.snapshot(topic)
        if current < 0 and snap is not None and key is not None and self._home_of is not None:
            # Purged from librdkafka's unassigned queue (sent before the topic's metadata was known). Sent there
            # again it would wait for librdkafka's next metadata refresh, while the key's newer messages go
            # straight to its partition: written after them (sequence 56 before 55). Its home is known now.
            home = self._home_of(key, snap.partition_count)
            if home is not None:
                current = home
                kind &= ~UNCOUNTED
        if kind & EXPLICIT or snap is None or current not in snap.muted:
            self.counters.requeued += 1
            self._resend(topic, value, key, headers, timestamp, cb, current, kind)
            return current
        policy = self._policy_for(topic)
        home = self._home_of(key, snap.partition_count) if (key is not None and self._home_of) else None
        if home is None:
            enabled = policy.rescue.enabled
            target = self._partitioner.partition(topic, None, len(value or b""), snap) if enabled else None
            if target is None or target < 0:
                self._resend(topic, value, key, headers, timestamp, cb, current, kind)
                return current
            self._move(cb, msg, target, "muted")
            return target
        keyed = policy.keyed_policy
        if keyed == KeyedPolicy.HOLD:
            held_back.setdefault((topic, home), []).append(
                _Held(topic, value, key, headers, timestamp, cb, _enqueued_at(msg), purged=True)
            )
            return None
        if keyed == KeyedPolicy.REROUTE and policy.rescue.enabled:
            target = reroute_partition(key, home, snap)
            if target is not None:
                self._move(cb, msg, target, "muted")
                return target
        if keyed == KeyedPolicy.FAIL:
            self.counters.muted_fail += 1
            error = KafkaError(KafkaError._STATE, f"mutepro: {topic}[{current}] was muted; keyed_policy=fail")
            self._fail(_Held(topic, value, key, headers, timestamp, cb), error, current)
            return None
        self._resend(topic, value, key, headers, timestamp, cb, current, kind)
        return current

    def _resend_retries(self) -> None:
        with self._lock:
            while self._retry:
                held, partition = self._retry[0]
                try:
                    self._dispatch(
                        held.topic, held.value, held.key, held.headers, held.timestamp, held.callback, partition,
                        NORMAL,
                    )
                except BufferError:
                    return
                self._retry.popleft()

    def _release_holds(self) -> None:
        """Release held messages, in order, to partitions that are writable again (one probe if half-open)."""
        with self._lock:
            for key in list(self._holds):
                topic, home = key
                queue = self._holds[key]
                snap = self._manager.snapshot(topic)
                if snap is None:
                    continue
                if self._tracker.count(topic, home):
                    # Order barrier: messages sent to this partition before it was muted have no final report yet
                    # (in flight to a stopped leader, say). librdkafka retries them, after a leader change on the
                    # new leader, so a held message released now would be written before them: key 39's
                    # sequences 201-205 after 213. The plain producer waits for them just the same.
                    continue
                if home in snap.muted:
                    if queue and home in self._manager.probing(topic) and self._manager.try_probe(topic, home):
                        self.counters.probes += 1
                        self._release_one(queue, home, PROBE)
                    continue
                released = 0
                while queue:
                    if not self._release_one(queue, home, NORMAL):
                        break
                    released += 1
                if released:
                    log.info("hold_released", topic=topic, partition=home, released=released, left=len(queue))
                if not queue:
                    del self._holds[key]

    def _release_one(self, queue: deque[_Held], home: int, kind: int) -> bool:
        held = queue[0]
        try:
            self._dispatch(held.topic, held.value, held.key, held.headers, held.timestamp, held.callback, home, kind)
        except BufferError:
            return False
        queue.popleft()
        self._held_total -= 1
        self.counters.released += 1
        return True

    # -- librdkafka callbacks (driver thread) -------------------------------------------------------------

    def _on_stats(self, raw: str) -> None:
        try:
            snap = parse_stats(raw)
        except StatsParseError as err:
            log.debug("stats_unparsable", error=str(err))
        else:
            self._stats = snap
            by_topic: dict[str, dict[int, int]] = {}
            for (topic, p), ps in snap.partitions.items():
                if ps.leader >= 0:
                    by_topic.setdefault(topic, {})[p] = ps.leader
            for topic, leaders in by_topic.items():
                self._manager.update_leaders(topic, leaders)
        if self._user_stats_cb is not None:
            self._callbacks.put(self._user_stats_cb, raw)

    def _on_error(self, err: KafkaError) -> None:
        log.warning("client_error", producer=self.name, error=str(err), code=err.code())
        if self._user_error_cb is not None:
            self._callbacks.put(self._user_error_cb, err)

    def _on_throttle(self, event: Any) -> None:
        if self._user_throttle_cb is not None:
            self._callbacks.put(self._user_throttle_cb, event)

    def _on_mute_event(self, event: MuteEvent) -> None:
        if event.kind.muted:
            self.counters.mutes += 1
        elif event.kind == "unmute":
            self.counters.unmutes += 1


def _keeping_headers(
    reporter: Callable[[KafkaError | None, Message], None], headers: Any
) -> Callable[[KafkaError | None, Message], None]:
    """A delivery report carries no headers; a failed message that is re-sent from its report (rescue, timeout)
    gets its own back first. One closure per message with headers, only for those."""

    def report(err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            msg.set_headers(headers)
        reporter(err, msg)

    return report


def _by_enqueue_time(held: _Held) -> float:
    return held.enqueued


def _enqueued_at(msg: Message) -> float | None:
    """When the application produced ``msg`` (time.monotonic), from its report: now - latency (librdkafka's
    clock is CLOCK_MONOTONIC too). None without a latency."""
    latency = msg.latency()
    return time.monotonic() - latency if latency is not None and latency >= 0 else None


def _in_enqueue_order(
    batch: list[tuple[float | None, DeliveryCallback | None, int, Message]],
) -> list[tuple[DeliveryCallback | None, int, Message]]:
    """The rescue batch in the order its messages were produced (a report without a latency keeps the place of
    the report before it). Stable: equal times keep report order."""
    keyed: list[tuple[float, int, tuple[DeliveryCallback | None, int, Message]]] = []
    last = float("-inf")
    for i, (enqueued, cb, kind, msg) in enumerate(batch):
        if enqueued is not None:
            last = enqueued
        keyed.append((last, i, (cb, kind, msg)))
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [item[2] for item in keyed]


def _with_header(headers: Any, name: str, value: bytes) -> Any:
    if headers is None:
        items: list[tuple[str, Any]] = []
    elif isinstance(headers, Mapping):
        items = list(headers.items())
    else:
        items = list(headers)
    items = [(k, v) for k, v in items if k != name]
    items.append((name, value))
    return items


def _coerce_policy(policy: Any) -> Policy | TopicPolicy:
    if policy is None:
        return TopicPolicy()
    if isinstance(policy, Policy | TopicPolicy):
        return policy
    if isinstance(policy, Mapping | str | Path | os.PathLike):
        from mutepro.policy.loader import load_policy

        return load_policy(policy)
    raise TypeError(
        f"policy must be a Policy, a TopicPolicy, a path or a mapping (or None), got {type(policy).__name__}"
    )


def _while_alive(loop: Callable[[Any], None], producer: Any) -> None:
    """Run a producer thread's loop on a weak proxy; it ends once the producer was garbage collected."""
    with contextlib.suppress(ReferenceError):
        loop(producer)


_ids = itertools.count(1)
