"""Key paths and their dotted display (mutepro.policy.paths)."""

from __future__ import annotations

from mutepro.policy.paths import format_path, get_path, walk


class TestFormatPath:
    def test_plain_keys_are_dotted_and_indices_bracketed(self) -> None:
        assert format_path(("topics", "orders", "slow_call", "threshold_ms")) == "topics.orders.slow_call.threshold_ms"
        assert format_path(("detectors", 0, "name")) == "detectors[0].name"

    def test_dotted_client_keys_and_patterns_are_quoted(self) -> None:
        assert format_path(("client", "message.timeout.ms")) == 'client."message.timeout.ms"'
        assert format_path(("topics", "metrics.*", "keyed_policy")) == 'topics."metrics.*".keyed_policy'
        assert format_path(("topics", 'a"b')) == 'topics."a\\"b"'


class TestGetPath:
    def test_found_in_mappings_and_lists(self) -> None:
        data = {"a": [{"b": 0}]}
        assert get_path(data, ("a", 0, "b")) == (True, 0)
        assert get_path(data, ()) == (True, data)

    def test_missing_keys_and_indices_are_not_found(self) -> None:
        data = {"a": [1]}
        assert get_path(data, ("b",)) == (False, None)
        assert get_path(data, ("a", 1)) == (False, None)
        assert get_path(data, ("a", -1)) == (False, None)
        assert get_path(data, ("a", "0")) == (False, None)


class TestWalk:
    def test_every_path_parents_first(self) -> None:
        assert walk({"a": {"b": 1}, "c": [2]}) == [(), ("a",), ("a", "b"), ("c",), ("c", 0)]
