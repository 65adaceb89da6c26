"""Run confluent-kafka-python's own producer unit tests against MuteProducer: is it a drop-in?
(``SerializingProducer``'s against MuteSerializingProducer, in the same runs.)

    python benchmarks/conformance.py /path/to/confluent-kafka-python
    python benchmarks/conformance.py CHECKOUT --paths real,c --files tests/test_Producer.py -k produce_batch

The same test files run in fresh pytest processes started in the checkout: with the real
``confluent_kafka.Producer`` (``real``) and with MuteProducer (``c``, its one path, the C extension's). The swap
is the pytest plugin ``mutepro.testing.dropin``,
loaded before any test module is imported; it swaps ``confluent_kafka.SerializingProducer`` for
MuteSerializingProducer as well. The tests need no broker (they point ``bootstrap.servers`` nowhere); the ones
that do want one fail alike in every run and cancel out. Prints each run's counts, in all and per file, and every
test whose outcome differs from the real run; exits 1 when a test the real client passes does not pass with
MuteProducer, is not flaky (``--reruns``) and is not in ``KNOWN`` below.

A fourth run, ``aio``, runs confluent-kafka's asyncio producer tests (``AIO_FILES``) against mutepro.aio's
classes instead of confluent-kafka's: a copy of those files with their imports pointed at ``mutepro.aio`` (see
``AIO_REWRITES``), run with the swap in place, compared test by test with the real run of the same files.

The checkout is not part of this repository (the tests are Confluent's): clone it at the tag of the installed
client (``python -c 'import confluent_kafka; print(confluent_kafka.version())'``). Its tests import
``confluent_kafka.avro`` and the schema-registry helpers, so the interpreter running them needs the client's test
extras: ``pip install 'avro>=1.11.1,<2' 'fastavro>=1.5.4,<2' 'cachetools>=5.5' 'httpx>=0.26' 'authlib>=1.0'
pytest-asyncio`` (``--python`` picks another interpreter, e.g. a venv with ``--system-site-packages``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: The producer unit tests: everything in them runs (consumer tests in a mixed file pass or fail alike in every
#: run and so never show up as a difference).
DEFAULT_FILES = (
    "tests/test_Producer.py",
    "tests/test_misc.py",
    "tests/test_log.py",
    "tests/test_threads.py",
    "tests/test_Wakeable.py",
    "tests/test_AIOProducer.py",
    "tests/test_producer_batch_processor.py",
    "tests/test_kafka_batch_executor.py",
    # every member of the (swapped) confluent_kafka.Producer has a docstring with a ":" field, private ones too
    "tests/test_docs.py",
    # last: its test_kafkaError_unknown_error ends the pytest session early (real client included, v2.15.0
    # tests on client 2.16.1), so nothing after it would run
    "tests/test_kafka_error.py",
)

#: Differences that are expected, with the reason (test node id -> why). Kept short on purpose.
KNOWN: dict[str, str] = {}

RUNS = {
    "real": {"MUTEPRO_DROPIN_PATH": "real"},
    "c": {"MUTEPRO_DROPIN_PATH": "c"},
    # mutepro.aio's classes (see aio_run), over MuteProducer
    "aio": {"MUTEPRO_DROPIN_PATH": ""},
}

#: confluent-kafka's asyncio producer tests, run once more against mutepro.aio's classes (the ``aio`` run).
AIO_FILES = (
    "tests/test_AIOProducer.py",
    "tests/test_kafka_batch_executor.py",
    "tests/test_producer_batch_processor.py",
    "tests/test_buffer_timeout_manager.py",
)

#: How a copy of an AIO_FILES test is pointed at mutepro.aio: ``re.sub`` (pattern, replacement) pairs.
#: The batch executor and the buffer-timeout manager are confluent-kafka's own classes, reused unchanged by
#: mutepro.aio.AIOProducer (imported from there, to test what it uses). The one patch target rewritten is how the
#: inner producer is built: confluent-kafka's class calls ``confluent_kafka.Producer``, mutepro's calls its
#: documented factory default, the name ``mutepro.aio.producer.MuteProducer``. ``_AIOProducer._common`` stays:
#: the methods mutepro's class inherits look it up there.
AIO_REWRITES = (
    (r"from confluent_kafka\.aio\.producer\._AIOProducer import AIOProducer\b", "from mutepro.aio import AIOProducer"),
    (
        r"from confluent_kafka\.aio\.producer\._producer_batch_processor import ProducerBatchManager(?: as (\w+))?",
        lambda m: f"from mutepro.aio.batching import LoopSafeBatchManager as {m[1] or 'ProducerBatchManager'}",
    ),
    (
        r"from confluent_kafka\.aio\.producer\._kafka_batch_executor import ProducerBatchExecutor\b",
        "from mutepro.aio.producer import ProducerBatchExecutor",
    ),
    (
        r"from confluent_kafka\.aio\.producer\._buffer_timeout_manager import BufferTimeoutManager\b",
        "from mutepro.aio.producer import BufferTimeoutManager",
    ),
    (
        r"(['\"])confluent_kafka\.aio\.producer\._AIOProducer\.confluent_kafka\.Producer\1",
        r"\1mutepro.aio.producer.MuteProducer\1",
    ),
)


@dataclass
class Run:
    """One pytest run's outcome per test node id, and how long it took."""

    name: str
    outcomes: dict[str, str]
    seconds: float
    returncode: int
    #: test id as compared -> pytest's own id in this run (where a parameter id names the class under test)
    originals: dict[str, str]
    #: where it ran (the checkout, or the aio run's rewritten copy)
    cwd: Path | None = None

    def counts(self) -> Counter[str]:
        return Counter(self.outcomes.values())


