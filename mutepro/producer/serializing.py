"""MuteSerializingProducer: ``confluent_kafka.SerializingProducer``'s API on :class:`MuteProducer`.

``SerializingProducer`` subclasses the C class ``confluent_kafka.cimpl.Producer``, so it cannot sit on top of
MuteProducer; this class gives its constructor, ``produce()``, errors and ``close()`` to MuteProducer instead.
The serde handling (``key.serializer`` / ``value.serializer``, their ``.builder`` forms, ownership, the cluster id
resolver) is confluent-kafka's own, called through its helpers in ``confluent_kafka._serde_builder``, so it stays
in step with the installed client.

Each message is serialized exactly once, in :meth:`MuteSerializingProducer.produce`; everything after that --
routing around muted partitions, holds, the rescue's re-sends -- handles the bytes MuteProducer was given.
"""

from __future__ import annotations

import contextlib
import inspect
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic

from confluent_kafka._serde_builder import (
    SharedClusterIdResolver,
    build_serdes,
    close_serdes,
    pop_serde_props,
    propagate_cluster_id_resolver,
)
from confluent_kafka.error import KeySerializationError, ValueSerializationError
from confluent_kafka.serialization import MessageField, SerializationContext

from mutepro.producer import compat
from mutepro.producer.message import DeliveryCallback
from mutepro.producer.producer import MuteProducer

if TYPE_CHECKING:
    # As confluent-kafka's SerializingProducer does: defaults (PEP 696) so that an unparameterised
    # MuteSerializingProducer(conf) is MuteSerializingProducer[Any, Any]; typing_extensions only for the checker.
    from typing_extensions import TypeVar

    K = TypeVar("K", default=Any)
    V = TypeVar("V", default=Any)
else:
    from typing import TypeVar

    K = TypeVar("K")
    V = TypeVar("V")

#: MuteProducer's own keyword arguments (``policy``, ``accelerate``, ...); every other keyword is a librdkafka
#: setting, as with ``MuteProducer(conf, **settings)``. Read from the signature so that a new one is never missed.
_MUTEPRO_KWARGS = frozenset(
    p.name for p in inspect.signature(MuteProducer.__init__).parameters.values() if p.kind is p.KEYWORD_ONLY
)


