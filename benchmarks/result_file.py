"""One benchmark result file: the figures under a ``meta`` that says how, where and when they were taken.

For the benchmarks that need no cluster (``rescue_cost``, ``policy_load``, ``serializing_bench``): each writes
``results/<name>.json`` with this, and ``make_report.py`` reads command, machine and date from its ``meta``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import confluent_kafka

RESULTS = Path(__file__).resolve().parent / "results"


def spread(values: Sequence[float], digits: int = 3) -> dict[str, float]:
    """Median, min and max of the repetitions (the shape make_report.py reads as a figure with its spread)."""
    return {"median": round(statistics.median(values), digits), "min": round(min(values), digits),
            "max": round(max(values), digits)}  # fmt: skip


def meta(script: str, argv: Sequence[str] | None, **settings: Any) -> dict[str, Any]:
    """Command (as typed), date, machine (cores, load at start, Python, client versions) and the run's settings."""
    args = list(sys.argv[1:] if argv is None else argv)
    return {
        "command": " ".join([f"python benchmarks/{script}.py", *args]).strip(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": {"cpus": os.cpu_count(), "loadavg_at_start": list(os.getloadavg()),
                    "python": platform.python_version(), "platform": platform.platform()},
        "confluent_kafka": confluent_kafka.version()[0], "librdkafka": confluent_kafka.libversion()[0],
        **settings,
    }  # fmt: skip


def write(name: str, result: dict[str, Any], out: str | os.PathLike[str] | None = None) -> Path:
    """Write ``result`` to ``<out or results/>/<name>.json`` and return the path."""
    directory = Path(out) if out is not None else RESULTS
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    return path
