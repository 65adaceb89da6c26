"""The ``mutepro demo`` command line: options checked before any cluster starts."""

from __future__ import annotations

from click.testing import CliRunner

from mutepro.demo.command import demo


class TestDemoCommand:
    def test_master_with_plain_is_a_usage_error_before_anything_starts(self) -> None:
        result = CliRunner().invoke(demo, ["--plain", "--master", "spark://127.0.0.1:7077"])
        assert result.exit_code == 2
        assert "--master" in result.output and "--plain" in result.output

    def test_master_is_offered_with_its_slot_need(self) -> None:
        result = CliRunner().invoke(demo, ["--help"])
        assert result.exit_code == 0
        assert "--master URL" in result.output
        assert "4 task slots" in " ".join(result.output.split())  # click wraps the help text
