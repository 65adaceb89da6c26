"""``mutepro.aio.AsyncSerializingProducer``: confluent-kafka's ``AsyncSerializingProducer`` over
:class:`mutepro.aio.AIOProducer`.

confluent-kafka's class derives from its ``AIOProducer`` and its constructor calls ``AIOProducer.__init__`` by
name, which builds a plain ``confluent_kafka.Producer``. This class derives from both confluent-kafka's
``AsyncSerializingProducer`` and :class:`mutepro.aio.AIOProducer` (method order: confluent-kafka's serializing
``produce``/``close`` first, then mutepro's ``AIOProducer``, then confluent-kafka's) and replaces only the
constructor, building the serializers with confluent-kafka's own helpers and the producer with mutepro's.

Each message is serialized once, in ``produce()``, before it is buffered; MuteProducer re-sends (reroutes, hold
releases, rescues) carry those bytes and never call a serializer again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic

from confluent_kafka._serde_builder import (
    AsyncSharedClusterIdResolver,
    async_build_serdes,
    async_close_serdes,
    pop_serde_props,
    propagate_async_cluster_id_resolver,
)
from confluent_kafka.aio import AsyncSerializingProducer as _ConfluentAsyncSerializingProducer

from mutepro.aio.producer import AIOProducer

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    K = TypeVar("K", default=Any)
    V = TypeVar("V", default=Any)
else:
    from typing import TypeVar

    K = TypeVar("K")
    V = TypeVar("V")

__all__ = ["AsyncSerializingProducer"]


class AsyncSerializingProducer(_ConfluentAsyncSerializingProducer[K, V], AIOProducer, Generic[K, V]):
    """confluent-kafka's ``AsyncSerializingProducer`` (``key.serializer``, ``value.serializer`` and their
    ``.builder`` properties; asyncio or blocking serializers) over :class:`mutepro.aio.AIOProducer`. Built with
    ``await``::

        producer = await AsyncSerializingProducer(
            {"bootstrap.servers": brokers, "value.serializer": StringSerializer()}, policy=my_policy,
        )
        delivered = await (await producer.produce("orders", key="k", value="v"))

    Args:
        conf: the serializer properties plus the librdkafka config; never modified.
        **kwargs: :class:`mutepro.aio.AIOProducer`'s (``max_workers``, ``executor``, ``batch_size``,
            ``buffer_timeout``, ``producer_factory``) and MuteProducer's (``policy=``, ...).

    ``close()`` closes the producer (flushing everything, held messages included), then the serializers it
    built from ``.builder`` properties.
    """

    async def __init_impl(self, conf: Mapping[str, Any], **kwargs: Any) -> None:
        # pop_serde_props copies: the caller's dict keeps its serializer properties
        specs, conf_copy = pop_serde_props(dict(conf), "key.serializer", "value.serializer")
        serdes, self._owned_serdes, conf_copy = await async_build_serdes(specs, conf_copy)
        self._key_serializer, self._value_serializer = serdes
        try:
            AIOProducer.__init__(self, conf_copy, **kwargs)
            propagate_async_cluster_id_resolver(AsyncSharedClusterIdResolver(self.cluster_id), serdes)
        except BaseException:
            owned, self._owned_serdes = self._owned_serdes, []
            with contextlib.suppress(Exception):  # the construction error is the one to report
                await async_close_serdes(owned)
            raise

    # confluent-kafka's class is @asyncinit: its __new__ (inherited here) returns a coroutine that awaits
    # __init__. Assigned rather than written `async def __init__` so type checkers accept it, as confluent-kafka
    # does.
    __init__ = __init_impl
