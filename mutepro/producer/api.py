"""The parts of MuteProducer's API that only pass through or read state: the confluent-kafka calls it forwards to
the wrapped producer (transactions, ``produce_batch`` over ``produce``, anything else by name), and mutepro's own
read-only API (mute manager, counts, metrics). Mixed into :class:`~mutepro.producer.producer.MuteProducer`, which
holds the attributes declared here."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Self

from confluent_kafka import KafkaException

from mutepro.errors import ConfigError
from mutepro.mute.manager import ProducerMuteManager
from mutepro.policy.effective import Policy
from mutepro.producer import compat
from mutepro.producer.core import Core
from mutepro.producer.driver import Driver
from mutepro.producer.holds import HoldQueues
from mutepro.producer.locality import LocalityMeter
from mutepro.producer.message import DeliveryCallback
from mutepro.producer.metrics import ProducerCounters
from mutepro.producer.tracker import OutstandingTracker

_METADATA_POLL_S = 0.05


class ClientPassthrough:
    """confluent-kafka calls MuteProducer forwards (to its own ``produce`` or to the wrapped producer)."""

    _closed: bool
    _inner: Any

    if TYPE_CHECKING:  # MuteProducer's (declared only: a member here would shadow the real ones in the MRO)

        def produce(self, topic: str, value: Any = None, key: Any = None, partition: int = -1,
                    on_delivery: DeliveryCallback | None = None) -> None: ...

        def close(self, timeout: float | None = None, *_ignored: object, **_ignored_kw: object) -> bool: ...

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
        produce = self._bytes_producer()
        accepted = 0
        for m, entry in zip(batch, messages, strict=True):
            try:
                produce(topic, m.value, m.key, m.partition, m.callback)
            except (BufferError, KafkaException) as err:
                entry["_error"] = compat.batch_error(compat.error_code(err))
            else:
                accepted += 1
        return accepted

    def _bytes_producer(self) -> Callable[..., None]:
        """What ``produce_batch`` sends each message with: ``produce`` (the C fast path's, once installed); a
        subclass whose ``produce`` takes something else (MuteSerializingProducer: objects, key first) names its
        bytes one."""
        return self.produce

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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MuteproApi:
    """mutepro's own read-only API of a MuteProducer."""

    # -- construction from YAML ------------------------------------------------------------------------

    @classmethod
    def from_policy(
        cls,
        *sources: str | os.PathLike[str] | Mapping[str, Any] | Policy,
        config: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Self:
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
        return cls(client, policy=policy, **kwargs)  # type: ignore[call-arg]  # a mixin of MuteProducer

    name: str
    counters: ProducerCounters
    _manager: ProducerMuteManager
    _tracker: OutstandingTracker
    _holding: HoldQueues
    _driver_part: Driver
    _locality: LocalityMeter | None
    _core: Core
    _stop: threading.Event

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
            self._core.want_metadata(topic)
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
        stats = self._driver_part.stats
        ps = stats.partitions.get((topic, partition)) if stats is not None else None
        return (ps.msgq_cnt + ps.xmit_msgq_cnt) if ps is not None else 0

    def in_flight(self, topic: str, partition: int) -> int:
        """Messages sent to the broker and awaiting its response (from the latest statistics)."""
        stats = self._driver_part.stats
        ps = stats.partitions.get((topic, partition)) if stats is not None else None
        return ps.msgs_inflight if ps is not None else 0

    def held(self, topic: str | None = None) -> int:
        """Messages held by ``keyed_policy: hold`` (for ``topic``, or all)."""
        return self._holding.held(topic)

    def metrics(self) -> dict[str, Any]:
        """Counters and per-partition state as a dict (what the Prometheus collector exports)."""
        state = self._manager.state()
        partitions: dict[str, dict[int, dict[str, Any]]] = {}
        for topic, parts in state["topics"].items():
            partitions[topic] = {
                p: {**info, "outstanding": self._tracker.count(topic, p), "held": self._holding.held_at(topic, p)}
                for p, info in parts.items()
            }
        return {
            "counters": self.counters.as_dict(),
            "partitions": partitions,
            "muted": self._manager.muted_partitions(),
            "muted_brokers": self._manager.muted_brokers(),
            "held": self._holding.total,
            "outstanding": self._tracker.total,
            "rack": None if self._locality is None else self._locality.as_dict(self._manager.racks.client_rack),
        }

    def __repr__(self) -> str:
        return f"<MuteProducer {self.name} outstanding={self._tracker.total} muted={self._manager.muted_partitions()}>"