class MuteSerializingProducer(MuteProducer, Generic[K, V]):
    """A drop-in ``confluent_kafka.SerializingProducer`` that mutes bad partitions and sends around them.

    ``conf`` is ``SerializingProducer``'s configuration: librdkafka's settings plus ``key.serializer`` /
    ``value.serializer`` (a ``confluent_kafka.serialization.Serializer`` or any ``(obj, SerializationContext) ->
    bytes`` callable, Schema Registry serializers included) or their ``key.serializer.builder`` /
    ``value.serializer.builder`` forms. The dict itself is never modified. MuteProducer's keyword arguments
    (``policy=``, ``partitioner=``, ``store=``, ``accelerate=``, ...) work as on :class:`MuteProducer`.

    Serializers built from a ``.builder`` are owned by the producer and closed by :meth:`close`, with any Schema
    Registry client the builder made; ready-made ones stay the application's, as with ``SerializingProducer``.

    Raises:
        ValueError: a serializer and its builder are both configured.
    """

    # An instance whose __init__ never ran is closed (MuteProducer._closed): produce() raises before serializing.
    _key_serializer: Any = None
    _value_serializer: Any = None
    _owned_serdes: list[Any] | None = None

    def __init__(self, conf: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        mine = {k: v for k, v in kwargs.items() if k in _MUTEPRO_KWARGS}
        settings = {k: v for k, v in kwargs.items() if k not in _MUTEPRO_KWARGS}
        config = compat.config_from_args(conf, settings)  # a copy: the caller's dict is never touched
        specs, config = pop_serde_props(config, "key.serializer", "value.serializer")
        (self._key_serializer, self._value_serializer), self._owned_serdes, config = build_serdes(specs, config)
        try:
            super().__init__(config, **mine)
            propagate_cluster_id_resolver(
                SharedClusterIdResolver(_cluster_id_of(self)), [self._key_serializer, self._value_serializer]
            )
        except BaseException:
            # the producer never came up: nobody else can close the serializers built for it
            owned, self._owned_serdes = self._owned_serdes or [], []
            with contextlib.suppress(Exception):  # the construction error is the one the caller needs
                close_serdes(owned)
            raise
        # The bytes go to MuteProducer's produce, in C (MuteProducer.__init__ only puts it on self.produce when a
        # subclass leaves produce alone, so it is taken here).
        self._produce_bytes: Callable[..., None] = self._fast.produce

    def produce(  # type: ignore[override]  # SerializingProducer's signature: key before value
        self,
        topic: str,
        key: K | None = None,
        value: V | None = None,
        partition: int = -1,
        on_delivery: DeliveryCallback | None = None,
        timestamp: int = 0,
        headers: Any = None,
    ) -> None:
        """Serialize ``key`` and ``value`` and produce the message, like ``SerializingProducer.produce``.

        The serializers get ``SerializationContext(topic, MessageField.KEY / VALUE, headers)``; an object without
        a serializer is passed on as it is. They run once per message: a message MuteProducer later re-sends
        (muted partition, hold queue, full queue) is re-sent as the bytes made here.

        Raises:
            RuntimeError: the producer is closed (checked before the serializers run).
            TypeError: ``topic`` is not a str (likewise checked first).
            KeySerializationError: the key serializer raised (the error is its ``exception``).
            ValueSerializationError: the value serializer raised.
            BufferError: the local queue is full: serve reports with ``poll()`` and retry.
            KafkaException: for every other error, as ``confluent_kafka.Producer.produce``.
        """
        # Before the serializers: they may have side effects (a schema registered) for a message that cannot go.
        if self._closed:
            raise compat.closed_error()
        if not isinstance(topic, str):
            raise TypeError(f"topic must be a str, not {type(topic).__name__}")
        key_bytes: Any = key
        value_bytes: Any = value
        ctx = SerializationContext(topic, MessageField.KEY, headers)
        if self._key_serializer is not None:
            try:
                key_bytes = self._key_serializer(key, ctx)
            except Exception as err:
                raise KeySerializationError(err) from err
        ctx.field = MessageField.VALUE
        if self._value_serializer is not None:
            try:
                value_bytes = self._value_serializer(value, ctx)
            except Exception as err:
                raise ValueSerializationError(err) from err
        self._produce_bytes(topic, value_bytes, key_bytes, partition, on_delivery, timestamp, headers)

    def _bytes_producer(self) -> Callable[..., None]:
        """What ``produce_batch`` sends with: MuteProducer's produce, unserialized, as ``SerializingProducer``'s
        ``produce_batch`` (the C Producer's) sends its messages as they are.

        Returns:
            The bytes ``produce``, ``(topic, value, key, partition, on_delivery, timestamp, headers)``.
        """
        return self._produce_bytes

    def close(self, timeout: float | None = None, *_ignored: object, **_ignored_kw: object) -> bool:
        """Close the producer (as :meth:`MuteProducer.close`, other arguments ignored as there), then the
        serializers it built from a ``.builder``.

        Safe to call more than once. If closing the producer raises (a delivery callback's exception), the
        serializers are kept and the next call closes them, as with ``SerializingProducer.close``.
        """
        result = super().close(timeout)
        # Only now: the flush inside close() runs delivery callbacks, which may still produce() on this thread.
        owned, self._owned_serdes = self._owned_serdes or [], []
        close_serdes(owned)
        return result


def _cluster_id_of(producer: MuteProducer) -> Callable[..., Any]:
    """``producer.cluster_id`` through a weak reference: a serializer the application keeps (and shares) must not
    keep a dropped producer, its threads and its librdkafka handle alive."""
    ref = weakref.ref(producer)

    def cluster_id(timeout: float | None = None) -> Any:
        live = ref()
        if live is None:
            raise RuntimeError(compat.CLOSED)
        return live.cluster_id(timeout=timeout)

    return cluster_id
