"""The rows' identity: the binary header's layout, the C loop against the reference model and the per-row path,
and reading the older two string headers."""

from __future__ import annotations

from typing import Any

import pytest

from mutepro.partition.hashing import key_partitioner
from mutepro.producer import accel
from mutepro.spark.errors import IdentityError
from mutepro.spark.identity import (
    BATCH_HEADER,
    ID_HEADER,
    ID_SIZE,
    ROW_HEADER,
    RowId,
    TaskIds,
    decode_identity,
    from_strings,
    label_digest,
    row_id,
    row_identity,
    task_prefix,
)
from tests.reference import rows as reference
from tests.unit.producer.test_fastpath import Rig

fp = accel.fastpath


class TestLayout:
    def test_29_bytes_version_digest_partition_row(self) -> None:
        """version 1, blake2b-128 of the label, partition and row index big-endian; decode gives them back."""
        value = row_id(task_prefix("q-1:42", 7), 2**40 + 3)
        assert len(value) == ID_SIZE == 29 and value[0] == 1
        assert value[1:17] == label_digest("q-1:42") == label_digest(b"q-1:42")
        assert value[17:21] == (7).to_bytes(4, "big") and value[21:] == (2**40 + 3).to_bytes(8, "big")
        got = decode_identity(value)
        assert got == RowId(label_digest("q-1:42"), 7, 2**40 + 3) and got.of_label("q-1:42")
        assert not got.of_label("q-1:43")

    def test_c_row_id_is_the_reference(self) -> None:
        """_fastpath.row_id appends the row as 8 bytes big-endian, as the reference model says, at the edges too."""
        prefix = task_prefix("q:0", 2**32 - 1)
        for n in (0, 1, 255, 256, 2**31, 2**63 - 1):
            assert fp.row_id(prefix, n) == reference.row_id(prefix, n)
        with pytest.raises(ValueError, match="n must be >= 0"):
            fp.row_id(prefix, -1)
        with pytest.raises(TypeError, match="prefix: bytes"):
            fp.row_id("q:0", 1)  # type: ignore[arg-type]

    def test_bad_values_are_named(self) -> None:
        """A value of another size or version, or a partition that does not fit, fails saying what is wrong."""
        with pytest.raises(IdentityError, match="x-mutepro-id: expected 29 bytes"):
            decode_identity(b"\x01" * 28)
        with pytest.raises(IdentityError, match="version 1"):
            decode_identity(b"\x02" + bytes(28))
        with pytest.raises(ValueError, match="partition id"):
            task_prefix("q:0", 2**32)

    def test_distinct_rows_distinct_identities(self) -> None:
        """Rows differing in label, partition or index never share an identity (the index is not truncated)."""
        seen = {row_id(task_prefix(label, part), n)
                for label in ("q:0", "q:1", "r:0") for part in (0, 1, 2**31) for n in (0, 1, 2**32, 2**32 + 1)}
        assert len(seen) == 3 * 3 * 4


