"""The detection model's value types: PartitionLoad, Verdict, MuteReason (mutepro.detect.model)."""

from __future__ import annotations

from types import MappingProxyType

from mutepro.detect.model import MuteReason, PartitionLoad, Verdict
from tests.unit.detect._loads import IDLE, load


class TestPartitionLoad:
    def test_counts_strictly_older(self) -> None:
        """count_older_than counts ages strictly above the threshold by bisection."""
        pl = load([9.0, 5.0, 2.0, 2.0, 1.0, 0.1])
        assert [pl.count_older_than(t) for t in (10, 9, 4, 2, 1.5, 0.0)] == [0, 0, 2, 2, 4, 6]

    def test_oldest_only(self) -> None:
        """Without ages_s the oldest outstanding message counts as one once past the threshold."""
        pl = PartitionLoad(1, 10, 3.0, 100, 1000)
        assert (pl.count_older_than(2.0), pl.count_older_than(3.0)) == (1, 0)

    def test_nothing_outstanding(self) -> None:
        """An idle partition has nothing older than anything."""
        assert IDLE.count_older_than(0.0) == 0

class TestVerdict:
    def test_describe_one_line(self) -> None:
        """describe() renders reason and figures on one line."""
        v = Verdict("slow_call", {"slow_call_rate": 0.93, "threshold_pct": 50, "calls": 41})
        assert v.describe() == "slow_call: slow_call_rate=0.93 threshold_pct=50 calls=41"

    def test_describe_without_detail(self) -> None:
        """A verdict without figures is just its reason."""
        assert Verdict("manual").describe() == "manual"

    def test_detail_is_read_only_copy(self) -> None:
        """The detail mapping is frozen and detached from the caller's dict."""
        src = {"a": 1}
        v = Verdict("x", src)
        src["a"] = 2
        assert isinstance(v.detail, MappingProxyType) and v.detail["a"] == 1

    def test_hashable_by_value(self) -> None:
        """Equal verdicts hash equally, so they work in sets."""
        assert len({Verdict("x", {"a": 1, "b": 2}), Verdict("x", {"b": 2, "a": 1}), Verdict("x")}) == 2

    def test_dict_round_trip(self) -> None:
        """to_dict / from_dict preserve reason and detail."""
        v = Verdict("broker", {"broker_id": 3, "cause": "down"})
        assert Verdict.from_dict(v.to_dict()) == v

class TestMuteReason:
    def test_round_trip_keeps_the_enum(self) -> None:
        """A built-in reason survives to_dict/from_dict (the shared store's format) as its MuteReason member."""
        data = Verdict(MuteReason.SLOW_CALL, {"calls": 3}).to_dict()
        assert data == {"reason": "slow_call", "detail": {"calls": 3}}
        assert type(data["reason"]) is str
        back = Verdict.from_dict(data)
        assert back.reason is MuteReason.SLOW_CALL and back == Verdict("slow_call", {"calls": 3})

    def test_custom_reason_stays_a_string(self) -> None:
        """A custom detector's name is kept as written."""
        back = Verdict.from_dict(Verdict("my_detector").to_dict())
        assert back.reason == "my_detector" and not isinstance(back.reason, MuteReason)

    def test_describe_uses_the_name(self) -> None:
        """describe() shows the reason's name, not the enum's repr."""
        assert Verdict(MuteReason.BROKER, {"cause": "down"}).describe() == "broker: cause=down"
