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

The hashing itself is done by confluent-kafka's C helpers (``confluent_kafka.murmur2/consistent/fnv1a``, since
2.13), which call librdkafka's own ``rd_murmur2``/``rd_crc32``/``rd_fnv1a``; the pure-Python hashes below are
the fallback for older clients and the reference the unit tests check both against (librdkafka
0048-partitioner and Java ``UtilsTest`` vectors).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import confluent_kafka

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

_M32 = 0xFFFFFFFF


# ------------------------------------------------------------------------------------------------------------
# Raw 32-bit hashes (unsigned), as librdkafka computes them.
# ------------------------------------------------------------------------------------------------------------


def crc32_hash(key: bytes) -> int:
    """librdkafka's ``rd_crc32``: the standard (zlib) CRC-32. ``crc32_hash(b"23456") == 0xB1B451D7``."""
    return zlib.crc32(key) & _M32


def murmur2_hash(key: bytes) -> int:
    """Java's ``Utils.murmur2`` / librdkafka's ``rd_murmur2`` (seed 0x9747b28c) as an unsigned 32-bit int.

    Java returns the same bits as a signed int: ``murmur2("21")`` is -973932308 there and 3321035988 here.
    """
    m = 0x5BD1E995
    length = len(key)
    h = (0x9747B28C ^ length) & _M32
    body = length & ~3
    for i in range(0, body, 4):
        k = int.from_bytes(key[i : i + 4], "little")
        k = (k * m) & _M32
        k ^= k >> 24
        k = (k * m) & _M32
        h = ((h * m) & _M32) ^ k
    rest = length & 3
    if rest == 3:
        h ^= key[body + 2] << 16
    if rest >= 2:
        h ^= key[body + 1] << 8
    if rest >= 1:
        h ^= key[body]
        h = (h * m) & _M32
    h ^= h >> 13
    h = (h * m) & _M32
    h ^= h >> 15
    return h


def fnv1a_hash(key: bytes) -> int:
    """librdkafka's ``rd_fnv1a``: 32-bit FNV-1a made non-negative like Sarama's ``NewHashPartitioner``.

    librdkafka negates the signed result: ``fnv1a(b"")`` is 0x811C9DC5 = -2128831035 as int32, so 2128831035.
    """
    h = 0x811C9DC5
    for byte in key:
        h = ((h ^ byte) * 0x01000193) & _M32
    if h & 0x80000000:
        h = (-(h - 0x100000000)) & _M32  # abs() of the int32; INT32_MIN stays 0x80000000 as in C
    return h


def _py_consistent(key: bytes, partition_count: int) -> int:
    _check_count(partition_count)
    return crc32_hash(key) % partition_count


def _py_murmur2(key: bytes, partition_count: int) -> int:
    _check_count(partition_count)
    return (murmur2_hash(key) & 0x7FFFFFFF) % partition_count


def _py_fnv1a(key: bytes, partition_count: int) -> int:
    _check_count(partition_count)
    return fnv1a_hash(key) % partition_count


def _check_count(partition_count: int) -> None:
    if partition_count <= 0:
        raise ValueError(f"partition_count must be > 0, got {partition_count}")


# The C helpers exist since confluent-kafka 2.13; they take (bytes, partition_count) and return the partition.
_HashPartition = Callable[[bytes, int], int]
_CONSISTENT: _HashPartition = getattr(confluent_kafka, "consistent", None) or _py_consistent
_MURMUR2: _HashPartition = getattr(confluent_kafka, "murmur2", None) or _py_murmur2
_FNV1A: _HashPartition = getattr(confluent_kafka, "fnv1a", None) or _py_fnv1a


def _as_bytes(key: object) -> bytes:
    """Keys the way confluent-kafka accepts them: bytes-like as is, ``str`` as UTF-8."""
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, bytes | bytearray | memoryview):
        return bytes(key)
    raise TypeError(f"message key must be bytes, str or None, got {type(key).__name__}")


# ------------------------------------------------------------------------------------------------------------
# Partitioner builders. Each closure is on the produce hot path: one truthiness/None test, one C call; the
# TypeError branch only runs for str (or other buffer) keys, which the C helpers reject.
# ------------------------------------------------------------------------------------------------------------


def _always_hashed(fn: _HashPartition) -> KeyPartitioner:
    """``consistent``/``murmur2``/``fnv1a``: NULL is hashed like ``b""`` (librdkafka passes NULL, len 0)."""

    def partition(key: bytes | None, partition_count: int) -> int | None:
        if key is None:
            key = b""
        try:
            return fn(key, partition_count)
        except TypeError:
            return fn(_as_bytes(key), partition_count)

    return partition


def _null_random(fn: _HashPartition) -> KeyPartitioner:
    """``murmur2_random``/``fnv1a_random``: only NULL goes random; ``b""`` is hashed."""

    def partition(key: bytes | None, partition_count: int) -> int | None:
        if key is None:
            return None
        try:
            return fn(key, partition_count)
        except TypeError:
            return fn(_as_bytes(key), partition_count)

    return partition


def _empty_random(fn: _HashPartition) -> KeyPartitioner:
    """``consistent_random``: every key of length 0 (NULL or ``b""``) goes random."""

    def partition(key: bytes | None, partition_count: int) -> int | None:
        if not key:
            return None
        try:
            return fn(key, partition_count)
        except TypeError:
            return fn(_as_bytes(key), partition_count)

    return partition


def _random(key: bytes | None, partition_count: int) -> int | None:
    return None


_BUILDERS: dict[str, Callable[[], KeyPartitioner]] = {
    "random": lambda: _random,
    "consistent": lambda: _always_hashed(_CONSISTENT),
    "consistent_random": lambda: _empty_random(_CONSISTENT),
    "murmur2": lambda: _always_hashed(_MURMUR2),
    "murmur2_random": lambda: _null_random(_MURMUR2),
    "fnv1a": lambda: _always_hashed(_FNV1A),
    "fnv1a_random": lambda: _null_random(_FNV1A),
}
assert tuple(_BUILDERS) == PARTITIONERS

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
