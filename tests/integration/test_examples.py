"""Every example in examples/ runs, as a user would run it, against the test cluster (a subprocess each, bounded),
and examples/README.md indexes exactly the examples there are."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mutepro
from mutepro.cluster import LocalCluster, can_inject_faults

ROOT = Path(__file__).resolve().parents[2]
# where this session imports mutepro from (the installed wheel in CI, this checkout when PYTHONPATH names it):
# the subprocesses below import the same one
MUTEPRO_HOME = str(Path(mutepro.__file__).resolve().parents[1])
EXAMPLES = ROOT / "examples"

#: example -> (what its output must show, needs Spark, needs faults)
EXPECTED: dict[str, tuple[tuple[str, ...], bool, bool]] = {
    "quickstart.py": ((r"muted while broker 2 is stalled: \{'events-\w+': \[(1|4|1, 4)\]\}", r"undelivered: 0;"),
                      False, True),
    "serializing_producer.py": ((r"muted while broker 2 is stalled: \{'readings-\w+': \[(1|4|1, 4)\]\}",
                                 r"undelivered: 0; failed: 0;", r"read back and decoded: 4000 of 4000 readings"),
                                False, True),
    "asyncio_producer.py": ((r"muted while broker 2 is stalled: \{'events-\w+': \[(1|4|1, 4)\]\}",
                             r"failed: 0; counters"), False, True),
    "from_policy.py": ((r"orders keyed policy: hold", r"undelivered after flush: 0"), False, False),
    "keyed_policies.py": ((r"clicks +\(reroute\) while broker 2 is muted: delivered per partition \{0: \d+, 2: \d+\}",
                           r"payments: _STATE", r"undelivered: 0"), False, False),
    "spark_sink.py": ((r"rows written: [1-9]\d* in [1-9]\d* micro-batches",), True, False),
    "spark_datasource.py": ((r"read 5000 rows, dropped 0 replays",), True, False),
    "racks_plan_audit.py": ((r"plan range +\(classic +\): \d+ of 6", r"audit clean: False",
                             r"reassignment: [1-9]\d* partitions to move"), False, False),
    "static_membership.py": ((r"group.instance.id '[^']+-0'", r"is free in group", r"already used in group",
                              r"- same partitions"),
                             False, False),
    "cluster_faults.py": ((r"after resume: 0 undelivered",), False, True),
    "rack_aware_producer.py": ((r"client.rack rack-a: partitions led in it: \[0, 3\]",
                                r"unkeyed messages on local leaders: 5000 of 5000"), False, False),
}
_TIMEOUT_S = {True: 240, False: 120}


def test_the_index_lists_every_example_and_every_example_is_run() -> None:
    """examples/README.md names each examples/*.py once, and EXPECTED covers the same files."""
    files = {p.name for p in EXAMPLES.glob("*.py")}
    indexed = re.findall(r"^- \[(\w+\.py)\]", (EXAMPLES / "README.md").read_text(), flags=re.MULTILINE)
    assert sorted(indexed) == sorted(files)
    assert set(EXPECTED) == files


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=[pytest.mark.spark] if EXPECTED[n][1] else []) for n in EXPECTED],
)
def test_example_runs(name: str, kafka_cluster: LocalCluster) -> None:
    """The example exits 0 within its bound and prints what it is about."""
    patterns, spark, faults = EXPECTED[name]
    if spark:
        pytest.importorskip("pyspark")
        pytest.importorskip("pyarrow")
    if faults and not can_inject_faults(kafka_cluster):
        pytest.skip("MUTEPRO_BOOTSTRAP names a cluster mutepro did not start: no faults")
    env = {
        **os.environ,
        "MUTEPRO_BOOTSTRAP": kafka_cluster.bootstrap_servers,
        "MUTEPRO_CLUSTER_DIR": str(kafka_cluster.run_dir),
        # the example (and Spark's Python workers) import the mutepro this session imports
        "PYTHONPATH": os.pathsep.join([MUTEPRO_HOME, *filter(None, [os.environ.get("PYTHONPATH")])]),
        # and not a checkout in their working directory (see mutepro.spark.workerenv)
        "PYTHONSAFEPATH": "1",
    }
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], env=env, cwd=ROOT, capture_output=True, text=True,
        timeout=_TIMEOUT_S[spark], check=False,
    )
    assert proc.returncode == 0, f"{name} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    for pattern in patterns:
        assert re.search(pattern, proc.stdout), f"{name}: no match for {pattern!r} in:\n{proc.stdout[-3000:]}"
