"""The few pieces of Java semantics the assignor ports depend on: string order, hash codes, HashMap order.

Java's assignors are deterministic *given* Java's collections, and some of their tie-breaks are not sort
orders but the iteration order of a ``java.util.HashMap``/``HashSet``: which member's owned partitions
the sticky assignor keeps first, or which partition ``HashSet.iterator().next()`` returns when it undoes a
move. To reproduce Java's assignment exactly we reproduce that order: a HashMap iterates its bucket table
from index 0 upwards, and a bucket in insertion order. The bucket of a key is ``spread(hashCode) & (cap-1)``
where ``spread(h) = h ^ (h >>> 16)``; the table starts at 16 buckets and doubles whenever the size exceeds
0.75 x capacity (a 13th key grows 16 -> 32). Resizing keeps the relative order inside a bucket, so replaying
the inserts and removals on a list-of-buckets model gives Java's order without simulating the split.
Example: members consumer0..consumer19 iterate as consumer12, consumer11, consumer10, consumer9, ... in Java,
because ``"consumer12".hashCode()`` lands in a lower bucket of the 32-bucket table than ``"consumer0"``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

_INT_MASK = 0xFFFFFFFF
_DEFAULT_CAPACITY = 16
_LOAD_FACTOR = 0.75
# A bucket that reaches 9 entries in a table below 64 buckets makes Java resize instead of treeify.
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64


def to_int32(value: int) -> int:
    """Wrap an unbounded Python int to Java's signed 32-bit ``int``."""
    value &= _INT_MASK
    return value - (1 << 32) if value >= 1 << 31 else value


def string_hash(text: str) -> int:
    """``java.lang.String.hashCode()``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & _INT_MASK
    return to_int32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """``org.apache.kafka.common.TopicPartition.hashCode()``: ``31 * (31 + partition) + topic.hashCode()``."""
    return to_int32(31 * (31 + partition) + string_hash(topic))


def string_key(text: str) -> bytes:
    """A sort key ordering strings like ``String.compareTo`` (UTF-16 code units, not code points).

    Python compares code points, Java UTF-16 units; they differ only when a string mixes characters above
    U+FFFF with ones in U+E000..U+FFFF. Big-endian UTF-16 bytes compare exactly like Java's units.
    """
    return text.encode("utf-16-be")


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``capacity`` (at least 1)."""
    size = 1
    while size < capacity:
        size *= 2
    return size


def capacity_for_copy(size: int) -> int:
    """The table a ``new HashSet<>(collection)``/``new HashMap<>(map)`` of ``size`` entries starts with."""
    return max(int(size / 0.75) + 1, _DEFAULT_CAPACITY)


def _spread(h: int) -> int:
    h &= _INT_MASK
    return h ^ (h >> 16)


class JavaHashSet(Generic[K]):
    """A set whose iteration order is that of a default-constructed ``java.util.HashSet``.

    ``hash_of`` gives the key's Java ``hashCode()``. Only the operations the ports need are offered.
    """

    def __init__(self, hash_of: Callable[[K], int], items: Iterable[K] = (), initial_capacity: int = 16) -> None:
        self._hash_of = hash_of
        # Java rounds a requested capacity up to a power of two (``HashMap.tableSizeFor``)
        self._capacity = table_size_for(initial_capacity)
        self._buckets: list[list[K]] = [[] for _ in range(self._capacity)]
        self._members: set[K] = set()
        for item in items:
            self.add(item)

    def _index(self, item: K, capacity: int) -> int:
        return _spread(self._hash_of(item)) & (capacity - 1)

    def add(self, item: K) -> None:
        """Insert ``item`` (no-op if present), resizing exactly when Java would."""
        if item in self._members:
            return
        bucket = self._buckets[self._index(item, self._capacity)]
        bucket.append(item)
        self._members.add(item)
        if len(bucket) > _TREEIFY_THRESHOLD and self._capacity < _MIN_TREEIFY_CAPACITY:
            self._resize()
        if len(self._members) > self._capacity * _LOAD_FACTOR:
            self._resize()

    def _resize(self) -> None:
        new_capacity = self._capacity * 2
        buckets: list[list[K]] = [[] for _ in range(new_capacity)]
        for bucket in self._buckets:
            for item in bucket:
                buckets[self._index(item, new_capacity)].append(item)
        self._capacity = new_capacity
        self._buckets = buckets

    def bucket_of(self, item: K) -> int:
        """The index of the bucket ``item`` falls in at the table's current size."""
        return self._index(item, self._capacity)

    def discard(self, item: K) -> None:
        """Remove ``item`` if present; like Java, the table never shrinks."""
        if item not in self._members:
            return
        self._members.remove(item)
        self._buckets[self._index(item, self._capacity)].remove(item)

    def first(self) -> K:
        """``iterator().next()``."""
        for bucket in self._buckets:
            if bucket:
                return bucket[0]
        raise KeyError("first() on an empty JavaHashSet")

    def __iter__(self) -> Iterator[K]:
        for bucket in self._buckets:
            yield from list(bucket)

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, item: object) -> bool:
        return item in self._members


def hash_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of a ``HashMap<String, ?>`` after putting ``keys`` in this order."""
    return list(JavaHashSet(string_hash, keys))


_FIBONACCI = -7046029254386353131  # Knuth's multiplier, as the signed long BaseHashTable uses
_LONG_MASK = (1 << 64) - 1


def _timeline_slot(hash_code: int, slots: int) -> int:
    """``BaseHashTable.findSlot``: the top ``log2(slots)`` bits of ``hashCode * 0x9E3779B97F4A7C15``."""
    shift = 65 - slots.bit_length()  # slots = 2 -> 1 bit, 4 -> 2 bits ...
    return ((hash_code * _FIBONACCI) & _LONG_MASK) >> shift


def timeline_order(hash_of: Callable[[K], int], inserts: Iterable[K]) -> list[K]:
    """Iteration order of a ``org.apache.kafka.timeline.TimelineHashMap`` after ``inserts`` (new keys only).

    The group coordinator keeps a group's members in one (``new TimelineHashMap<>(registry, 0)``) and
    iterates it when it builds the member map an assignor sees. Unlike ``java.util.HashMap`` it starts at
    2 slots, doubles *before* an insert that would pass a 0.75 load (the 3rd key grows 2 -> 4, the 6th
    4 -> 8), picks a slot by Fibonacci hashing (the *top* bits), appends colliding keys to the slot's array
    (a rehash walks slots upwards and appends again), and its iterator visits slots upwards but each slot's
    array *backwards*. Example: two keys sharing a slot iterate newest first.
    """
    slots: list[list[K]] = [[], []]
    for size, key in enumerate(inserts):  # ``size`` keys are in before this one
        if (size + 1) * _LOAD_FACTOR > len(slots):
            grown: list[list[K]] = [[] for _ in range(len(slots) * 2)]
            for bucket in slots:
                for old in bucket:
                    grown[_timeline_slot(hash_of(old), len(grown))].append(old)
            slots = grown
        slots[_timeline_slot(hash_of(key), len(slots))].append(key)
    return [key for bucket in slots for key in reversed(bucket)]
