"""Pure partition logic for the muting producer: librdkafka-identical key hashing, sticky adaptive choice over
writable partitions, and the deterministic reroute of keyed messages whose partition is muted.

Nothing here does I/O or imports the rest of mutepro (apart from :mod:`mutepro.errors`); the producer calls
these functions on its ``produce`` hot path.
"""

from __future__ import annotations

from mutepro.partition.hashing import PARTITIONERS, crc32_hash, fnv1a_hash, key_partitioner, murmur2_hash
from mutepro.partition.protocols import DefaultMutingPartitioner, HomePartitioner, MuteView, MutingPartitioner
from mutepro.partition.reroute import reroute_partition
from mutepro.partition.snapshot import TopicSnapshot
from mutepro.partition.sticky import StickyChooser, linger_from_config

__all__ = [
    "PARTITIONERS",
    "DefaultMutingPartitioner",
    "HomePartitioner",
    "MuteView",
    "MutingPartitioner",
    "StickyChooser",
    "TopicSnapshot",
    "crc32_hash",
    "fnv1a_hash",
    "key_partitioner",
    "linger_from_config",
    "murmur2_hash",
    "reroute_partition",
]
