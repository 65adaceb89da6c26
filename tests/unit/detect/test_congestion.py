"""The congestion detector (mutepro.detect.congestion)."""

from __future__ import annotations

import pytest

from mutepro.detect.congestion import CongestionDetector
from mutepro.errors import ConfigError
from tests.unit.detect._loads import load


class TestCongestionDetector:
    def test_over_message_share(self) -> None:
        """More than 25 % of 1000 messages (251) trips."""
        d = CongestionDetector(max_share=0.25, min_messages=10)
        v = d.check(load(outstanding=251, outstanding_bytes=0, buffer_max_messages=1000), 0)
        assert v is not None and v.reason == "congestion" and v.detail["limit"] == "messages"

    def test_exactly_at_share_does_not_trip(self) -> None:
        """Exactly 25 % is not *more* than its share."""
        d = CongestionDetector(max_share=0.25, min_messages=10)
        assert d.check(load(outstanding=250, outstanding_bytes=0, buffer_max_messages=1000), 0) is None

    def test_over_byte_share(self) -> None:
        """Few messages but more than half the bytes trips on bytes."""
        d = CongestionDetector(max_share=0.5, min_messages=10)
        v = d.check(load(outstanding=20, outstanding_bytes=600, buffer_max_bytes=1000), 0)
        assert v is not None and v.detail["limit"] == "bytes" and v.detail["byte_share"] == 0.6

    def test_below_min_messages(self) -> None:
        """A tiny buffer: 9 of 10 messages is 90 % but under min_messages."""
        d = CongestionDetector(max_share=0.5, min_messages=10)
        assert d.check(load(outstanding=9, outstanding_bytes=0, buffer_max_messages=10), 0) is None

    def test_zero_limits_are_ignored(self) -> None:
        """An unknown (0) buffer limit never trips on its own."""
        d = CongestionDetector(max_share=0.5, min_messages=1)
        assert d.check(load(outstanding=50, outstanding_bytes=50, buffer_max_messages=0, buffer_max_bytes=0), 0) is None

    def test_a_draining_partition_is_not_congested(self) -> None:
        """Over its share but with its oldest message younger than min_age: it drains, no verdict."""
        d = CongestionDetector(max_share=0.25, min_messages=10, min_age_s=0.2)
        assert d.check(load([0.05, 0.01], outstanding=600, outstanding_bytes=0, buffer_max_messages=1000), 0) is None
        assert d.check(load(outstanding=600, outstanding_bytes=0, buffer_max_messages=1000), 0) is None

    def test_an_old_backlog_over_its_share_trips(self) -> None:
        """Over its share with a message waiting longer than min_age: congestion, with the age reported."""
        d = CongestionDetector(max_share=0.25, min_messages=10, min_age_s=0.2)
        v = d.check(load([0.35, 0.1], outstanding=600, outstanding_bytes=0, buffer_max_messages=1000), 0)
        assert v is not None and v.detail["oldest_age_ms"] == 350

    def test_rejects_negative_min_age(self) -> None:
        """A negative min_age is a ConfigError naming the policy key."""
        with pytest.raises(ConfigError, match=r"congestion\.min_age_ms"):
            CongestionDetector(0.5, 1, -0.1)

    def test_rejects_bad_share(self) -> None:
        """max_share outside (0, 1] is a ConfigError."""
        with pytest.raises(ConfigError, match=r"congestion\.max_share"):
            CongestionDetector(0.0, 1)
