"""mutepro's logging: a policy's logging: section is applied (issue 10 item 10) only when written and not
overridden by the application; events are stdlib records of the mutepro.* loggers (issue 11)."""

from __future__ import annotations

import contextlib
import io
import json
import logging
from collections.abc import Iterator

import pytest

from mutepro.logs import ROOT, apply_policy_logging, configure_logging, get_logger
from mutepro.policy import load_policy


def _cli_handlers() -> list[logging.Handler]:
    return [h for h in logging.getLogger(ROOT).handlers if getattr(h, "_mutepro_cli", False)]


@pytest.fixture(autouse=True)
def _unconfigured() -> Iterator[None]:
    """mutepro's CLI handler and level are put back after each test."""
    mutepro = logging.getLogger(ROOT)
    level = mutepro.level
    yield
    for handler in _cli_handlers():
        mutepro.removeHandler(handler)
    mutepro.setLevel(level)


@contextlib.contextmanager
def _no_application_logging() -> Iterator[None]:
    """The root logger without handlers, as in an application that configured nothing (pytest adds its capture
    handlers to it while a test runs, so this is done inside the test)."""
    root = logging.getLogger()
    saved = root.handlers
    root.handlers = []
    try:
        yield
    finally:
        root.handlers = saved


class TestApplyPolicyLogging:
    def test_written_section_is_applied(self, capsys: pytest.CaptureFixture[str]) -> None:
        """level: warning, format: json -> info is dropped, warnings are JSON lines on stderr."""
        policy = load_policy({"logging": {"level": "warning", "format": "json"}}, env={})
        with _no_application_logging():
            assert apply_policy_logging(policy)
        log = get_logger("mutepro.producer")
        log.info("not shown")
        log.warning("shown", partition=3)
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1
        event = json.loads(err[0])
        assert event["event"] == "shown" and event["level"] == "warning" and event["partition"] == 3

    def test_no_section_changes_nothing(self) -> None:
        """A policy without logging: leaves logging alone (a library is silent unless asked)."""
        assert not apply_policy_logging(load_policy({"defaults": {"keyed_policy": "hold"}}, env={}))
        assert not _cli_handlers()

    def test_application_configuration_wins(self, capsys: pytest.CaptureFixture[str]) -> None:
        """If the application configured logging, the policy's section is not applied over it."""
        app = logging.StreamHandler(io.StringIO())
        app.setLevel(logging.ERROR)
        with _no_application_logging():
            logging.getLogger().addHandler(app)
            assert not apply_policy_logging(load_policy({"logging": {"level": "debug"}}, env={}))
        get_logger("mutepro.producer").warning("below the application's level")
        assert "below the application's level" not in capsys.readouterr().err
        assert not _cli_handlers()

    def test_producer_applies_it(self) -> None:
        """MuteProducer built with such a policy configures logging (no broker needed to construct one)."""
        from mutepro.producer import MuteProducer

        policy = load_policy({"logging": {"level": "warning", "format": "json"}}, env={})
        with _no_application_logging():
            producer = MuteProducer({"bootstrap.servers": "127.0.0.1:1", "log_level": 0}, policy=policy)
        try:
            assert len(_cli_handlers()) == 1 and logging.getLogger(ROOT).level == logging.WARNING
        finally:
            producer.close(timeout=1)


class TestEvents:
    def test_silent_without_configuration(self, capsys: pytest.CaptureFixture[str]) -> None:
        """With nothing configured, an error event prints nothing (the NullHandler keeps the last resort away)."""
        get_logger("mutepro.producer").error("driver_thread_failed", producer="p")
        out = capsys.readouterr()
        assert out.out == "" and out.err == ""

    def test_configure_logging_console_and_json(self) -> None:
        """The CLI's configure_logging renders events as console text or JSON lines; a second call replaces."""
        stream = io.StringIO()
        configure_logging("info", "console", stream)
        get_logger("mutepro.cluster").info("fault_stall", node="b2", pid=3)
        get_logger("mutepro.cluster").debug("hidden")
        configure_logging("info", "json", stream)
        get_logger("mutepro.producer").warning("client_error", code=-195)
        lines = stream.getvalue().splitlines()
        assert len(lines) == 2 and len(_cli_handlers()) == 1
        assert "fault_stall" in lines[0] and "node='b2' pid=3" in lines[0]
        assert json.loads(lines[1])["code"] == -195 and json.loads(lines[1])["logger"] == "mutepro.producer"

    def test_bad_settings_are_named(self) -> None:
        """An unknown level or format is a ValueError naming the setting."""
        with pytest.raises(ValueError, match=r"logging\.level"):
            configure_logging("loud")
        with pytest.raises(ValueError, match=r"logging\.format"):
            configure_logging("info", "xml")
