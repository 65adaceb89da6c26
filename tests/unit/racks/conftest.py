"""The group scenario file the planner's and the plan command's tests read."""

from __future__ import annotations

from pathlib import Path

import pytest

#: three consumers, one per rack, over a 6-partition RF 1 topic striped over the brokers; c2 owns orders-0
SCENARIO = """
brokers: {1: rack-a, 2: rack-b, 3: rack-c}
topics:
  orders: {partitions: 6, replication_factor: 1, bytes_per_partition: 1000}
members:
  - {id: c0, rack: rack-a}
  - {id: c1, rack: rack-b}
  - {id: c2, rack: rack-c, owned: [orders-0], generation: 2}
"""


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "group.yaml"
    path.write_text(SCENARIO)
    return path