def run_pytest(
    name: str, checkout: Path, files: list[str], python: str, extra: list[str], out: Path, env_of: str | None = None
) -> Run:
    """Run the files in a fresh process (the swap happens at import time), return each test's outcome."""
    junit = out / f"conformance-{name}.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUTEPRO_")}
    env.update(RUNS[env_of or name])
    # this repository's mutepro first, whatever is installed; the checkout's root for its `tests` package
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(checkout), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", "-o", "junit_family=xunit2"]
    cmd += ["-p", "mutepro.testing.dropin", *extra, *files]
    print(f"== {name}: {' '.join(cmd[1:])}", flush=True)
    started = time.monotonic()
    with open(out / f"conformance-{name}.log", "w") as log:
        proc = subprocess.run(cmd, cwd=checkout, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
    seconds = time.monotonic() - started
    if not junit.exists():
        raise SystemExit(f"{name}: pytest wrote no report (exit {proc.returncode}); see {out}/conformance-{name}.log")
    outcomes, originals = parse_junit(junit)
    return Run(name, outcomes, seconds, proc.returncode, originals, checkout)


def parse_junit(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Test id (``tests.test_x::test_y``) -> passed / failed / error / skipped, from a pytest junit XML report;
    and test id -> the id pytest gave it (they differ where a parameter is the class under test:
    ``test_unordered_dict[MuteProducer]`` is compared with ``test_unordered_dict[Producer]``)."""
    outcomes: dict[str, str] = {}
    originals: dict[str, str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        original = f"{case.get('classname', '')}::{case.get('name', '')}"  # tests.test_x[.TestClass]::test_y[p]
        node = original.replace("MuteSerializingProducer", "SerializingProducer").replace("MuteProducer", "Producer")
        originals[node] = original
        result = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                result = {"failure": "failed"}.get(child.tag, child.tag)
                if result == "error" and outcomes.get(node) == "passed":
                    result = "passed"  # an error in teardown of a passed test (counted apart by pytest)
        outcomes[node] = result
    return outcomes, originals


def differences(real: Run, other: Run) -> list[tuple[str, str, str]]:
    """(test, real outcome, other outcome) for every test whose outcome differs."""
    names = sorted(set(real.outcomes) | set(other.outcomes))
    return [
        (n, real.outcomes.get(n, "missing"), other.outcomes.get(n, "missing"))
        for n in names
        if real.outcomes.get(n, "missing") != other.outcomes.get(n, "missing")
    ]


def node_id(test: str, files: list[str]) -> str:
    """``tests.test_x.TestY::test_z[p]`` (a junit test id) -> ``tests/test_x.py::TestY::test_z[p]`` (pytest's)."""
    classname, _, name = test.partition("::")
    for f in files:
        module = f.removesuffix(".py").replace("/", ".")
        if classname == module or classname.startswith(module + "."):
            rest = classname[len(module) + 1 :]
            return "::".join([f, *rest.split(".")] if rest else [f]) + f"::{name}"
    return test


def confirm(
    diffs: dict[str, list[tuple[str, str, str]]], runs: dict[str, Run], checkout: Path, files: list[str],
    args: argparse.Namespace, extra: list[str],
) -> dict[str, dict[str, set[str]]]:
    """Re-run only the differing tests (real and the differing path), ``--reruns`` times: run -> test -> every
    outcome seen (the first run's included). A test some real runs pass and others fail is flaky, not a gap."""
    seen: dict[str, dict[str, set[str]]] = {}
    for name, rows in diffs.items():
        for test, was, now in rows:
            seen.setdefault("real", {}).setdefault(test, set()).add(was)
            seen.setdefault(name, {}).setdefault(test, set()).add(now)
    tests = sorted({t for rows in diffs.values() for t, _, _ in rows})
    if not tests or args.reruns <= 0:
        return seen
    for attempt in range(args.reruns):
        for name in ["real", *diffs]:
            originals = runs[name].originals
            mine = [t for t in tests if t in originals and (name == "real" or t in seen.get(name, {}))]
            wanted = [node_id(originals[t], files) for t in mine]
            if not wanted:
                continue
            where = runs[name].cwd or checkout
            run = run_pytest(f"{name}-rerun{attempt + 1}", where, wanted, args.python, extra, args.out, env_of=name)
            for test in mine:
                if test in seen.get(name, {}) and test in run.outcomes:
                    seen[name][test].add(run.outcomes[test])
    return seen


def aio_run(checkout: Path, files: list[str], python: str, extra: list[str], out: Path) -> Run:
    """The ``aio`` run: the AIO_FILES among ``files``, rewritten by :func:`write_aio_variant`, run in the copy."""
    wanted = [f for f in AIO_FILES if f in files]
    return run_pytest("aio", write_aio_variant(checkout, wanted, out / "aio-checkout"), wanted, python, extra, out)


def with_aio_files(files: list[str], checkout: Path) -> list[str]:
    """``files`` plus the AIO_FILES it lacks (the real run must cover every file the aio run does), put before
    ``tests/test_kafka_error.py``, which ends the session (see DEFAULT_FILES)."""
    extra = [f for f in AIO_FILES if f not in files and (checkout / f).exists()]
    last = "tests/test_kafka_error.py"
    at = files.index(last) if last in files else len(files)
    return [*files[:at], *extra, *files[at:]]


def write_aio_variant(checkout: Path, files: list[str], variant: Path) -> Path:
    """Copy ``files`` with AIO_REWRITES applied into ``variant`` (same relative paths, so test ids match the real
    run's), with the checkout's ``pyproject.toml`` for its pytest settings (``asyncio_mode``); returns ``variant``.
    A file none of the rewrites touched would test confluent-kafka's classes again: refused."""
    (variant / "tests").mkdir(parents=True, exist_ok=True)
    (variant / "tests" / "__init__.py").write_text("")
    if (checkout / "pyproject.toml").exists():
        shutil.copy(checkout / "pyproject.toml", variant / "pyproject.toml")
    for f in files:
        text = (checkout / f).read_text()
        for pattern, replacement in AIO_REWRITES:
            text = re.sub(pattern, replacement, text)
        if "mutepro.aio" not in text:
            raise SystemExit(f"aio: {f} imports none of confluent-kafka's asyncio producer classes AIO_REWRITES knows")
        (variant / f).write_text(text)
    return variant


def base_for(run: Run, base: Run) -> Run:
    """What ``run`` is compared with: the real run, only its AIO_FILES tests for the ``aio`` run."""
    if run.name != "aio":
        return base
    kept = {t: o for t, o in base.outcomes.items() if any(in_file(t, f) for f in AIO_FILES)}
    return Run(base.name, kept, base.seconds, base.returncode, base.originals, base.cwd)


def in_file(test: str, file: str) -> bool:
    """Whether the junit test id ``tests.test_x[.TestY]::test_z`` is one of ``file``'s (``tests/test_x.py``)."""
    module, classname = file.removesuffix(".py").replace("/", "."), test.split("::")[0]
    return classname == module or classname.startswith(module + ".")


def print_per_file(runs: list[Run], files: list[str]) -> None:
    """passed/failed/error/skipped of every run, file by file."""
    print("\nper file (passed/failed/error/skipped):")
    for f in files:
        cells = []
        for run in runs:
            c = Counter(o for t, o in run.outcomes.items() if in_file(t, f))
            if sum(c.values()):
                cells.append(f"{run.name} {c['passed']}/{c['failed']}/{c['error']}/{c['skipped']}")
        print(f"  {f}: {'  '.join(cells) or 'no tests'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a confluent-kafka-python checkout (the directory holding tests/)")
    parser.add_argument("--files", nargs="+", default=list(DEFAULT_FILES), help="test files, relative to the checkout")
    parser.add_argument("--paths", default="real,c,aio", help="comma list of runs: real, c, aio")
    parser.add_argument("--python", default=sys.executable, help="interpreter with pytest and the client's test deps")
    parser.add_argument("--reruns", type=int, default=2, help="re-runs of each differing test (flakiness check)")
    parser.add_argument("--timeout", type=int, default=120, help="per-test timeout in s (pytest-timeout)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/mutepro-conformance"), help="logs and reports")
    parser.add_argument(
        "-k", dest="keyword", default="not consumer",
        help="pytest -k expression (default: 'not consumer': the consumer halves of the mixed files are not ours, "
        "and some block in librdkafka beyond any timeout without a broker)",
    )
    args = parser.parse_args(argv)

    checkout = args.checkout.resolve()
    if not (checkout / "tests").is_dir():
        parser.error(f"{checkout}: no tests/ directory; point at a confluent-kafka-python checkout")
    files = [f for f in args.files if (checkout / f).exists()]
    missing = sorted(set(args.files) - set(files))
    if missing:
        print(f"not in this checkout, skipped: {', '.join(missing)}")
    names = [n.strip() for n in args.paths.split(",") if n.strip()]
    unknown = [n for n in names if n not in RUNS]
    if unknown:
        parser.error(f"--paths: unknown run {unknown[0]!r}; choose from {', '.join(RUNS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    extra = [f"--timeout={args.timeout}"] + (["-k", args.keyword] if args.keyword else [])

    if "aio" in names:
        files = with_aio_files(files, checkout)
    runs = [
        aio_run(checkout, files, args.python, extra, args.out) if name == "aio"
        else run_pytest(name, checkout, files, args.python, extra, args.out)
        for name in names
    ]
    print()
    for run in runs:
        c = run.counts()
        print(
            f"{run.name:>5}: {c['passed']:4d} passed {c['failed']:4d} failed {c['error']:3d} errors "
            f"{c['skipped']:3d} skipped  ({len(run.outcomes)} tests, {run.seconds:.0f} s)"
        )
    print_per_file(runs, files)
    base = next((r for r in runs if r.name == "real"), None)
    if base is None:
        return 0
    diffs = {run.name: differences(base_for(run, base), run) for run in runs if run is not base}
    seen = confirm(diffs, {r.name: r for r in runs}, checkout, files, args, extra)
    unexpected = 0
    for name, rows in diffs.items():
        print(f"\n{name} vs real: {len(rows)} differences")
        for test, was, now in rows:
            real_all, other_all = seen["real"][test], seen[name][test]
            # some run of each agreed: timing, not behaviour ("missing" is no outcome: the test is not there)
            flaky = bool((real_all & other_all) - {"missing"})
            why = KNOWN.get(test)
            # a gap is a test the real client passes and MuteProducer does not; the reverse is only reported
            gap = was == "passed" and "passed" not in other_all
            unexpected += gap and why is None and not flaky
            note = f"  [known: {why}]" if why else ""
            if now == "passed" and was != "passed" and not flaky:
                note += f"  [{name} passes where the real client does not]"
            if flaky:
                note += f"  [flaky: real saw {sorted(real_all)}, {name} saw {sorted(other_all)}]"
            print(f"  {test}: real {was}, {name} {now}{note}")
    print(f"\n{unexpected} gaps (real passes, MuteProducer not) neither known nor flaky; logs and reports: {args.out}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
