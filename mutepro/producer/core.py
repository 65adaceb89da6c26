"""What every part of MuteProducer shares: the wrapped client, the lock, the counts, and the one way a message is
handed to librdkafka (:meth:`Core.dispatch`) or failed without it (:meth:`Core.fail`).

The parts (:mod:`~mutepro.producer.routing`, :mod:`~mutepro.producer.holds`, :mod:`~mutepro.producer.rescue`,
:mod:`~mutepro.producer.reports`, :mod:`~mutepro.producer.driver`) each keep their own state and reach each
other only through the ``Core`` they are given, so each can be built and tested alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from confluent_kafka import KafkaError, KafkaException

from mutepro.mute.manager import ProducerMuteManager
from mutepro.policy.schema import TopicPolicy
from mutepro.producer.callbacks import CallbackQueue
from mutepro.producer.message import PROBE, DeliveryCallback, OutMessage
from mutepro.producer.metrics import ProducerCounters
from mutepro.producer.pacing import Pacer
from mutepro.producer.tracker import OutstandingTracker

Clock = Callable[[], float]
_REPORTER_CACHE = 512
T = TypeVar("T")


class Later(Generic[T]):
    """A part that is built after the part holding this cell, where the two need each other: set exactly once, by
    :func:`mutepro.producer.assembly.assemble`, before the producer serves its first call.

    Why a cell and not an attribute set afterwards: the holder is complete when it is built (it names, in its
    constructor, what it will reach later), and nothing can re-point it: a second :meth:`set` raises. The one
    cycle it ties is the message's own loop: the C fast path hands reports to the report handler, which re-sends
    through the :class:`Core`, which sends through the fast path (see assembly's build order).
    """

    __slots__ = ("_value", "_what")

    def __init__(self, what: str) -> None:
        self._what = what
        self._value: T | None = None

    def set(self, value: T) -> None:
        """Provide the part, once."""
        if self._value is not None:
            raise RuntimeError(f"{self._what} was already set: a part is linked once, at assembly")
        self._value = value

    @property
    def value(self) -> T | None:
        """The part, or None while the producer is still being assembled."""
        return self._value

    def get(self) -> T:
        """The part; RuntimeError while it does not exist yet (a call during assembly that must not happen)."""
        value = self._value
        if value is None:
            raise RuntimeError(f"{self._what} is not built yet (it is built after the part asking for it)")
        return value


class GatedLock:
    """The producer lock. While it is held, the C fast path's ``gate`` is raised, so a produce() on another
    thread takes the Python path (and waits for the lock there) instead of counting while Python code is in
    the middle of reading or changing the same counters."""

    __slots__ = ("_fast", "_lock")

    def __init__(self, fast: Later[Any]) -> None:
        self._lock = threading.RLock()
        self._fast = fast

    def __enter__(self) -> None:
        self._lock.acquire()
        fast = self._fast.value
        if fast is not None:
            fast.gate += 1

    def __exit__(self, *exc: object) -> None:
        fast = self._fast.value
        if fast is not None:
            fast.gate -= 1
        self._lock.release()


class Core:
    """The shared state of one MuteProducer (see the module docstring)."""

    def __init__(
        self, *, inner: Any, clock: Clock, tracker: OutstandingTracker, counters: ProducerCounters,
        manager: ProducerMuteManager, policy_for: Callable[[str], TopicPolicy], only_errors: bool,
        pacer: Pacer, fast: Later[Any],
    ) -> None:
        self.inner = inner
        self.clock = clock
        self._fast = fast
        self.lock = GatedLock(fast)
        self.tracker = tracker
        # the per-message totals (produced/delivered/buffer_errors) are bumped on this object directly: going
        # through ProducerCounters' attribute forwarding would cost two Python calls per message
        self.totals = tracker.totals
        self.counters = counters
        self.manager = manager
        self.policy_for = policy_for
        self.only_errors = only_errors
        self.callbacks = CallbackQueue()
        # Topics produced to before their metadata was known: the driver loads it in the background.
        self.wanted_topics: set[str] = set()
        # Set by want_metadata(): wakes the metadata thread, which otherwise sleeps until a refresh is due. A
        # thread that woke every 50 ms for nothing cost a saturated producer on a loaded machine ~10 % of its rate:
        # each wake takes the GIL from the producing thread, and on busy cores each hand-over waits for a core.
        self.metadata_wanted = threading.Event()
        # Topics with messages left to librdkafka's partitioner (sent before their metadata was known) and no
        # report yet showing librdkafka placed them. Their messages wait in librdkafka's unassigned queue until
        # ITS metadata arrives; a message sent meanwhile with an explicit partition (ours) could reach the
        # partition's queue first and be written before older ones of the same key (seen: a key's sequences
        # 35-40 written after 41-42, at start). librdkafka places the whole unassigned queue at once, so the first
        # report of such a message with a partition shows the way is clear: only then is the topic routed here.
        self.unassigned_topics: set[str] = set()
        # ... and those librdkafka has placed since: it knows them, so it places later unassigned sends at once
        self.placed_topics: set[str] = set()
        # Partitions that delivered a message before the tracker knew their topic, topic -> {partition}: they are
        # warm when the tracker starts counting (see Driver.load_metadata), so their first stall is judged at the
        # slow-call threshold, not after the cold-start allowance meant for a broker never reached yet.
        self.early_delivered: dict[str, set[int]] = {}
        # keyed reroutes since the last tick, (topic, home) -> {target: count}: one event per tick, not per message
        self.reroutes: dict[tuple[str, int], dict[int, int]] = {}
        # parks the driver thread while the producer is idle; every send wakes it (see mutepro.producer.pacing)
        self.pacer = pacer

    @property
    def fast(self) -> Any:
        """The C fast path, whose ``send()`` replaces the Python one below where it can (None during assembly)."""
        return self._fast.value

    def want_metadata(self, topic: str) -> None:
        """Ask the metadata thread to load ``topic``'s metadata now (a send before it was known)."""
        if topic not in self.wanted_topics:
            self.wanted_topics.add(topic)
            self.metadata_wanted.set()

    def dispatch(self, m: OutMessage, partition: int, kind: int) -> None:
        """Hand one message to librdkafka for ``partition`` (UNASSIGNED: librdkafka's partitioner) and count it."""
        self.send(m.topic, m.value, m.key, m.headers, m.timestamp, m.callback, partition, kind)

    def send(
        self, topic: str, value: Any, key: Any, headers: Any, timestamp: int, cb: DeliveryCallback | None,
        partition: int, kind: int,
    ) -> None:
        """:meth:`dispatch` for a message not (yet) wrapped in an :class:`OutMessage` (the produce() path): through
        the C extension (``FastPath.send``: its reporter, the positional call, the partition's counts; a message
        with no tracked partition goes uncounted, librdkafka partitioning it for ``UNASSIGNED``)."""
        self._fast.get().send(topic, value, key, partition, cb, timestamp, headers, kind)
        if self.pacer.parked:  # after the count: see Pacer.park
            self.pacer.wake()

    def resend(self, m: OutMessage, partition: int, kind: int) -> bool:
        """:meth:`dispatch` for a message the application handed over earlier (a rescue, a hold release, a retry):
        False when librdkafka's queue is full (the caller keeps the message). Any other refusal (the topic gone
        from librdkafka's metadata: ``_UNKNOWN_TOPIC``) becomes the message's failed delivery report: produce()
        returned long ago, and an exception here would end the driver thread instead (seen in the chaos soak)."""
        try:
            self.dispatch(m, partition, kind)
        except BufferError:
            return False
        except KafkaException as err:
            self.refused(m, err, partition, kind)
        return True

    def refused(self, m: OutMessage, err: KafkaException, partition: int, kind: int) -> None:
        """A re-send librdkafka refused (see :meth:`resend`): the message's failed report, with librdkafka's error."""
        error = err.args[0] if err.args and isinstance(err.args[0], KafkaError) else KafkaError(KafkaError._FAIL)
        if kind & PROBE:
            self.manager.probes.probe_result(m.topic, partition, False)  # a probe never sent has failed
        self.fail(m, error, partition)

    def fail(self, m: OutMessage, error: KafkaError, partition: int) -> None:
        """Give a message that never reached librdkafka its final, failed report now (served by poll)."""
        self.counters.failed += 1
        if m.callback is not None:
            self.callbacks.put(m.callback, error, m.failed_report(error, partition))
        else:
            self.callbacks.wake()
