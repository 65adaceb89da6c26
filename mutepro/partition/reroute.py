"""Deterministic fallback for a keyed message whose home partition is muted (the ``reroute`` keyed policy).

Rendezvous (highest-random-weight) hashing: every writable partition ``p`` gets a pseudo-random score
``score(key, p)`` and the key goes to the highest scorer. Why this and not ``hash(key) % len(writable)``:

* only the muted partition's keys move -- the caller keeps every key whose home is not muted at home, and this
  function is only asked about the others;
* a key always lands on the same fallback for the same writable set (no randomness, no per-process salt: all
  producers of a fleet agree, so per-key order is kept across them while the mute lasts);
* muting a *second* partition moves only the keys whose fallback was that partition (each key's winner among
  the remaining partitions is unchanged), where ``% len(writable)`` would reshuffle nearly every rerouted key;
* the keys go home as soon as the home partition is unmuted (the caller checks ``muted`` first).

Cost: one BLAKE2b of the key plus a few integer operations per writable partition (a few microseconds for a
hundred partitions); it runs only for keyed messages to muted partitions, never for healthy ones.
"""

from __future__ import annotations

from hashlib import blake2b

from mutepro.partition.snapshot import TopicSnapshot

_M64 = 0xFFFFFFFFFFFFFFFF
_GOLDEN = 0x9E3779B97F4A7C15  # 2^64 / phi: spreads consecutive partition ids over the whole 64-bit range


def _key_hash(key: bytes) -> int:
    """A stable 64-bit hash of the key (Python's ``hash()`` is salted per process, so unusable here)."""
    return int.from_bytes(blake2b(key, digest_size=8).digest(), "little")


def rendezvous_score(key_hash: int, partition: int) -> int:
    """``score(key, p)``: the splitmix64 finalizer of ``key_hash + (p + 1) * golden``; uniform and independent
    enough across partitions that each writable partition wins for ~1/len(writable) of the keys."""
    z = (key_hash + (partition + 1) * _GOLDEN) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def reroute_partition(key: bytes | None, home: int, snap: TopicSnapshot) -> int | None:
    """The fallback partition for ``key`` whose ``home`` partition is muted, or ``None`` if nothing is
    writable.

    ``home`` itself is never returned, even if a hand-built snapshot still lists it as writable.
    """
    if key is None:  # "consistent"/"murmur2"/"fnv1a" hash a NULL key like b"", so it can have a home
        key = b""
    elif isinstance(key, str):
        key = key.encode("utf-8")
    kh = _key_hash(key)
    best = -1
    best_score = -1
    for partition in snap.writable:
        if partition == home:
            continue
        z = (kh + (partition + 1) * _GOLDEN) & _M64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        z ^= z >> 31
        if z > best_score:
            best_score = z
            best = partition
    return None if best < 0 else best
