"""The ``mutepro`` command (mutepro.cli): its groups found lazily, a group whose optional extra is missing not
offered, and the entry point turning errors into one line and an exit code (the groups themselves: each
package's test_cli.py; what a command imports: test_library_imports.py)."""

from __future__ import annotations

import sys
import types

import click
import pytest
from click.testing import CliRunner

from mutepro import __version__, cli
from mutepro.errors import ConfigError


class TestGroups:
    def test_help_lists_every_group(self) -> None:
        result = CliRunner().invoke(cli.cli, ["--help"])
        assert result.exit_code == 0, result.output
        for name in ("cluster", "config", "racks", "demo", "trace"):
            assert name in result.output

    def test_version(self) -> None:
        result = CliRunner().invoke(cli.cli, ["--version"])
        assert result.exit_code == 0 and __version__ in result.output

    def test_a_group_whose_optional_extra_is_missing_is_not_offered(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A group whose module is absent (as ``mutepro spark`` is without the spark extra): not listed, and
        looking it up finds nothing."""
        monkeypatch.setitem(cli._GROUPS, "nospark", ("tests.unit.nowhere_such_module", "x"))
        group = cli._LazyGroup()
        ctx = click.Context(group)
        assert group.get_command(ctx, "nospark") is None
        assert "nospark" not in group.list_commands(ctx)

    def test_a_broken_group_is_not_hidden(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A group module that fails importing something that is not optional raises: a bug is not swallowed."""
        broken = types.ModuleType("tests_unit_broken_group")
        monkeypatch.setitem(sys.modules, "tests_unit_broken_group", broken)
        broken.__getattr__ = lambda name: __import__("not_an_optional_extra_module")  # type: ignore[method-assign]
        monkeypatch.setitem(cli._GROUPS, "broken", ("tests_unit_broken_group", "group"))
        group = cli._LazyGroup()
        with pytest.raises(ModuleNotFoundError, match="not_an_optional_extra_module"):
            group.get_command(click.Context(group), "broken")


class TestMain:
    def _run(self, monkeypatch: pytest.MonkeyPatch, raised: BaseException) -> int:
        def command(*args: object, **kwargs: object) -> None:
            raise raised

        monkeypatch.setattr(cli.cli, "main", command)
        with pytest.raises(SystemExit) as exit_:
            cli.main()
        assert isinstance(exit_.value.code, int)
        return exit_.value.code

    def test_a_mutepro_error_is_one_line_and_exit_1(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert self._run(monkeypatch, ConfigError("linger.ms: bad; use a number")) == 1
        assert capsys.readouterr().err.strip() == "error: linger.ms: bad; use a number"

    def test_ctrl_c_is_130_and_usage_errors_keep_their_code(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert self._run(monkeypatch, click.exceptions.Abort()) == 130
        assert "aborted" in capsys.readouterr().err
        assert self._run(monkeypatch, click.UsageError("no such option")) == 2
        assert self._run(monkeypatch, click.exceptions.Exit(3)) == 3
