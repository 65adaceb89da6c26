"""Keyed partitioning that is bit-for-bit librdkafka's, for every value of its ``partitioner`` setting.

Replacing ``confluent_kafka.Producer`` with mutepro must not move a single keyed message while all partitions
are healthy, so the home partition of a key is computed exactly as librdkafka does it (``rdkafka_msg.c``,
``rd_kafka_msg_partitioner`` and ``rd_kafka_msg_partitioner_*``; librdkafka v2.15/2.16):

* ``consistent`` / ``murmur2`` / ``fnv1a`` (the non-random variants) make librdkafka set
  ``random_partitioner``, so the hash function is called for *every* message, and a NULL key is hashed like an
  empty one: ``crc32(b"") % n == 0``, ``murmur2(b"") % 17 == 11``, ``fnv1a(b"") % n`` (= 2128831035 % n).
  This is what the config docs mean by "NULL keys are mapped to a single partition".
* ``consistent_random``: a key of length 0 -- NULL *or* ``b""`` -- goes to the sticky (random) partition.
* ``murmur2_random`` / ``fnv1a_random``: only a NULL key goes random; ``b""`` is a real key and is hashed
  (``murmur2_random`` with ``b""`` on 17 partitions -> 11, exactly like Java's producer).
* ``random``: never deterministic.

``key_partitioner(name)`` returns ``f(key, partition_count) -> int | None``; ``None`` means "librdkafka would
pick a random (sticky) partition for this key", so the caller treats the message as unkeyed.

The hashing itself is the C extension's (``mutepro/producer/_fastpath.c``: ``crc32_hash``, ``murmur2_hash``,
``fnv1a_hash`` and ``key_partition``), the same code the C ``produce()`` places keyed messages with: this module
only names librdkafka's partitioner settings and converts keys. ``tests/reference/hashing.py`` is a pure-Python
model the tests check it against (librdkafka 0048-partitioner and Java ``UtilsTest`` vectors).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from mutepro.errors import ConfigError

KeyPartitioner = Callable[[bytes | None, int], int | None]

PARTITIONERS: tuple[str, ...] = (
    "random",
    "consistent",
    "consistent_random",
    "murmur2",
    "murmur2_random",
    "fnv1a",
    "fnv1a_random",
)


# ------------------------------------------------------------------------------------------------------------
# Raw 32-bit hashes (unsigned), as librdkafka computes them: the C extension's.
# ------------------------------------------------------------------------------------------------------------


def crc32_hash(key: bytes) -> int:
    """librdkafka's ``rd_crc32``: the standard (zlib) CRC-32. ``crc32_hash(b"23456") == 0xB1B451D7``."""
    from mutepro.producer.accel import fastpath  # here: the producer package imports this module

    return fastpath.crc32(key)


def murmur2_hash(key: bytes) -> int:
    """Java's ``Utils.murmur2`` / librdkafka's ``rd_murmur2`` (seed 0x9747b28c) as an unsigned 32-bit int.

    Java returns the same bits as a signed int: ``murmur2("21")`` is -973932308 there and 3321034988 here.
    """
    from mutepro.producer.accel import fastpath

    return fastpath.murmur2(key)


def fnv1a_hash(key: bytes) -> int:
    """librdkafka's ``rd_fnv1a``: 32-bit FNV-1a made non-negative like Sarama's ``NewHashPartitioner``.

    librdkafka negates the signed result: ``fnv1a(b"")`` is 0x811C9DC5 = -2128831035 as int32, so 2128831035.
    """
    from mutepro.producer.accel import fastpath

    return fastpath.fnv1a(key)


def _as_bytes(key: object) -> bytes:
    """Keys the way confluent-kafka accepts them: bytes-like as is, ``str`` as UTF-8."""
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, bytes | bytearray | memoryview):
        return bytes(key)
    raise TypeError(f"message key must be bytes, str or None, got {type(key).__name__}")


# ------------------------------------------------------------------------------------------------------------
# Partitioner builders: one C call (``_fastpath.key_partition``, the C produce()'s own placement) per key; only a
# key type the C code does not read (bytearray, memoryview, subclasses of bytes or str) is converted first.
# ------------------------------------------------------------------------------------------------------------

#: the C extension's mode constant (``_fastpath.KP_*``) of each hashing partitioner (the C produce() places
#: keyed messages for these settings itself)
C_MODES: dict[str, str] = {
    "consistent": "KP_CONSISTENT",
    "consistent_random": "KP_CONSISTENT_RANDOM",
    "murmur2": "KP_MURMUR2",
    "murmur2_random": "KP_MURMUR2_RANDOM",
    "fnv1a": "KP_FNV1A",
    "fnv1a_random": "KP_FNV1A_RANDOM",
}


def _hashed(mode_name: str) -> KeyPartitioner:
    """The partitioner of ``mode_name``: which keys go random (-1 from C) is the C code's rule, per mode."""
    from mutepro.producer.accel import fastpath  # here, at build time: the producer package imports this module

    mode: int = getattr(fastpath, mode_name)
    key_partition = fastpath.key_partition

    def partition(key: bytes | None, partition_count: int) -> int | None:
        p = key_partition(mode, key, partition_count)
        if p == -2:  # a key type C does not read, or a count that is not a partition count
            if partition_count <= 0:
                raise ValueError(f"partition_count must be > 0, got {partition_count}")
            p = key_partition(mode, _as_bytes(key), partition_count)
        return None if p < 0 else p

    return partition


def _random(key: bytes | None, partition_count: int) -> int | None:
    return None


_BUILDERS: dict[str, Callable[[], KeyPartitioner]] = {"random": lambda: _random}
_BUILDERS.update({name: partial(_hashed, mode) for name, mode in C_MODES.items()})
assert set(_BUILDERS) == set(PARTITIONERS)

_CACHE: dict[str, KeyPartitioner] = {}


def key_partitioner(name: str) -> KeyPartitioner:
    """The librdkafka ``partitioner`` called ``name`` as ``f(key, partition_count) -> partition | None``.

    ``None`` means librdkafka would choose a random (sticky) partition for that key. Names are matched
    exactly, as librdkafka's ``strcmp`` does. Raises :class:`ConfigError` for an unknown name.
    """
    try:
        return _CACHE[name]
    except (KeyError, TypeError):
        pass
    builder = _BUILDERS.get(name) if isinstance(name, str) else None
    if builder is None:
        raise ConfigError(
            f"partitioner: unknown value {name!r}; set `partitioner` to one of {', '.join(PARTITIONERS)} "
            "(librdkafka's names; the default is consistent_random)"
        )
    fn = _CACHE[name] = builder()
    return fn


def is_random_for(name: str, key: bytes | None) -> bool:
    """Whether librdkafka would spread this key per message (``random`` partitioner with a non-NULL key)
    rather than to the topic's sticky partition (NULL keys, and empty keys under ``consistent_random``).

    Only meaningful when ``key_partitioner(name)(key, n)`` is ``None``.
    """
    return name == "random" and key is not None
