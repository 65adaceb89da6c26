"""``mutepro demo`` end to end: a short run of both Spark jobs on the test cluster (real Spark, a real stall),
as a subprocess like a user's, checking that the table, the plot and the JSON come out complete and that the
mute-aware job lost nothing. No timing thresholds: the figures depend on the machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mutepro
from mutepro.cluster import LocalCluster, can_inject_faults

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
pytest.importorskip("matplotlib")

pytestmark = [pytest.mark.spark, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
# where this session imports mutepro from (the installed wheel in CI, this checkout when PYTHONPATH names it):
# the subprocesses below import the same one; -P keeps their working directory off sys.path
MUTEPRO_HOME = str(Path(mutepro.__file__).resolve().parents[1])
_SUMMARY_KEYS = {
    "rows_per_s", "fault_vs_before", "batch_seconds", "p99_ms", "committed", "read_back", "lost", "duplicates",
    "mutes", "mutes_before_fault", "time_to_mute_s", "muted_in", "time_to_unmute_s", "failures",
}


def test_short_demo_writes_table_plot_and_json(kafka_cluster: LocalCluster, tmp_path: Path) -> None:
    """30 s with broker 2 stalled in the middle: exit 0, every figure present, 0 committed rows lost by mutepro."""
    if not can_inject_faults(kafka_cluster):
        pytest.skip("MUTEPRO_BOOTSTRAP names a cluster mutepro did not start: the demo cannot stall its broker")
    env = {
        **os.environ,
        "MUTEPRO_BOOTSTRAP": kafka_cluster.bootstrap_servers,
        "MUTEPRO_CLUSTER_DIR": str(kafka_cluster.run_dir),
        "PYTHONPATH": os.pathsep.join([MUTEPRO_HOME, *filter(None, [os.environ.get("PYTHONPATH")])]),
        # and not a checkout in their working directory (see mutepro.spark.workerenv)
        "PYTHONSAFEPATH": "1",
    }
    proc = subprocess.run(
        [sys.executable, "-P", "-c", "from mutepro.cli import main; main()", "demo", "--duration", "30", "--fault",
         "stall", "--rate", "1000", "--out", str(tmp_path)],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    out = proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out[-4000:]}\n{proc.stderr[-4000:]}"
    assert "left running" in out  # it used the test cluster, and did not stop it
    for row in ("rows/s before", "rows/s stall", "during fault / before", "batch s median / max", "p99 latency ms",
                "rows lost", "duplicates", "time to mute", "time to unmute", "query failures"):
        assert row in out, f"table row {row!r} missing:\n{out[-4000:]}"
    assert f"plot written to {tmp_path / 'demo.png'}" in out
    assert (tmp_path / "demo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    record = json.loads((tmp_path / "demo.json").read_text())
    assert [p["name"] for p in record["plan"]["phases"]] == ["before", "stall", "after"]
    assert [m["phase"] for m in record["fault_marks"]] == ["stall"]
    jobs = record["jobs"]
    assert set(jobs) == {"mutepro sink", "Spark built-in Kafka sink"}
    for name, job in jobs.items():
        summary = job["summary"]
        assert set(summary) >= _SUMMARY_KEYS, name
        assert set(summary["rows_per_s"]) == {"before", "stall", "fault", "after"}
        assert summary["committed"] > 0 and job["batches"] and len(job["rows_per_s"]) == 30, name
    ours = jobs["mutepro sink"]["summary"]
    assert ours["lost"] == 0
    assert ours["read_back"] >= ours["committed"]
    assert kafka_cluster.node(2).is_running()  # the broker was resumed
