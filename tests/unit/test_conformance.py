"""The conformance harness (benchmarks/conformance.py) and its swap plugin (mutepro.testing.dropin), without
confluent-kafka-python's checkout: junit parsing, test ids, differences, and the swap in a real pytest run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import mutepro

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from conformance import (
    Run,
    base_for,
    differences,
    in_file,
    node_id,
    parse_junit,
    print_per_file,
    with_aio_files,
    write_aio_variant,
)

REPO = Path(__file__).resolve().parents[2]
# where this session imports mutepro from (the installed wheel in CI, this checkout when PYTHONPATH names it):
# the subprocesses below import the same one
MUTEPRO_HOME = str(Path(mutepro.__file__).resolve().parents[1])

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
  <testcase classname="tests.test_Producer" name="test_basic_api" time="0.1"/>
  <testcase classname="tests.test_Producer" name="test_purge" time="0.1"><failure message="x">x</failure></testcase>
  <testcase classname="tests.test_misc" name="test_unordered_dict[MuteProducer]" time="0.1"/>
  <testcase classname="tests.test_AIOProducer.TestAIOProducer" name="test_x[a b]" time="0.1">
    <skipped message="s">s</skipped></testcase>
</testsuite></testsuites>
"""


class TestReport:
    def test_parse_junit_outcomes_and_original_ids(self, tmp_path: Path) -> None:
        """Outcomes per test id; a parameter naming the class under test is compared as `Producer`."""
        path = tmp_path / "r.xml"
        path.write_text(JUNIT)
        outcomes, originals = parse_junit(path)
        assert outcomes == {
            "tests.test_Producer::test_basic_api": "passed",
            "tests.test_Producer::test_purge": "failed",
            "tests.test_misc::test_unordered_dict[Producer]": "passed",
            "tests.test_AIOProducer.TestAIOProducer::test_x[a b]": "skipped",
        }
        assert originals["tests.test_misc::test_unordered_dict[Producer]"] == (
            "tests.test_misc::test_unordered_dict[MuteProducer]"
        )

    def test_node_id_maps_back_to_pytest_ids(self) -> None:
        """Junit ids become pytest node ids (file, class, parameters) for the re-runs."""
        files = ["tests/test_Producer.py", "tests/test_AIOProducer.py"]
        assert node_id("tests.test_Producer::test_purge", files) == "tests/test_Producer.py::test_purge"
        assert node_id("tests.test_AIOProducer.TestAIOProducer::test_x[a b]", files) == (
            "tests/test_AIOProducer.py::TestAIOProducer::test_x[a b]"
        )

    def test_differences_list_every_changed_or_missing_outcome(self) -> None:
        """A test whose outcome differs, or that ran in one run only, is a difference; equal ones are not."""
        real = Run("real", {"a": "passed", "b": "failed", "c": "passed"}, 1.0, 0, {})
        other = Run("c", {"a": "passed", "b": "passed", "d": "skipped"}, 1.0, 0, {})
        assert differences(real, other) == [
            ("b", "failed", "passed"), ("c", "passed", "missing"), ("d", "missing", "skipped")
        ]


    def test_counts_per_file_put_the_runs_side_by_side(self, capsys: pytest.CaptureFixture[str]) -> None:
        """Each file's counts per run; a test id is filed under the file its module (or class in it) names."""
        files = ["tests/test_Producer.py", "tests/test_misc.py"]
        assert in_file("tests.test_Producer::test_a", "tests/test_Producer.py")
        assert in_file("tests.test_Producer.TestX::test_b", "tests/test_Producer.py")
        assert not in_file("tests.test_ProducerX::test_c", "tests/test_Producer.py")
        real = Run("real", {"tests.test_Producer::a": "passed", "tests.test_misc::b": "failed"}, 1.0, 0, {})
        mute = Run("c", {"tests.test_Producer::a": "passed", "tests.test_misc::b": "passed"}, 1.0, 0, {})
        print_per_file([real, mute], files)
        lines = capsys.readouterr().out.splitlines()
        assert "  tests/test_Producer.py: real 1/0/0/0  c 1/0/0/0" in lines
        assert "  tests/test_misc.py: real 0/1/0/0  c 1/0/0/0" in lines

    def test_a_serializing_parameter_id_is_compared_with_the_real_name(self, tmp_path: Path) -> None:
        path = tmp_path / "r.xml"
        path.write_text(JUNIT.replace("test_basic_api", "test_s[MuteSerializingProducer]"))
        outcomes, _ = parse_junit(path)
        assert "tests.test_Producer::test_s[SerializingProducer]" in outcomes


