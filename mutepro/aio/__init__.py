"""asyncio producers over :class:`~mutepro.MuteProducer`: drop-ins for ``confluent_kafka.aio.AIOProducer`` and
``confluent_kafka.aio.AsyncSerializingProducer`` (see ``docs/asyncio.md``).

    from mutepro.aio import AIOProducer

    async with AIOProducer({"bootstrap.servers": "..."}, policy="config/minimal.yaml") as producer:
        delivered = await (await producer.produce("orders", b"value", b"key"))
"""

from __future__ import annotations

from mutepro.aio.producer import AIOProducer, ProducerFactory
from mutepro.aio.serializing import AsyncSerializingProducer

__all__ = ["AIOProducer", "AsyncSerializingProducer", "ProducerFactory"]
