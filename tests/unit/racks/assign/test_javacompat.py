"""Java semantics the ports rely on: String.hashCode, TopicPartition.hashCode, HashMap order, compareTo."""

from __future__ import annotations

from mutepro.racks.assign.javacompat import (
    JavaHashSet,
    hash_order,
    string_hash,
    string_key,
    timeline_order,
    topic_partition_hash,
)


class TestHashes:
    def test_string_hash_matches_java(self):
        """Known Java values: "abc".hashCode() == 96354, "" == 0, overflow wraps to int32."""
        assert string_hash("abc") == 96354
        assert string_hash("") == 0
        assert string_hash("consumer0") == -421004550

    def test_topic_partition_hash(self):
        """TopicPartition("t", 0).hashCode() == 31 * 31 + "t".hashCode()."""
        assert topic_partition_hash("t", 0) == 31 * 31 + ord("t")


class TestHashOrder:
    def test_small_map_orders_by_bucket(self):
        """ "b" (98) lands in bucket 2 and "a" (97) in bucket 1 of 16: iteration a, b whatever the insert order."""
        assert hash_order(["b", "a"]) == ["a", "b"]

    def test_resize_changes_order(self):
        """Thirteen keys grow the table to 32 buckets, which reorders consumer ids (Java's order)."""
        order = hash_order([f"consumer{i}" for i in range(20)])
        assert order[:4] == ["consumer12", "consumer11", "consumer10", "consumer9"]

    def test_set_first_after_removal(self):
        """first() skips removed entries like HashSet.iterator().next()."""
        s = JavaHashSet(string_hash, ["a", "b"])
        s.discard("a")
        assert s.first() == "b"


class TestTimelineOrder:
    """Vectors printed by Kafka 4.3.1's own TimelineHashMap (kafka-server-common jar, keys put in this order)."""

    def test_colliding_keys_iterate_newest_first(self) -> None:
        """Two member ids of a live group: the later one comes first (one slot, read backwards)."""
        ids = ["vTyxYLayTqSTsOI1VjiKFw", "I1HVYyhVTUaJthc5D3ifXA", "DplmmTDzQDSPS/UVJXRbng"]
        assert timeline_order(string_hash, ids) == [ids[1], ids[0], ids[2]]

    def test_twenty_consumers(self) -> None:
        """consumer0..19 grow the table from 2 to 32 slots; Java iterates them in this order."""
        expected = [f"consumer{i}" for i in (19, 7, 11, 16, 4, 9, 13, 1, 18, 6, 10, 15, 3, 12, 8, 0, 17, 5, 14, 2)]
        assert timeline_order(string_hash, [f"consumer{i}" for i in range(20)]) == expected

    def test_mixed_keys(self) -> None:
        """38 keys (a..z, consumer0..11): 64 slots, several shared."""
        keys = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [f"consumer{i}" for i in range(12)]
        java = "consumer7 f consumer11 s consumer4 k x c consumer9 p h consumer1 u m consumer6 z e consumer10 r j"
        java += " consumer3 w b o consumer8 consumer0 g t l consumer5 y d q i consumer2 v a n"
        expected = java.split(" ")
        assert timeline_order(string_hash, keys) == expected


class TestStringOrder:
    def test_utf16_order_differs_from_code_points(self):
        """Java orders U+1F600 (surrogates D83D..) before U+FF21, Python's str order does not."""
        assert string_key("\U0001f600") < string_key("\uff21")
        assert "\U0001f600" > "\uff21"
