"""Deterministic fallback for a keyed message whose home partition is muted (the ``reroute`` keyed policy).

Rendezvous hashing in its "preference list" form: each key has its own pseudo-random sequence of
partitions (seeded by a stable hash of the key) and goes to the first one in it that is writable. This is the
same idea as highest-random-weight hashing (a key's preference order is its order of scores) but costs O(1)
expected work instead of scoring every partition: with 1 of 12 partitions muted the first draw hits in 11 of
12 cases, ~1.1 draws on average. Why this and not ``hash(key) % len(writable)``:

* only the muted partition's keys move -- the caller keeps every key whose home is not muted at home, and this
  function is only asked about the others;
* a key always lands on the same fallback for the same writable set (no randomness, no per-process salt: all
  producers of a fleet agree, so per-key order is kept across them while the mute lasts);
* muting a *second* partition moves only the keys whose fallback was that partition (every other key still
  meets its fallback first), where ``% len(writable)`` would reshuffle nearly every rerouted key;
* the fallbacks are uniform over the writable partitions (the first hit of uniform draws, conditioned on
  landing in the writable set);
* the keys go home as soon as the home partition is unmuted (the caller checks ``muted`` first).

When almost everything is muted the list could need many draws (1 writable of 100: ~100), so after
``MAX_DRAWS`` misses it falls back to classic highest-random-weight over the writable partitions: still
deterministic and writable, and reached only when the first 64 draws all miss (with 10 % of partitions
writable that is 0.9 ** 64 ~ 0.1 % of keys).
"""

from __future__ import annotations

from hashlib import blake2b

from mutepro.partition.snapshot import TopicSnapshot

_M64 = 0xFFFFFFFFFFFFFFFF
_GOLDEN = 0x9E3779B97F4A7C15  # 2^64 / phi: the splitmix64 stream increment
MAX_DRAWS = 64


def _key_hash(key: bytes) -> int:
    """A stable 64-bit hash of the key (Python's ``hash()`` is salted per process, so unusable here)."""
    return int.from_bytes(blake2b(key, digest_size=8).digest(), "little")


def _mix(z: int) -> int:
    """The splitmix64 finalizer: a bijective 64-bit mix with full avalanche."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def preference_order(key_hash: int, partition_count: int, limit: int = MAX_DRAWS) -> list[int]:
    """The first ``limit`` entries of a key's partition preference sequence (splitmix64 stream; repeats
    allowed). ``reroute_partition`` returns the first entry that is writable and not home."""
    out = []
    state = key_hash
    for _ in range(limit):
        state = (state + _GOLDEN) & _M64
        out.append(_mix(state) % partition_count)
    return out


def rendezvous_score(key_hash: int, partition: int) -> int:
    """``score(key, p)`` for the highest-random-weight fallback: splitmix64 of ``key_hash ^ salt_p``."""
    return _mix(key_hash ^ _mix((partition + 1) * _GOLDEN & _M64))


def reroute_partition(key: bytes | None, home: int, snap: TopicSnapshot) -> int | None:
    """The fallback for ``key`` whose ``home`` partition is muted; ``None`` if nothing else is writable.

    ``home`` itself is never returned, even if a hand-built snapshot still lists it as writable.
    """
    writable = snap.writable_set
    if not writable or (len(writable) == 1 and home in writable):
        return None
    if key is None:  # "consistent"/"murmur2"/"fnv1a" hash a NULL key like b"", so it can have a home
        key = b""
    elif isinstance(key, str):
        key = key.encode("utf-8")
    kh = _key_hash(key)
    count = snap.partition_count
    # The preference sequence, inlined (this is the hot part): the 64-bit modulo bias is below 2**-40.
    state = kh
    for _ in range(MAX_DRAWS):
        state = (state + _GOLDEN) & _M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        partition = (z ^ (z >> 31)) % count
        if partition != home and partition in writable:
            return partition
    best, best_score = -1, -1
    for partition in snap.writable:
        if partition != home:
            score = rendezvous_score(kh, partition)
            if score > best_score:
                best, best_score = partition, score
    return best
