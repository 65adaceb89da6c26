"""Reference model of the key hashes in ``mutepro/producer/_fastpath.c`` (``crc32_hash``, ``murmur2_hash``,
``fnv1a_hash``, ``key_partition``), written from librdkafka's ``rdkafka_msg.c`` / ``rdmurmur2.c`` / ``rdfnv1a.c``
and Java's ``Utils.murmur2``. The tests check the C code against it on published vectors and random keys; the
library ships only the C code."""

from __future__ import annotations

import zlib

_M32 = 0xFFFFFFFF


def crc32_hash(key: bytes) -> int:
    """librdkafka's ``rd_crc32``: the standard (zlib) CRC-32."""
    return zlib.crc32(key) & _M32


def murmur2_hash(key: bytes) -> int:
    """Java's ``Utils.murmur2`` / librdkafka's ``rd_murmur2`` (seed 0x9747b28c), unsigned 32-bit."""
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
    """librdkafka's ``rd_fnv1a``: 32-bit FNV-1a, then abs() of the int32 (INT32_MIN stays 0x80000000)."""
    h = 0x811C9DC5
    for byte in key:
        h = ((h ^ byte) * 0x01000193) & _M32
    if h & 0x80000000:
        h = (-(h - 0x100000000)) & _M32
    return h


def key_partition(name: str, key: bytes | str | None, count: int) -> int | None:
    """librdkafka's ``partitioner`` ``name`` for ``key`` over ``count`` partitions; None: a random (sticky) pick.

    NULL is hashed like ``b""`` by consistent/murmur2/fnv1a; consistent_random sends every empty key random,
    murmur2_random/fnv1a_random only NULL; ``random`` never names a partition."""
    if count <= 0:
        raise ValueError(f"partition_count must be > 0, got {count}")
    data = key.encode() if isinstance(key, str) else key
    if name == "random":
        return None
    if data is None:
        if name.endswith("_random"):
            return None
        data = b""
    if name == "consistent_random" and not data:
        return None
    if name.startswith("consistent"):
        return crc32_hash(data) % count
    if name.startswith("murmur2"):
        return (murmur2_hash(data) & 0x7FFFFFFF) % count
    if name.startswith("fnv1a"):
        return fnv1a_hash(data) % count
    raise ValueError(f"unknown partitioner {name!r}")