class TestAioRun:
    def test_the_copies_import_mutepro_aio_and_patch_its_factory(self, tmp_path: Path) -> None:
        """Each confluent-kafka class import and the inner-producer patch target point at mutepro.aio; `as` names
        and the `_common` patch (the inherited methods' module) stay."""
        checkout = tmp_path / "ckp"
        (checkout / "tests").mkdir(parents=True)
        (checkout / "tests" / "test_AIOProducer.py").write_text(textwrap.dedent("""\
            from confluent_kafka.aio.producer._AIOProducer import AIOProducer
            from confluent_kafka.aio.producer._producer_batch_processor import ProducerBatchManager as P
            from confluent_kafka.aio.producer._kafka_batch_executor import ProducerBatchExecutor as E
            patch('confluent_kafka.aio.producer._AIOProducer.confluent_kafka.Producer')
            patch('confluent_kafka.aio.producer._AIOProducer._common')
        """))
        (checkout / "tests" / "test_other.py").write_text("import confluent_kafka\n")
        variant = write_aio_variant(checkout, ["tests/test_AIOProducer.py"], tmp_path / "v")
        assert (variant / "tests" / "test_AIOProducer.py").read_text().splitlines() == [
            "from mutepro.aio import AIOProducer",
            "from mutepro.aio.batching import LoopSafeBatchManager as P",
            "from mutepro.aio.producer import ProducerBatchExecutor as E",
            "patch('mutepro.aio.producer.MuteProducer')",
            "patch('confluent_kafka.aio.producer._AIOProducer._common')",
        ]
        with pytest.raises(SystemExit, match=r"test_other\.py"):
            write_aio_variant(checkout, ["tests/test_other.py"], tmp_path / "v")

    def test_the_aio_files_join_the_real_run_before_the_file_that_ends_it(self, tmp_path: Path) -> None:
        (tmp_path / "tests").mkdir()
        for name in ("test_AIOProducer.py", "test_buffer_timeout_manager.py"):
            (tmp_path / "tests" / name).write_text("")
        files = ["tests/test_Producer.py", "tests/test_AIOProducer.py", "tests/test_kafka_error.py"]
        assert with_aio_files(files, tmp_path) == [
            "tests/test_Producer.py", "tests/test_AIOProducer.py", "tests/test_buffer_timeout_manager.py",
            "tests/test_kafka_error.py",
        ]

    def test_the_aio_run_is_compared_with_the_real_run_of_its_files_only(self) -> None:
        real = Run("real", {
            "tests.test_AIOProducer.T::a": "passed", "tests.test_Producer::b": "passed",
            "tests.test_AIOProducerX::c": "passed",
        }, 1.0, 0, {})
        aio = Run("aio", {"tests.test_AIOProducer.T::a": "failed"}, 1.0, 0, {})
        assert differences(base_for(aio, real), aio) == [("tests.test_AIOProducer.T::a", "passed", "failed")]
        assert base_for(Run("c", {}, 1.0, 0, {}), real) is real


class TestDropinPlugin:
    @pytest.mark.parametrize("wanted", ["real", "mute"])
    def test_swaps_producer_before_test_modules_import_it(self, tmp_path: Path, wanted: str) -> None:
        """-p mutepro.testing.dropin makes `from confluent_kafka import Producer` MuteProducer and SerializingProducer
        MuteSerializingProducer (neither when real)."""
        expected = "cimpl.Producer" if wanted == "real" else "MuteProducer"
        serializing = "SerializingProducer" if wanted == "real" else "MuteSerializingProducer"
        (tmp_path / "test_swap.py").write_text(
            textwrap.dedent(
                f"""
                import signal
                from confluent_kafka import Producer, SerializingProducer

                def test_class():
                    assert Producer.__name__ == {expected.split(".")[-1]!r}
                    assert SerializingProducer.__name__ == {serializing!r}

                def test_stray_sigint_fails_only_this_test():
                    # Python's own handling, also when this process inherited SIGINT ignored (a background job)
                    signal.signal(signal.SIGINT, signal.default_int_handler)
                    signal.raise_signal(signal.SIGINT)
                """
            )
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("MUTEPRO_")}
        env["PYTHONPATH"] = MUTEPRO_HOME
        if wanted == "real":
            env["MUTEPRO_DROPIN_PATH"] = "real"
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "mutepro.testing.dropin",
             "test_swap.py"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
        )
        assert "1 failed, 1 passed" in out.stdout, out.stdout + out.stderr
        assert "test_stray_sigint_fails_only_this_test" in out.stdout
