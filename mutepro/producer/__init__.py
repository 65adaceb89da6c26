"""MuteProducer: the drop-in confluent_kafka.Producer that mutes bad partitions."""

from __future__ import annotations

from mutepro.producer.metrics import ProducerCounters
from mutepro.producer.producer import MuteProducer
from mutepro.producer.serializing import MuteSerializingProducer

__all__ = ["MuteProducer", "MuteSerializingProducer", "ProducerCounters"]
