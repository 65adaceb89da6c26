"""The unit tests mirror the packages: module ``mutepro/<pkg>/<mod>.py`` has its tests in
``tests/unit/<pkg>/test_<mod>.py`` (``_mod.py`` -> ``test_mod.py``). Each module without one is named here with
where it is tested instead; the test fails for a new module without a test file, and for an exception whose test
file now exists (the exception is no longer needed)."""

from __future__ import annotations

from pathlib import Path

import mutepro

ROOT = Path(mutepro.__file__).parent
TESTS = Path(__file__).resolve().parent

_DEMO = "runs the demo on the real cluster: tests/integration/test_demo.py (its parts: tests/unit/demo/)"
_SPARK = "runs in Spark: tests/integration/test_spark_sink.py and test_spark_standalone.py"
_HARNESS = "test harness used by the suites themselves (tests/unit/_producer_fakes.py, conftest.py, conformance)"

#: module (relative to mutepro/) -> where it is tested instead of tests/unit/<pkg>/test_<mod>.py
ELSEWHERE: dict[str, str] = {
    "demo/run.py": "runs both Spark jobs against the cluster: " + _DEMO,
    "demo/setup.py": "starts or attaches the demo's cluster and creates its topics: " + _DEMO,
    "demo/sparkjob.py": "a Spark structured-streaming job: " + _DEMO,
    "spark/datasource.py": "pyspark's DataSource API (imports pyspark.sql.datasource): " + _SPARK,
    "spark/foreach.py": "a foreachBatch sink run through mapInArrow on executors: " + _SPARK,
    "testing/dropin.py": _HARNESS,
    "testing/fakes.py": _HARNESS,
    "testing/fixtures.py": _HARNESS,
    "testing/plain_sink.py": _HARNESS,
    "testing/redis_server.py": "starts redis-server: tests/unit/mute/test_store.py and the Redis integration tests",
}


def _test_file(module: Path) -> Path:
    rel = module.relative_to(ROOT)
    return TESTS / rel.parent / f"test_{rel.stem.lstrip('_')}.py"


def _modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if p.name != "__init__.py" and "__pycache__" not in p.parts)


class TestMirror:
    def test_every_module_has_its_test_file_or_says_where_it_is_tested(self) -> None:
        missing = [m.relative_to(ROOT).as_posix() for m in _modules() if not _test_file(m).exists()]
        assert [m for m in missing if m not in ELSEWHERE] == []

    def test_every_exception_is_still_needed(self) -> None:
        modules = {m.relative_to(ROOT).as_posix(): m for m in _modules()}
        assert [name for name in ELSEWHERE if name not in modules or _test_file(modules[name]).exists()] == []
