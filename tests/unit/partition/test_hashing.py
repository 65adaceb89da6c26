"""Keyed partitioning equals librdkafka's for every ``partitioner`` value (mutepro.partition.hashing, over the C
extension's hashes), checked on published vectors and against the reference model tests/reference/hashing.py and
confluent-kafka's own helpers (librdkafka's code) on random keys."""

from __future__ import annotations

import random
from typing import Any

import confluent_kafka
import pytest

from mutepro.errors import ConfigError, MuteproError
from mutepro.partition import hashing
from mutepro.partition.hashing import PARTITIONERS, is_random_for, key_partitioner
from tests.reference import hashing as reference

#: the hashes under test: the library's (the C extension's) and the reference model they are checked against
IMPLS = [pytest.param(hashing, id="c"), pytest.param(reference, id="reference")]


def _int32(value: int) -> int:
    """The unsigned 32-bit ``value`` read as Java's signed int."""
    return value - (1 << 32) if value & 0x80000000 else value


# librdkafka tests/0048-partitioner.c: keys and expected raw hashes (-1 = librdkafka picks randomly).
KEYS_0048: tuple[bytes | None, ...] = (
    None,
    b"",
    b"23456",  # "123456" + 1 (the unaligned case)
    b"this is another string with more length to it perhaps",
    b"hejsan",
)
HASHES_0048: dict[str, tuple[int, ...]] = {
    "random": (-1, -1, -1, -1, -1),
    "consistent": (0x0, 0x0, 0xB1B451D7, 0xB0150DF7, 0xD077037E),
    "consistent_random": (-1, -1, 0xB1B451D7, 0xB0150DF7, 0xD077037E),
    "murmur2": (0x106E08D9, 0x106E08D9, 0x058D780F, 0x4F7703DA, 0x5EC19395),
    "murmur2_random": (-1, 0x106E08D9, 0x058D780F, 0x4F7703DA, 0x5EC19395),
    "fnv1a": (0x7EE3623B, 0x7EE3623B, 0x27E6F469, 0x155E3E5F, 0x17B1E27A),
    "fnv1a_random": (-1, 0x7EE3623B, 0x27E6F469, 0x155E3E5F, 0x17B1E27A),
}


