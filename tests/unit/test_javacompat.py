"""Java semantics the ports rely on: String.hashCode, TopicPartition.hashCode, HashMap order, compareTo."""

from __future__ import annotations

from mutepro.racks.assign.javacompat import JavaHashSet, hash_order, string_hash, string_key, topic_partition_hash


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


class TestStringOrder:
    def test_utf16_order_differs_from_code_points(self):
        """Java orders U+1F600 (surrogates D83D..) before U+FF21, Python's str order does not."""
        assert string_key("\U0001f600") < string_key("\uff21")
        assert "\U0001f600" > "\uff21"
