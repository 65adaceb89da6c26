"""Hostile or broken YAML: alias and merge-key bombs, recursion, tags and deep nesting are named and refused
with bounded work; loading stays linear in the number of keys; nothing in a file is ever executed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mutepro.policy import PolicyError, load_policy
from mutepro.policy.source import MAX_BYTES, MAX_DEPTH, read_file, read_text
from tests.unit._policy_helpers import issues_of, write


def _alias_bomb(levels: int = 9) -> str:
    """The "billion laughs": each anchor repeats the previous one nine times (9**levels values, ~530 bytes)."""
    lines = ['x-a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for index in range(levels - 1):
        name = f"l{index}"
        lines.append(f"x-{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    lines.append(f"defaults: {{keyed_policy: *{previous}}}")
    return "\n".join(lines) + "\n"


def _merge_bomb(levels: int = 30) -> str:
    """Each mapping merges the previous one twice: 2**levels merged keys from ~1 KB."""
    lines = ["x-m0: &m0 {k0: 1, k1: 2}"]
    for index in range(1, levels):
        lines.append(f"x-m{index}: &m{index} {{<<: [*m{index - 1}, *m{index - 1}], z{index}: 1}}")
    lines.append(f"defaults: {{<<: *m{levels - 1}}}")
    return "\n".join(lines) + "\n"


def _refusal(text: str) -> str:
    source, issues = read_text(text, "f.yaml")
    assert source is None and len(issues) == 1, issues
    return str(issues[0])


@pytest.mark.timeout(60)
class TestBombs:
    def test_alias_bomb_is_refused(self) -> None:
        """A 9-level alias bomb (387 million values) is refused by name, not expanded."""
        text = _alias_bomb()
        assert len(text) < 600
        assert "alias bomb" in _refusal(text)

    def test_merge_key_bomb_is_refused(self) -> None:
        """Merge keys that double at every level are refused by name."""
        assert "alias bomb" in _refusal(_merge_bomb())

    def test_alias_bomb_through_load_policy(self, tmp_path: Path) -> None:
        """The refusal reaches load_policy (and so config check) as one issue with the file's line."""
        issues = issues_of(write(tmp_path, _alias_bomb()))
        assert len(issues) == 1 and issues[0].line is not None and "too many values" in issues[0].message

    def test_reused_anchor_is_fine(self) -> None:
        """A real anchor reused by many topic entries is not mistaken for a bomb."""
        lines = ["x-s: &s {keyed_policy: hold, slow_call: {threshold_ms: 700, minimum_calls: 5}}", "topics:"]
        lines += [f"  t{i}: *s" for i in range(2000)]
        source, issues = read_text("\n".join(lines) + "\n", "f.yaml")
        assert issues == [] and source is not None and len(source.data["topics"]) == 2000


class TestRefusedShapes:
    def test_recursive_sequence_alias(self) -> None:
        """An alias inside its own anchor is named as recursive."""
        assert "recursive YAML alias" in _refusal("x-a: &a [1, *a]\n")

    def test_recursive_mapping_alias(self) -> None:
        """A mapping that contains itself is named as recursive."""
        assert "recursive YAML alias" in _refusal("x-a: &a {b: *a}\n")

    def test_recursive_merge_key(self) -> None:
        """A mapping merging itself is named as recursive."""
        assert "recursive" in _refusal("x-a: &a {<<: *a, b: 1}\n")

    @pytest.mark.parametrize(
        "text",
        [
            "defaults: !!python/name:os.system\n",
            "defaults: !!python/object/apply:os.system ['touch /tmp/mutepro-pwned']\n",
            "defaults: !custom {a: 1}\n",
            "defaults: {keyed_policy: !env hold}\n",
        ],
    )
    def test_tags_are_refused(self, text: str) -> None:
        """python/ and custom tags are refused by name; nothing is constructed or run."""
        assert "YAML tags are not allowed" in _refusal(text)
        assert not Path("/tmp/mutepro-pwned").exists()

    def test_core_tags_are_fine(self) -> None:
        """!!str and !!int are plain YAML and still allowed."""
        source, issues = read_text("a: !!str 5\nb: !!int '7'\n", "f.yaml")
        assert issues == [] and source is not None and source.data == {"a": "5", "b": 7}

    def test_flow_nesting_3000_deep(self) -> None:
        """3,000 nested flow lists are refused as too deep, not a RecursionError."""
        assert "nests deeper than" in _refusal("x: " + "[" * 3000 + "]" * 3000 + "\n")

    def test_block_nesting_past_the_limit(self) -> None:
        """Block mappings nested past MAX_DEPTH are refused at the offending key."""
        text = "x:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, MAX_DEPTH + 5))
        assert "nests deeper than" in _refusal(text)


class TestLinearLoading:
    @staticmethod
    def _policy(tmp_path: Path, entries: int) -> Path:
        lines = ["x-s: &s {keyed_policy: hold}", "topics:"]
        for i in range(entries):
            lines.append(f"  t{i}: {{<<: *s, keyed_policy: fail, slow_call: {{threshold_ms: {100 + i}}}}}")
        return write(tmp_path, "\n".join(lines) + "\n", f"p{entries}.yaml")

    def test_thousands_of_topic_entries_load_with_their_merges(self, tmp_path: Path) -> None:
        """8,000 topic entries, each merging an anchor and overriding it, load with every override in place (how
        the load time grows is measured in benchmarks/policy_load.py: timings do not belong in tests)."""
        policy = load_policy(self._policy(tmp_path, 8000), env={})
        assert policy.for_topic("t7999").slow_call.threshold_ms == 8099
        assert policy.for_topic("t0").keyed_policy == "fail" and len(policy.topics) == 8000


@pytest.mark.timeout(30)
class TestWhatIsRead:
    """Only a regular file of at most MAX_BYTES is read, and its type and size are checked before any parsing:
    ``/dev/zero`` never ends, a FIFO with no writer blocks ``open()`` forever, a 50 MB file took 107 s to fail."""

    def test_a_file_over_the_bound_is_refused_before_parsing(self, tmp_path: Path) -> None:
        big = tmp_path / "big.yaml"
        with open(big, "wb") as handle:  # sparse: MAX_BYTES + 1 bytes of NUL, which no YAML parser accepts
            handle.truncate(MAX_BYTES + 1)
        source, issues = read_file(big)
        assert source is None and "larger than 4 MiB" in str(issues[0])

    def test_a_file_at_the_bound_is_read(self, tmp_path: Path) -> None:
        path = tmp_path / "edge.yaml"
        text = "version: 1\n#" + "x" * (MAX_BYTES - 13) + "\n"
        path.write_text(text)
        assert path.stat().st_size == MAX_BYTES
        source, issues = read_file(path)
        assert issues == [] and source is not None and source.data == {"version": 1}

    def test_a_character_device_is_refused_by_its_type(self) -> None:
        source, issues = read_file("/dev/zero")
        assert source is None and "not a character device" in str(issues[0])

    def test_a_fifo_without_a_writer_is_refused_without_opening_it(self, tmp_path: Path) -> None:
        fifo = tmp_path / "policy.fifo"
        os.mkfifo(fifo)
        source, issues = read_file(fifo)
        assert source is None and "not a FIFO" in str(issues[0])

    def test_a_directory_is_refused(self, tmp_path: Path) -> None:
        source, issues = read_file(tmp_path)
        assert source is None and "not a directory" in str(issues[0])

    def test_load_policy_names_the_file_and_the_fix(self) -> None:
        with pytest.raises(PolicyError, match=r"/dev/zero.*regular file"):
            load_policy("/dev/zero")