@pytest.mark.parametrize("impl", IMPLS)
class TestRawHashes:
    """The C hashes and the reference model reproduce the published Java and librdkafka vectors."""

    @pytest.mark.parametrize(
        ("key", "expected"),
        [
            (b"21", -973932308),
            (b"foobar", -790332482),
            (b"a-little-bit-long-string", -985981536),
            (b"a-little-bit-longer-string", -1486304829),
            (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
            (b"abc", 479470107),
            (b"", 275646681),
        ],
    )
    def test_murmur2_matches_java_utils_test(self, impl: Any, key: bytes, expected: int) -> None:
        """murmur2 equals Kafka's UtilsTest.testMurmur2 vectors (read as signed int32)."""
        assert _int32(impl.murmur2_hash(key)) == expected

    @pytest.mark.parametrize(
        ("key", "expected"),
        [
            (b"kafka", 0xD067CF64),
            (b"giberish123456789", 0x8F552B0C),
            (b"1234", 0x9FC97B14),
            (b"234", 0xE7C009CA),
            (b"34", 0x873930DA),
            (b"4", 0x5A4B5CA1),
            (b"PreAmbleWillBeRemoved,ThePrePartThatIs", 0x78424F1C),
            (b"reAmbleWillBeRemoved,ThePrePartThatIs", 0x4A62B377),
            (b"eAmbleWillBeRemoved,ThePrePartThatIs", 0xE0E4E09E),
            (b"AmbleWillBeRemoved,ThePrePartThatIs", 0x62B8B43F),
        ],
    )
    def test_murmur2_matches_librdkafka_unittest(self, impl: Any, key: bytes, expected: int) -> None:
        """murmur2 equals librdkafka's rdmurmur2.c unit-test vectors (all four alignments)."""
        assert impl.murmur2_hash(key) == expected

    @pytest.mark.parametrize(
        ("key", "expected"),
        [
            (b"kafka", 0x0D33C4E1),
            (b"giberish123456789", 0x77A58295),
            (b"1234", 0x023BDD03),
            (b"234", 0x2DEA3CD2),
            (b"34", 0x740FA83E),
            (b"4", 0x310CA263),
            (b"PreAmbleWillBeRemoved,ThePrePartThatIs", 0x65CBD69C),
            (b"", 0x7EE3623B),
        ],
    )
    def test_fnv1a_matches_librdkafka_unittest(self, impl: Any, key: bytes, expected: int) -> None:
        """fnv1a equals librdkafka's rdfnv1a.c (Sarama-compatible) vectors."""
        assert impl.fnv1a_hash(key) == expected

    def test_fnv1a_is_never_negative_as_int32(self, impl: Any) -> None:
        """fnv1a takes the absolute value like Sarama, so the top bit is only set for INT32_MIN."""
        rng = random.Random(7)
        for _ in range(500):
            assert impl.fnv1a_hash(rng.randbytes(rng.randrange(0, 24))) < 0x80000000

    @pytest.mark.parametrize(("key", "expected"), [(b"", 0), (b"23456", 0xB1B451D7), (b"hejsan", 0xD077037E)])
    def test_crc32_matches_librdkafka_0048(self, impl: Any, key: bytes, expected: int) -> None:
        """crc32 equals the constants of librdkafka's 0048-partitioner test."""
        assert impl.crc32_hash(key) == expected


class TestKeyPartitioner:
    """``key_partitioner(name)`` gives librdkafka's partition (or None for random) for each setting."""

    def test_partitioner_names_are_librdkafkas(self) -> None:
        """PARTITIONERS lists exactly librdkafka's seven ``partitioner`` values."""
        assert PARTITIONERS == (
            "random",
            "consistent",
            "consistent_random",
            "murmur2",
            "murmur2_random",
            "fnv1a",
            "fnv1a_random",
        )

    @pytest.mark.parametrize("partition_count", [7, 17])
    @pytest.mark.parametrize("name", PARTITIONERS)
    def test_matches_librdkafka_0048_table(self, name: str, partition_count: int) -> None:
        """Every key of librdkafka's 0048-partitioner test lands where librdkafka expects (None = random)."""
        fn = key_partitioner(name)
        got = [fn(key, partition_count) for key in KEYS_0048]
        expected = [None if h == -1 else h % partition_count for h in HASHES_0048[name]]
        assert got == expected

    def test_reference_partitions_on_17(self) -> None:
        """murmur2 on 17 partitions: b"" -> 11, "23456" -> 9, "hejsan" -> 5 (the shared reference vectors)."""
        fn = key_partitioner("murmur2_random")
        assert [fn(b"", 17), fn(b"23456", 17), fn(b"hejsan", 17)] == [11, 9, 5]

    def test_null_versus_empty_key(self) -> None:
        """NULL is random for every *_random variant; b"" is random only for consistent_random."""
        assert key_partitioner("consistent_random")(b"", 5) is None
        assert key_partitioner("murmur2_random")(b"", 5) == 0x106E08D9 % 5
        assert key_partitioner("fnv1a_random")(b"", 5) == 0x7EE3623B % 5
        for name in ("consistent_random", "murmur2_random", "fnv1a_random"):
            assert key_partitioner(name)(None, 5) is None

    def test_non_random_variants_hash_null_like_empty(self) -> None:
        """consistent/murmur2/fnv1a map a NULL key to the empty key's partition, as librdkafka does."""
        for name in ("consistent", "murmur2", "fnv1a"):
            fn = key_partitioner(name)
            assert fn(None, 13) == fn(b"", 13)

    def test_random_is_never_deterministic(self) -> None:
        """The ``random`` partitioner never names a partition."""
        fn = key_partitioner("random")
        assert {fn(key, 9) for key in KEYS_0048} == {None}

    @pytest.mark.parametrize("name", PARTITIONERS)
    def test_c_agrees_with_the_reference_model_on_random_keys(self, name: str) -> None:
        """6,000 seeded random keys (bytes of 0-64, str, NULL, empty) and partition counts (1 to 2**31-1): the C
        placement is the reference model's, for every partitioner setting."""
        rng = random.Random(1234)
        fn = key_partitioner(name)
        keys: list[bytes | str | None] = [None, b"", ""]
        keys += [rng.randbytes(rng.randrange(0, 65)) for _ in range(4_000)]
        keys += ["".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(0, 12))) for _ in range(2_000)]
        for key in keys:
            count = rng.choice((1, 2, 3, 7, 12, 17, 100, rng.randrange(1, 1 << 31)))
            assert fn(key, count) == reference.key_partition(name, key, count), (name, key, count)  # type: ignore[arg-type]

    @pytest.mark.parametrize("hash_name", ["crc32_hash", "murmur2_hash", "fnv1a_hash"])
    def test_raw_hashes_agree_with_the_reference_model(self, hash_name: str) -> None:
        """The C raw hashes equal the reference model's on 5,000 seeded random keys of every length 0-255."""
        rng = random.Random(99)
        c, ref = getattr(hashing, hash_name), getattr(reference, hash_name)
        for _ in range(5_000):
            key = rng.randbytes(rng.randrange(0, 256))
            assert c(key) == ref(key), key

    @pytest.mark.parametrize("name", ["consistent", "murmur2", "fnv1a"])
    def test_c_agrees_with_librdkafkas_own_helpers(self, name: str) -> None:
        """confluent-kafka's helpers (librdkafka's rd_crc32/rd_murmur2/rd_fnv1a, since 2.13) place 3,000 random keys
        where the C extension does: an oracle outside mutepro."""
        helper = getattr(confluent_kafka, name, None)
        if helper is None:
            pytest.skip("confluent-kafka < 2.13 has no hash helpers")
        rng = random.Random(1234)
        fn = key_partitioner(name)
        for _ in range(3000):
            key = rng.randbytes(rng.randrange(0, 40))
            count = rng.randrange(1, 300)
            assert fn(key, count) == helper(key, count)

    def test_str_and_bytearray_keys_hash_as_utf8_bytes(self) -> None:
        """str keys are hashed as UTF-8 (as confluent-kafka encodes them); bytearray like bytes."""
        fn = key_partitioner("murmur2_random")
        assert fn("hejsan", 17) == fn(b"hejsan", 17) == 5
        assert fn("h\u00e9", 17) == fn("h\u00e9".encode(), 17)
        assert fn(bytearray(b"23456"), 17) == 9
        assert key_partitioner("consistent_random")("", 17) is None

    def test_rejects_non_bytes_keys(self) -> None:
        """A key that is neither bytes, str nor None raises TypeError naming the type."""
        with pytest.raises(TypeError, match="int"):
            key_partitioner("murmur2")(42, 3)  # type: ignore[arg-type]

    def test_same_callable_is_returned(self) -> None:
        """Partitioners are built once per name and cached."""
        assert key_partitioner("fnv1a") is key_partitioner("fnv1a")

    @pytest.mark.parametrize("name", ["Murmur2", "murmur3", "", "default"])
    def test_unknown_name_raises_config_error(self, name: str) -> None:
        """An unknown name is a ConfigError that names the ``partitioner`` key and the allowed values."""
        with pytest.raises(ConfigError) as info:
            key_partitioner(name)
        message = str(info.value)
        assert "partitioner" in message
        assert all(allowed in message for allowed in PARTITIONERS)
        assert isinstance(info.value, MuteproError)

    def test_non_string_name_raises_config_error(self) -> None:
        """A non-string name (e.g. from a bad YAML value) is a ConfigError, not a TypeError."""
        with pytest.raises(ConfigError, match="partitioner"):
            key_partitioner(["murmur2"])  # type: ignore[arg-type]


class TestIsRandomFor:
    """Which messages librdkafka spreads per message rather than to the sticky partition."""

    def test_only_random_partitioner_with_a_key(self) -> None:
        """Per-message random only for ``random`` with a non-NULL key; NULL keys are always sticky."""
        assert is_random_for("random", b"k")
        assert is_random_for("random", b"")
        assert not is_random_for("random", None)
        assert not is_random_for("consistent_random", b"")
        assert not is_random_for("murmur2_random", None)
