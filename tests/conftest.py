"""Shared test setup: mutepro's own pytest fixtures (real Kafka cluster, topics, Redis) and marker defaults."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import mutepro

pytest_plugins = ["mutepro.testing.fixtures"]

_UNIT = Path(__file__).parent / "unit"
#: .ci/sanitize.sh runs the tests with AddressSanitizer preloaded
_UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
_CHECKOUT = Path(__file__).resolve().parents[1]

# The `mutepro` command and every other script a test starts come from this interpreter's environment (with
# .ci/install.sh's .mutepro/venv/bin/pytest: that venv, whatever PATH the shell had), as sys.executable does.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
# Tests share helpers as `tests.unit._producer_fakes` and the like. The checkout goes at the END of sys.path: first
# would put its mutepro/ ahead of the installed one (`pytest` run as a script does not add the working directory).
if str(_CHECKOUT) not in sys.path:
    sys.path.append(str(_CHECKOUT))


def pytest_sessionstart(session: pytest.Session) -> None:
    """In CI (CI=true) the tests run against the wheel .ci/install.sh built and installed, C fast path included:
    a checkout's mutepro/ shadowing it (pytest run with `python -m`, or a stray PYTHONPATH) would let a broken
    wheel, or a dependency's release the venv did not get, pass unseen (the wheel's C extension is imported by
    ``import mutepro``: a wheel without it fails there). The sanitizer step imports its own build
    on purpose (PYTHONPATH names it)."""
    if os.environ.get("CI") != "true" or _UNDER_ASAN:
        return
    here = Path(mutepro.__file__).resolve().parent
    assert here != _CHECKOUT / "mutepro", f"CI tests the installed wheel, but mutepro was imported from {here}"


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
