"""How one MuteProducer's parts are built: :func:`assemble`, once, in dependency order, each part from explicit
arguments, into a frozen :class:`Parts`. The producer (:mod:`mutepro.producer.producer`) is the facade over them.

The order, and why:

1. the librdkafka config and the wrapped client first: every setting librdkafka refuses raises what the real
   client raises before any check of mutepro's own (the client gets the producer's callbacks, ``Hooks``);
2. the policy, adapted to the client's ``message.timeout.ms``; the partitioner; the tracker and counters;
3. the pacer and the mute-event listener (counters, pacer, trace recorder: none needs the manager), so that the
   manager is handed a complete listener; then the manager, and the partitioner's ``initialize(manager)`` (the
   public :class:`~mutepro.partition.MutingPartitioner` protocol);
4. the core, holds, router, rescuer, slow path and report handler, each from the ones before;
5. the C fast path, from the report handler and the producer's slow calls; then the report serving and the
   driver, which need it.

One loop cannot be ordered away: a message's own. The fast path hands reports to the report handler, which
re-sends (a timed-out message, a rescue) through the core, which sends through the fast path. The core (and its
lock) is built with a :class:`~mutepro.producer.core.Later` cell for the fast path and the report handler's
reporter factory, set once below. What is still set on a part after it is built is named under ``_link`` with
the constructor argument it lacks.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import confluent_kafka

from mutepro.logs import apply_policy_logging
from mutepro.mute.brokers import acks_wait_for_isr
from mutepro.mute.factory import build_detectors
from mutepro.mute.manager import DetectorFactory, ProducerMuteManager, QueueCounts
from mutepro.mute.store import BreakerStore, MemoryStore
from mutepro.partition.protocols import DefaultMutingPartitioner, HomePartitioner, MutingPartitioner
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.policy.effective import Policy
from mutepro.policy.schema import TopicPolicy
from mutepro.producer import compat, options
from mutepro.producer.callbacks import CallbackQueue
from mutepro.producer.core import Clock, Core, GatedLock, Later
from mutepro.producer.driver import Driver
from mutepro.producer.holds import HoldQueues
from mutepro.producer.listening import MuteEventListener
from mutepro.producer.locality import AdminRackSource, LocalityMeter, RackSource
from mutepro.producer.message import DeliveryCallback
from mutepro.producer.metrics import MuteproCollector, ProducerCounters
from mutepro.producer.pacing import IDLE_ROUND_S, Pacer
from mutepro.producer.reports import ReportHandler
from mutepro.producer.rescue import Rescuer
from mutepro.producer.routing import Router
from mutepro.producer.serving import DirectServing, build_fast_path
from mutepro.producer.slowpath import SlowPath
from mutepro.producer.tracker import OutstandingTracker
from mutepro.trace.record import TraceRecorder

#: ``(config) -> the wrapped producer``: confluent_kafka's C class by default, a fake in unit tests.
InnerFactory = Callable[[dict[str, Any]], Any]

#: flush() waits for reports this long at a time, then counts what is left (a report arriving ends the wait at
#: once): librdkafka's own flush re-checks every 10 ms, so the plain client wakes as often. Each wake costs
#: CPU (~40-60 us on the 2-core test machine after 10 ms asleep): 5 ms cost 2x the plain client's flush(1.0).
FLUSH_RECHECK_S = 0.01
#: C's produce() serves delivery reports inline every this many messages (FastPath inline_poll_every)
_C_INLINE_POLL_EVERY = 1024

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Hooks:
    """What the parts call on the producer facade: the Python calls the C fast path hands over (a subclass may
    override produce/poll/flush, so these are MuteProducer's own, bound), the count ``len()`` reads, the metrics
    read for Prometheus, the per-partition counts the mute manager reads, and librdkafka's client callbacks
    (forwarded to the driver, built last)."""

    slow_produce: Callable[..., None]
    slow_poll: Callable[..., int]
    slow_flush: Callable[..., int]
    pending: Callable[[], int]
    metrics: Callable[[], dict[str, Any]]
    outstanding: Callable[[str, int], int]
    accumulated: Callable[[str, int], int]
    in_flight: Callable[[str, int], int]
    on_error: Callable[[Any], None]
    on_stats: Callable[[str], None]
    on_throttle: Callable[[Any], None]


@dataclass(frozen=True, slots=True)
class Arguments:
    """MuteProducer's constructor arguments, as given (see its docstring)."""

    config: Mapping[str, Any] | None
    kwargs: Mapping[str, Any]
    policy: Policy | TopicPolicy | Mapping[str, Any] | str | os.PathLike[str] | None
    clock: Clock
    partitioner: MutingPartitioner | str | None
    store: BreakerStore | None
    detector_factory: DetectorFactory | None
    tick_interval_s: float
    name: str | None
    inner_factory: InnerFactory | None
    rack_source: RackSource | None
    trace: str | os.PathLike[str] | None


@dataclass(frozen=True, slots=True)
class Parts:
    """One producer's parts, built once by :func:`assemble` (the producer's attributes: see :meth:`attributes`)."""

    name: str
    counters: ProducerCounters
    clock: Clock
    tick_s: float
    flush_pause_s: float
    idle_round_s: float | None
    policy: Policy | TopicPolicy
    user_on_delivery: DeliveryCallback | None
    inner: Any
    tracker: OutstandingTracker
    manager: ProducerMuteManager
    snapshots: Mapping[str, TopicSnapshot]
    core: Core
    callbacks: CallbackQueue
    lock: GatedLock
    pacer: Pacer
    holding: HoldQueues
    router: Router
    rescuer: Rescuer
    slow: SlowPath
    fast: Any
    serving: DirectServing
    locality: LocalityMeter | None
    driver_part: Driver
    collector: MuteproCollector | None
    prometheus_port: int | None

    def attributes(self) -> dict[str, Any]:
        """The producer's attributes: ``_`` + each part's name, the public ``name`` and ``counters`` as they are."""
        return {
            (f if f in ("name", "counters") else f"_{f}"): getattr(self, f)
            for f in self.__dataclass_fields__
        }


def assemble(args: Arguments, hooks: Hooks) -> Parts:
    """Build every part of one producer, in the order the module docstring gives."""
    conf = compat.config_from_args(args.config, args.kwargs)  # a copy: the caller's dict is never touched
    partitioner = args.partitioner
    if isinstance(partitioner, str):  # Producer(conf, partitioner="murmur2"): librdkafka's setting, not ours
        conf["partitioner"], partitioner = partitioner, None
    options.refuse_mutepro_keys(conf)
    policy = options.coerce_policy(args.policy)
    client_rack, rack_aware_all = options.rack_awareness(conf, policy)
    apply_policy_logging(policy)  # the policy's logging: section, if it has one (see mutepro.logs)
    options.check_tick(args.tick_interval_s)
    name = args.name or f"mutepro-{next(_ids)}"
    users = options.UserCallbacks(conf)
    if "statistics.interval.ms" not in conf:
        conf["statistics.interval.ms"] = 1000  # broker-level detection reads librdkafka's statistics
    conf.setdefault("error_cb", hooks.on_error)
    conf.setdefault("stats_cb", hooks.on_stats)
    conf.setdefault("throttle_cb", hooks.on_throttle)
    # The C class itself, not the name confluent_kafka.Producer: a test run (mutepro.testing.dropin) or an
    # application may point that name at MuteProducer.
    inner = (args.inner_factory or confluent_kafka.cimpl.Producer)(conf)

    policy = compat.adapt_slow_call(policy, compat.message_timeout_ms(conf))
    policy_for = functools.partial(options.topic_policy, policy)
    partitioner_name = str(conf.get("partitioner", "consistent_random"))
    chosen = partitioner or options.default_partitioner(conf, policy_for(""))
    default = chosen if type(chosen) is DefaultMutingPartitioner else None
    sticky = options.sticky_chooser(default, partitioner_name)
    tracker = OutstandingTracker(
        options.setting(conf, "queue.buffering.max.messages"),
        options.setting(conf, "queue.buffering.max.kbytes") * 1024,
    )
    counters = ProducerCounters(tracker.totals)
    pacer = Pacer()
    recorder = None if args.trace is None else TraceRecorder(args.trace, conf, clock=args.clock)
    breakers = args.store if args.store is not None else options.store_of(policy)
    manager = ProducerMuteManager(
        policy_for, clock=args.clock, store=breakers, on_event=MuteEventListener(counters, pacer, recorder),
        detector_factory=args.detector_factory or build_detectors, client_rack=client_rack,
        rack_aware_all=rack_aware_all, acks_all=acks_wait_for_isr(conf.get("acks", conf.get("request.required.acks"))),
        counts=QueueCounts(hooks.outstanding, hooks.accumulated, hooks.in_flight),
    )
    chosen.initialize(manager)  # the partitioner's manager: MutingPartitioner.initialize, the public protocol

    fast_link: Later[Any] = Later("the C fast path")
    core = Core(
        inner=inner, clock=args.clock, tracker=tracker, counters=counters, manager=manager, policy_for=policy_for,
        only_errors=users.only_errors, pacer=pacer, fast=fast_link,
    )
    holding = HoldQueues(core)
    router = Router(
        chosen, chosen.home_partition if isinstance(chosen, HomePartitioner) else None, sticky,
        probing=manager.probes.probing, grant=manager.probes.try_probe,
        keyed_policy=lambda t: policy_for(t).keyed_policy,
        reason=functools.partial(_mute_reason, manager),
    )
    rescuer = Rescuer(
        core, router, holding, idempotent=options.is_idempotent(conf), transactional="transactional.id" in conf,
    )
    slow = SlowPath(core, router, holding)
    reports = ReportHandler(core, rescuer)
    # The hot path: produce() in C, callbacks run straight from the application's poll (see serving).
    fast = build_fast_path(
        inner=inner, snapshots=manager.snapshots, tracker=tracker, holds=holding.queues,
        slow_produce=hooks.slow_produce, on_report=reports.on_report, callbacks=core.callbacks,
        default_cb=users.on_delivery, only_errors=users.only_errors, default=default, sticky=sticky is not None,
        partitioner_name=partitioner_name, inline_poll_every=_C_INLINE_POLL_EVERY, reroutes=core.reroutes,
        slow_poll=hooks.slow_poll, poll_error=compat.LOST_INTERRUPT_CONVERTER, slow_flush=hooks.slow_flush,
        pending=hooks.pending, resends=holding.retry, inner_flush=inner.flush,
    )
    serving = DirectServing(fast, inner.poll, core.callbacks)
    _link(fast_link, fast, serving, rescuer, pacer)

    locality = LocalityMeter() if client_rack is not None else None
    driver = Driver(
        core, holding, rescuer, serving, name=name,
        user_stats_cb=users.stats_cb, user_error_cb=users.error_cb, user_throttle_cb=users.throttle_cb,
        racks=None if client_rack is None else (args.rack_source or AdminRackSource(conf)), locality=locality,
        recorder=recorder,
    )
    metrics = policy.metrics if isinstance(policy, Policy) else None
    exported = metrics if metrics is not None and metrics.prometheus_port is not None else None
    return Parts(
        name=name, counters=counters, clock=args.clock, tick_s=args.tick_interval_s,
        flush_pause_s=min(FLUSH_RECHECK_S, args.tick_interval_s / 2), idle_round_s=_idle_round(args.store, breakers),
        policy=policy, user_on_delivery=users.on_delivery, inner=inner, tracker=tracker, manager=manager,
        snapshots=manager.snapshots, core=core, callbacks=core.callbacks, lock=core.lock, pacer=pacer,
        holding=holding, router=router, rescuer=rescuer, slow=slow, fast=fast,
        serving=serving, locality=locality, driver_part=driver,
        collector=None if exported is None else MuteproCollector(name, hooks.metrics, exported.namespace),
        prometheus_port=None if exported is None else exported.prometheus_port,
    )


def _link(
    fast_link: Later[Any], fast: Any, serving: DirectServing, rescuer: Rescuer, pacer: Pacer,
) -> None:
    """The links of the message's loop (see the module docstring), made once, before the producer serves a call.

    The cell the core was built with is set here. The rest are attributes set on a part after it is built
    because of the same loop: the rescuer's ``serving`` (the rescuer is built before the fast path, whose reports
    reach it) and the pacer's ``fast`` (the pacer is built first: the core and the fast path's sends wake it).
    """
    fast_link.set(fast)
    rescuer.serving = serving
    pacer.fast = fast
    # poll(0) and flush() in C too (FastPath.poll / .flush); every other call, and a subclass's own, in Python


def _idle_round(given: BreakerStore | None, breakers: BreakerStore | None) -> float | None:
    """A store this producer alone writes (none given, or the policy's "memory") changes only in its own rounds: a
    parked driver sleeps until the next send (None). Another store may be written by other producers: an idle
    round each IDLE_ROUND_S adopts their mutes before the next message goes out (see pacing)."""
    private = given is None and (breakers is None or isinstance(breakers, MemoryStore))
    return None if private else IDLE_ROUND_S


def _mute_reason(manager: ProducerMuteManager, topic: str, partition: int) -> str | None:
    """Why ``topic``'s ``partition`` is muted, as the mute manager's state says it: None when it is not."""
    reason: str | None = manager.state()["topics"].get(topic, {}).get(partition, {}).get("reason")
    return reason
