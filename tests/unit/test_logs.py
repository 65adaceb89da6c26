"""A policy's logging: section is applied (issue 10 item 10), and only when written and not overridden."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import structlog

from mutepro.logs import apply_policy_logging, configure_logging
from mutepro.policy import load_policy


@pytest.fixture(autouse=True)
def _unconfigured() -> Iterator[None]:
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


class TestApplyPolicyLogging:
    def test_written_section_is_applied(self, capsys: pytest.CaptureFixture[str]) -> None:
        """level: warning, format: json -> info is dropped, warnings are JSON lines on stderr."""
        policy = load_policy({"logging": {"level": "warning", "format": "json"}}, env={})
        assert apply_policy_logging(policy)
        log = structlog.get_logger("mutepro.producer")
        log.info("not shown")
        log.warning("shown", partition=3)
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and json.loads(err[0])["event"] == "shown" and json.loads(err[0])["level"] == "warning"

    def test_no_section_changes_nothing(self) -> None:
        """A policy without logging: leaves structlog alone (a library is silent unless asked)."""
        assert not apply_policy_logging(load_policy({"defaults": {"keyed_policy": "hold"}}, env={}))
        assert not structlog.is_configured()

    def test_application_configuration_wins(self, capsys: pytest.CaptureFixture[str]) -> None:
        """If the application configured structlog, the policy's section is not applied over it."""
        configure_logging("error", "console")
        assert not apply_policy_logging(load_policy({"logging": {"level": "debug"}}, env={}))
        structlog.get_logger("mutepro.producer").warning("below the application's level")
        assert "below the application's level" not in capsys.readouterr().err

    def test_producer_applies_it(self, capsys: pytest.CaptureFixture[str]) -> None:
        """MuteProducer built with such a policy configures logging (no broker needed to construct one)."""
        from mutepro.producer import MuteProducer

        policy = load_policy({"logging": {"level": "warning", "format": "json"}}, env={})
        producer = MuteProducer({"bootstrap.servers": "127.0.0.1:1", "log_level": 0}, policy=policy)
        try:
            assert structlog.is_configured()
        finally:
            producer.close(timeout=1)
