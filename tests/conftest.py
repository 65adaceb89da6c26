"""Shared test setup: mutepro's own pytest fixtures (real Kafka cluster, topics, Redis) and marker defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["mutepro.testing.fixtures"]

_UNIT = Path(__file__).parent / "unit"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests under tests/unit are `unit` (no Java, no broker); everything else that is not marked is `integration`."""
    for item in items:
        path = Path(str(item.fspath))
        if _UNIT in path.parents:
            item.add_marker(pytest.mark.unit)
        elif not any(item.iter_markers(name="integration")):
            item.add_marker(pytest.mark.integration)