class TestProduceRowsBinary:
    PREFIX = task_prefix("q:3", 1)

    @staticmethod
    def _calls(rig: Rig) -> list[tuple[Any, ...]]:
        return [c[:4] + c[5:] for c in rig.inner.calls]  # the reporter (c[4]) is a fresh object per message

    def test_c_loop_is_the_reference_model(self) -> None:
        """Keyed rows with the binary header reach librdkafka exactly as the reference model's produce() calls."""
        a, b = Rig(key_mode=fp.KP_MURMUR2_RANDOM), Rig(key_mode=fp.KP_MURMUR2_RANDOM)
        values, keys = [b"v0", b"v1", "v2"], [b"k0", None, b"k2"]
        args = ("t", values, keys, None, ID_HEADER, self.PREFIX, 40, 0)
        assert a.fast.produce_rows(*args) == reference.produce_rows(b.fast.produce, *args) == 3
        assert self._calls(a) == self._calls(b)
        assert a.inner.calls[2][7] == [(ID_HEADER, self.PREFIX + (42).to_bytes(8, "big"))]

    def test_c_loop_and_per_row_path_write_the_same_headers(self) -> None:
        """TaskIds.headers (the sink's per-row Python path) gives each row the bytes the C loop wrote for it."""
        rig = Rig()
        ids = TaskIds.for_task("binary", "q:3", 1)
        assert rig.fast.produce_rows("t", [b"a", b"b", b"c"], None, ids.fixed, ids.name, ids.prefix, 9, 1) == 3
        assert [c[7] for c in rig.inner.calls] == [ids.headers(10), ids.headers(11)]

    def test_stops_at_a_full_queue_and_resumes(self) -> None:
        """BufferError ends the call at that row's index; a call from there sends the rest with their indexes."""
        rig = Rig()
        rig.inner.full = True
        assert rig.fast.produce_rows("t", [b"r0", b"r1"], None, None, ID_HEADER, self.PREFIX, 0, 0) == 0
        rig.inner.full = False
        assert rig.fast.produce_rows("t", [b"r0", b"r1"], None, None, ID_HEADER, self.PREFIX, 0, 0) == 2
        assert [decode_identity(c[7][0][1]).row for c in rig.inner.calls] == [0, 1]

    def test_rows_python_must_decide_keep_their_header(self) -> None:
        """A keyed row whose home is muted goes to the Python produce() with the same binary header."""
        home = key_partitioner("murmur2_random")(b"k", 6)
        rig = Rig(key_mode=fp.KP_MURMUR2_RANDOM, muted=frozenset({home}))
        assert rig.fast.produce_rows("t", [b"v"], [b"k"], None, ID_HEADER, self.PREFIX, 7, 0) == 1
        assert rig.slow_calls == [(("t", b"v", b"k"), {"headers": [(ID_HEADER, row_id(self.PREFIX, 7))]})]

    def test_fixed_with_a_bytes_prefix_is_refused(self) -> None:
        """One binary header: a fixed pair beside it is a TypeError in C and in the model, before any row."""
        rig = Rig()
        args = ("t", [b"v"], None, (BATCH_HEADER, b"q:3"), ID_HEADER, self.PREFIX, 0, 0)
        with pytest.raises(TypeError, match="fixed must be None"):
            rig.fast.produce_rows(*args)
        with pytest.raises(TypeError, match="fixed must be None"):
            reference.produce_rows(rig.fast.produce, *args)
        assert rig.inner.calls == []


class TestOlderHeaders:
    def test_two_strings_read_as_the_binary_identity(self) -> None:
        """x-mutepro-batch + x-mutepro-row of a row are the same canonical identity as its binary header."""
        old = [("other", b"1"), (BATCH_HEADER, b"q:3"), (ROW_HEADER, b"0:7")]
        new = [(ID_HEADER, row_id(task_prefix("q:3", 0), 7))]
        assert row_identity(old) == row_identity(new) == from_strings(b"q:3", b"0:7")
        assert decode_identity(row_identity(old) or b"") == RowId(label_digest("q:3"), 0, 7)

    def test_an_unparsable_row_header_keeps_its_text(self) -> None:
        """A row header that is not <partition>:<row> still names the row, and can never equal a binary one."""
        odd = row_identity([(BATCH_HEADER, b"q:3"), (ROW_HEADER, b"x7")])
        assert odd is not None and odd[0] == 0 and odd != row_identity([(BATCH_HEADER, b"q:3"), (ROW_HEADER, b"x8")])

    def test_not_a_sink_message(self) -> None:
        """One of the two older headers alone, or no headers, is no identity."""
        assert row_identity([(BATCH_HEADER, b"q:3")]) is None
        assert row_identity([(ROW_HEADER, b"0:1")]) is None
        assert row_identity(None) is None and row_identity([]) is None
