"""Kafka's Java producer as a benchmark peer (issue 14): compile ``java/JavaPeerProducer.java`` against the Kafka
jars the project already resolves, run it with the same load as the Python producers, and read its per-message
times back into a :class:`bench_load.Recorder`, so one report function summarises all three producers.

The Java settings (``JAVA_PROPS``) and why:

* ``partitioner.adaptive.partitioning.enable=true`` (Kafka's default since 3.3, written out): KIP-794's
  built-in partitioner sends more to partitions whose leader drains faster;
* ``partitioner.availability.timeout.ms=1000``: with it, a partition whose leader has not taken a batch for
  1 s is left out entirely (0, the default, disables that). 1 s is the order of mutepro's default slow-call
  threshold, so both producers are given the same patience;
* ``acks``, ``linger.ms=5`` and a buffer close to the Python producers' queue (``buffer.memory`` = messages x 600
  bytes) as in the scenario; everything else is the Java producer's default.

Unkeyed only: KIP-794's adaptive logic applies to records without a key (keyed records keep their hash partition),
so in keyed runs the Java producer is the plain client.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_load import ACCEPTED, DELIVERED, FAILED, LoadResult, Recorder

from mutepro.cluster.jars import cache_root, resolve_kafka
from mutepro.errors import PrerequisiteError

SOURCE = Path(__file__).with_name("java") / "JavaPeerProducer.java"

JAVA_PROPS = {
    "partitioner.adaptive.partitioning.enable": "true",
    "partitioner.availability.timeout.ms": "1000",
}


def _classpath() -> str:
    dist = resolve_kafka()
    return str(dist.libs_dir / "*")


def compile_peer() -> Path:
    """Compile the peer once per source and jar set (cached under mutepro's cache); returns the classes dir."""
    javac = shutil.which("javac")
    if javac is None:
        raise PrerequisiteError("javac was not found on PATH; the Java peer needs a JDK 17+")
    cp = _classpath()
    digest = hashlib.sha256(SOURCE.read_bytes() + cp.encode()).hexdigest()[:16]
    out = cache_root() / "java-peer" / digest
    if (out / "JavaPeerProducer.class").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([javac, "-nowarn", "-cp", cp, "-d", str(out), str(SOURCE)], capture_output=True,
                          text=True, timeout=180, check=False)  # fmt: skip
    if proc.returncode != 0:
        raise PrerequisiteError(f"javac failed on {SOURCE.name}:\n{proc.stderr[-2000:]}")
    return out


def java_available() -> bool:
    return shutil.which("javac") is not None and shutil.which("java") is not None


def run_peer(
    bootstrap: str, topic: str, *, mode: str, rate: float, seconds: float, keyed: bool, start_at: float,
    props: dict[str, str], recorder: Recorder, timeout_s: float,
) -> tuple[LoadResult, dict[str, Any]]:
    """Run the Java producer; its messages land in ``recorder`` as if the Python loops had recorded them.

    ``start_at`` is a ``time.monotonic()`` value (the Java side waits for ``System.nanoTime()`` to reach it: the
    same CLOCK_MONOTONIC on Linux), so a fault thread started against the same origin lines up.
    """
    classes = compile_peer()
    with tempfile.TemporaryDirectory(prefix="mutepro-java-peer-") as tmp:
        out = Path(tmp) / "messages.txt"
        cmd = ["java", "-Xmx1g", "-cp", f"{classes}:{_classpath()}", "JavaPeerProducer", bootstrap, topic, mode,
               str(rate), str(seconds), "1" if keyed else "0", str(int(start_at * 1e9)), str(out),
               *(f"{k}={v}" for k, v in props.items())]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"the Java peer failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        totals = json.loads(proc.stdout.strip().splitlines()[-1])
        errors: dict[str, int] = {}
        with out.open() as fh:
            for line in fh:
                seq_s, sent_s, done_s, part_s, err = line.split()
                seq = int(seq_s)
                if seq >= recorder.capacity:
                    continue
                recorder.sent[seq] = float(sent_s)
                if err == "-":
                    recorder.state[seq] = DELIVERED
                    recorder.done[seq] = float(done_s)
                    part = int(part_s)
                    recorder.partition[seq] = part if 0 <= part < 255 else 255
                    recorder.delivered += 1
                else:
                    recorder.state[seq] = FAILED
                    recorder.failed += 1
                    errors[err] = errors.get(err, 0) + 1
        recorder.failed_errors.update(errors)
    # messages written out without a delivery or an error (none expected after flush) stay ACCEPTED: "unreported"
    for seq in range(min(int(totals["offered"]), recorder.capacity)):
        if recorder.sent[seq] and recorder.state[seq] == 0:
            recorder.state[seq] = ACCEPTED
    res = LoadResult(
        totals["t0"], totals["load_end"], totals["end"], int(totals["offered"]), int(totals["accepted"]),
        int(totals["rejected"]), int(totals["rejected"]), 0, 0, 0, totals["end"] - totals["load_end"],
    )
    return res, {"send_blocked_s": totals["send_blocked_s"], "java_props": props, "finished_at": time.monotonic()}
