"""Faults on a mutepro-started cluster (mutepro.cluster.faults), without Java: a limping broker's arguments
checked before any signal is sent (its effect on running brokers: tests/integration/test_cluster.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.cluster.faults import Limper
from mutepro.cluster.process import NodeProcess
from mutepro.errors import ConfigError


class TestLimper:
    def test_duty_outside_zero_one_is_rejected(self, tmp_path: Path) -> None:
        """duty is a fraction; 80 (percent) is a mistake the error explains."""
        node = NodeProcess(1, "broker", 9092, tmp_path)
        with pytest.raises(ConfigError, match="duty:"):
            Limper(node, duty=80)

    def test_unbounded_duration_is_rejected(self, tmp_path: Path) -> None:
        """Every fault loop is bounded in time."""
        node = NodeProcess(1, "broker", 9092, tmp_path)
        with pytest.raises(ConfigError, match="max_duration_s:"):
            Limper(node, max_duration_s=10_000)
