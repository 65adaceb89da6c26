"""Merging sources: deep merge of mappings, replacement of everything else, marks from the supplying file."""

from __future__ import annotations

from mutepro.policy.merge import deep_merge, merge_sources
from mutepro.policy.source import read_text


class TestDeepMerge:
    def test_mappings_merge_and_scalars_replace(self) -> None:
        """Nested keys merge; a scalar or list in the overlay replaces the base's."""
        base = {"a": {"x": 1, "y": [1, 2]}, "b": 1}
        assert deep_merge(base, {"a": {"y": [3]}, "c": 2}) == {"a": {"x": 1, "y": [3]}, "b": 1, "c": 2}

    def test_null_replaces(self) -> None:
        """An explicit null in the overlay replaces the value (rescue.header: null disables the header)."""
        assert deep_merge({"h": "x"}, {"h": None}) == {"h": None}

    def test_inputs_untouched(self) -> None:
        """Neither input is modified."""
        base, overlay = {"a": {"x": 1}}, {"a": {"y": 2}}
        deep_merge(base, overlay)
        assert (base, overlay) == ({"a": {"x": 1}}, {"a": {"y": 2}})


class TestMergeSources:
    def test_marks_follow_the_supplying_file(self) -> None:
        """Keys the overlay wrote carry its marks; the rest keep the base's."""
        base, _ = read_text("a:\n  x: 1\n  y: 2\n", "base.yaml")
        overlay, _ = read_text("\n\na:\n  y: 3\n", "prod.yaml")
        assert base is not None and overlay is not None
        merged = merge_sources([base, overlay])
        assert merged.data == {"a": {"x": 1, "y": 3}}
        assert (merged.marks[("a", "x")].file, merged.marks[("a", "x")].line) == ("base.yaml", 2)
        assert (merged.marks[("a", "y")].file, merged.marks[("a", "y")].line) == ("prod.yaml", 4)
        assert merged.name == "base.yaml + prod.yaml"
