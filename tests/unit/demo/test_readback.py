"""The demo's plain consumer (mutepro.demo.readback), without a broker: the row value the Spark job writes and
reads back, and how read rows are counted (duplicates, per-second deliveries and their latency)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mutepro.demo.readback import ReadBack, decode_value, encode_value_sql
from mutepro.demo.samples import JobSamples


class TestValue:
    def test_value_decodes_row_number_and_timestamp(self) -> None:
        """The value the Spark job writes carries its row number and the rate source's timestamp (epoch ms)."""
        assert decode_value(b"000000004242|1795471234878|xxxx") == (4242, 1795471234878)

    def test_the_sql_pads_the_row_number_to_what_decode_reads(self) -> None:
        sql = encode_value_sql("xx")
        assert "lpad(cast(value as string), 12, '0')" in sql and sql.endswith("'|', 'xx')")


@pytest.fixture
def reader() -> Iterator[ReadBack]:
    """A reader whose consumer is never polled (its broker address is a refused loopback port)."""
    readback = ReadBack("127.0.0.1:1", {"t": JobSamples("mutepro sink", committed=4)}, partitions=1)
    yield readback
    readback._consumer.close()


def _value(row: int, born_ms: int) -> bytes:
    return b"%012d|%d|pad" % (row, born_ms)


class TestCounting:
    def test_rows_and_duplicates(self, reader: ReadBack) -> None:
        """Rows 0, 2, 2 read: 3 read back, 2 distinct, rows 1 and 3 never seen."""
        for row in (0, 2, 2):
            reader._count("t", _value(row, 1000), 2000)
        samples = reader.topics["t"]
        assert (samples.read_back, samples.distinct) == (3, 2)
        assert [reader._seen["t"][i] for i in range(4)] == [1, 0, 1, 0]

    def test_deliveries_count_per_second_once_the_timeline_began(self, reader: ReadBack) -> None:
        """Before begin(): rows only. After begin(0): appended at 12.5 s and 12.6 s, each born 400 ms earlier."""
        reader._count("t", _value(0, 11_900), 12_300)
        assert reader.topics["t"].delivered == {}
        reader.begin(0.0)
        reader._count("t", _value(1, 12_100), 12_500)
        reader._count("t", _value(2, 12_200), 12_600)
        assert reader.topics["t"].delivered == {12: 2}
        assert list(reader.topics["t"].latency_ms[12]) == [400.0, 400.0]
        assert reader.recent_rate("t", 13.4, seconds=2) == 1.0  # seconds 11 and 12: 2 rows in 2 s
