"""Hostile or broken YAML: alias and merge-key bombs, recursion, tags and deep nesting are named and refused
with bounded work; loading stays linear in the number of keys; nothing in a file is ever executed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.policy import load_policy
from mutepro.policy.source import MAX_DEPTH, read_text
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
