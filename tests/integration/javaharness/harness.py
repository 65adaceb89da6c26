"""Compile and run ``AssignorHarness.java`` against the resolved kafka-clients jar.

The harness is compiled once into ``<cache>/assignor-harness/<digest>/`` (the digest covers the source and the
jar names, so a new Kafka version or an edited harness recompiles) and then runs any number of scenarios in
one JVM: 1,000 scenarios take a couple of seconds, a JVM per scenario would take minutes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutepro.cluster.jars import KafkaDistribution, cache_root, require_java, resolve_kafka
from mutepro.errors import PrerequisiteError
from mutepro.racks.assign.model import Assignment, Scenario, TopicPartition

SOURCE = Path(__file__).with_name("AssignorHarness.java")
_COMPILE_TIMEOUT_S = 180
_RUN_TIMEOUT_S = 600


@dataclass(frozen=True)
class JavaCase:
    """One scenario to run through a Java assignor (``assignor`` is ``range`` or ``cooperative-sticky``)."""

    case_id: str
    assignor: str
    scenario: Scenario


@dataclass(frozen=True)
class JavaOutcome:
    """Java's assignment for a case, or the exception it threw."""

    assignment: Assignment | None
    error: str | None = None


def scenario_json(case: JavaCase) -> dict[str, Any]:
    """The harness's JSON form of a case."""
    cluster = case.scenario.cluster
    return {
        "id": case.case_id,
        "assignor": case.assignor,
        "brokers": [{"id": b, "rack": r} for b, r in cluster.broker_racks.items()],
        "topics": {t: [list(r) for r in ps] for t, ps in cluster.topics.items()},
        "members": [
            {
                "id": m.member_id,
                "topics": list(m.topics),
                "rack": m.rack,
                "owned": [str(tp) for tp in m.owned],
                "generation": m.generation,
                "instance": m.group_instance_id,
            }
            for m in case.scenario.members
        ],
    }


def _classpath(dist: KafkaDistribution) -> list[Path]:
    jars: list[Path] = []
    for prefix in ("kafka-clients-", "jackson-databind-", "jackson-core-", "jackson-annotations-"):
        jar = dist.jar(prefix)
        if jar is None:
            raise PrerequisiteError(
                f"{prefix}*.jar is missing from {dist.libs_dir}; re-resolve the Kafka jars "
                "(delete that cache directory and run `mutepro cluster up` or resolve_kafka())"
            )
        jars.append(jar)
    return jars


def compile_harness(
    dist: KafkaDistribution | None = None, source_file: Path = SOURCE
) -> tuple[Path, KafkaDistribution]:
    """Compile a harness (``AssignorHarness.java`` by default) if needed; returns (classes dir, distribution).

    The compile classpath is every jar of the distribution, so a harness may use any Kafka module.
    """
    dist = dist or resolve_kafka()
    javac = shutil.which("javac")
    if javac is None:
        raise PrerequisiteError("javac was not found on PATH; install a JDK 17+ (not only a JRE) to run the harness")
    jars = _classpath(dist)
    source = source_file.read_bytes()
    digest = hashlib.sha256(source + "|".join(j.name for j in jars).encode() + str(dist.libs_dir).encode())
    out = cache_root() / f"{source_file.stem.lower()}-harness" / digest.hexdigest()[:16]
    if (out / f"{source_file.stem}.class").exists():
        return out, dist
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    cp = ":".join([*(str(j) for j in jars), str(dist.libs_dir / "*")])
    proc = subprocess.run(
        [javac, "-nowarn", "-cp", cp, "-d", str(tmp), str(source_file)],
        capture_output=True,
        text=True,
        timeout=_COMPILE_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        raise PrerequisiteError(f"javac failed to compile {source_file.name}:\n{proc.stderr[-2000:]}")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out, dist


def run_harness(source_file: Path, cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Run a compiled harness once over ``cases`` (JSON-ready dicts) in one JVM; its result rows."""
    classes, dist = compile_harness(source_file=source_file)
    cp = ":".join([str(classes), *(str(j) for j in _classpath(dist)), str(dist.libs_dir / "*")])
    payload = json.dumps(list(cases)).encode("utf-8")
    with tempfile.TemporaryDirectory(prefix="mutepro-harness-") as tmp:
        result_file = Path(tmp) / "results.jsonl"
        proc = subprocess.run(
            [require_java(), "-XX:TieredStopAtLevel=1", "-cp", cp, source_file.stem, str(result_file)],
            input=payload,
            capture_output=True,
            timeout=_RUN_TIMEOUT_S,
            check=False,
        )
        if proc.returncode != 0:
            stderr = proc.stderr.decode("utf-8", "replace")[-2000:]
            raise PrerequisiteError(f"{source_file.stem} exited with {proc.returncode}:\n{stderr}")
        lines = result_file.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def run_java(cases: Sequence[JavaCase]) -> dict[str, JavaOutcome]:
    """Run every case in one JVM; outcomes by case id."""
    outcomes: dict[str, JavaOutcome] = {}
    for row in run_harness(SOURCE, [scenario_json(c) for c in cases]):
        if "error" in row:
            outcomes[row["id"]] = JavaOutcome(None, row["error"])
        else:
            assignment = {m: [TopicPartition.parse(t) for t in ps] for m, ps in row["assignment"].items()}
            outcomes[row["id"]] = JavaOutcome(assignment)
    return outcomes
