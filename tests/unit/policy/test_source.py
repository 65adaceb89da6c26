"""Reading YAML with positions: marks per key, quoting, merge keys, empty files, complex keys."""

from __future__ import annotations

from mutepro.policy.source import describe, read_text


class TestReadText:
    def test_marks_are_one_based(self) -> None:
        """Each key's mark is its 1-based line and column."""
        source, issues = read_text("a:\n  b: 1\n", "f.yaml")
        assert issues == [] and source is not None
        mark = source.marks[("a", "b")]
        assert (mark.file, mark.line, mark.column) == ("f.yaml", 2, 3)

    def test_quoted_scalars_are_recorded(self) -> None:
        """Quoted values are remembered (interpolation does not re-type them)."""
        source, _ = read_text("a: '1'\nb: 1\n", "f.yaml")
        assert source is not None
        assert source.quoted == {("a",)}

    def test_merge_keys_with_local_override(self) -> None:
        """<<: *anchor merges the anchored mapping; keys written alongside win."""
        source, issues = read_text("x: &x {a: 1, b: 2}\ny:\n  <<: *x\n  b: 3\n", "f.yaml")
        assert issues == [] and source is not None
        assert source.data["y"] == {"a": 1, "b": 3}
        assert source.marks[("y", "b")].line == 4

    def test_empty_file_is_an_empty_mapping(self) -> None:
        """A file with only comments is an empty overlay."""
        source, issues = read_text("# nothing yet\n", "f.yaml")
        assert issues == [] and source is not None and source.data == {}

    def test_complex_key_is_an_issue(self) -> None:
        """A mapping used as a key is reported at its line."""
        _, issues = read_text("? {a: 1}\n: x\n", "f.yaml")
        assert [(i.line, i.found) for i in issues] == [(1, "a complex key")]


class TestDescribe:
    def test_typed_rendering(self) -> None:
        """Found values show their YAML type."""
        assert [describe(v) for v in ("x", 1, 1.5, True, None, {}, [])] == [
            "'x' (string)",
            "1 (integer)",
            "1.5 (number)",
            "true (boolean)",
            "null",
            "a mapping",
            "a list",
        ]
