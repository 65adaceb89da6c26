"""``java.util.Random``, bit for bit: the generator Kafka's placers draw from.

Seeded the same way, it returns the same numbers as Java, which is what lets a placement port be checked
against Java and replayed from a seed. The generator is a 48-bit linear congruential one (Knuth, TAOCP 3.2.1):
``seed = (seed * 0x5DEECE66D + 0xB) mod 2**48``, and ``next(bits)`` returns the top ``bits`` of the new
seed as a signed 32-bit int. Seeding scrambles the seed with the multiplier first. Example:
``JavaRandom(42).next_int(10)`` is 0 and the next call gives 3, as ``new Random(42)`` does in Java.

Only what the ports need is here: ``nextInt()``, ``nextInt(bound)`` and ``Collections.shuffle``.
"""

from __future__ import annotations

from typing import TypeVar

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK = (1 << 48) - 1

T = TypeVar("T")


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


class JavaRandom:
    """A ``java.util.Random`` with a given seed (Java's 64-bit ``long`` seed; only its low 48 bits matter)."""

    def __init__(self, seed: int) -> None:
        self.set_seed(seed)

    def set_seed(self, seed: int) -> None:
        """``Random.setSeed``: scramble with the multiplier so that nearby seeds start far apart."""
        self._seed = (seed ^ _MULTIPLIER) & _MASK

    def next_bits(self, bits: int) -> int:
        """``Random.next(bits)``: advance the LCG and return its top ``bits`` bits as a signed int."""
        self._seed = (self._seed * _MULTIPLIER + _ADDEND) & _MASK
        return _int32(self._seed >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` (any int) or ``nextInt(bound)`` (0 <= n < bound, uniform, Java's rejection loop)."""
        if bound is None:
            return self.next_bits(32)
        if bound <= 0:
            raise ValueError(f"bound must be positive (bound={bound})")
        r = self.next_bits(31)
        m = bound - 1
        if bound & m == 0:
            # a power of two: take the high bits, which are the better ones in an LCG
            return _int32((bound * r) >> 31)
        u = r
        while True:
            r = u % bound
            # Java rejects draws from the incomplete last bucket: ``u - r + m`` overflows a signed int there
            if _int32(u - r + m) >= 0:
                return r
            u = self.next_bits(31)


def java_shuffle(items: list[T], rng: JavaRandom) -> None:
    """``Collections.shuffle(list, rnd)`` on an ``ArrayList`` (a random-access list): Fisher-Yates from the end."""
    for i in range(len(items), 1, -1):
        j = rng.next_int(i)
        items[i - 1], items[j] = items[j], items[i - 1]
