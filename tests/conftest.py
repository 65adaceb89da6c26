"""Shared test setup: mutepro's own pytest fixtures (real Kafka cluster, topics, Redis) and marker defaults."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mutepro.producer import accel

pytest_plugins = ["mutepro.testing.fixtures"]

_UNIT = Path(__file__).parent / "unit"
#: .ci/sanitize.sh runs the tests with AddressSanitizer preloaded
_UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests under tests/unit are `unit` (no Java, no broker); everything else that is not marked is `integration`.
    `soak` tests run last: they stop the session's cluster and start their own (see ``no_session_cluster``)."""
    items.sort(key=lambda item: item.get_closest_marker("soak") is not None)  # stable: the rest keep their order
    for item in items:
        if _UNDER_ASAN and item.get_closest_marker("no_sanitizer"):
            item.add_marker(pytest.mark.skip(reason="cannot run under AddressSanitizer (see the test's marker)"))
        path = Path(str(item.fspath))
        if _UNIT in path.parents:
            item.add_marker(pytest.mark.unit)
        elif not any(item.iter_markers(name="integration")):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(params=["c", "python"], ids=["c-fastpath", "pure-python"])
def producer_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test twice: with the C fast path (when built) and with the pure-Python path. Modules that test every
    MuteProducer behaviour on both paths apply it with ``pytest.mark.usefixtures("producer_path")``."""
    if request.param == "c" and not accel.available():
        pytest.skip("the C fast path is not built here")
    if request.param == "python":
        monkeypatch.setattr(accel, "fastpath", None)
    return str(request.param)
