"""Spark's Python workers import the same mutepro as the driver (mutepro.spark.workerenv), checked on a stand-in
session builder: this mutepro's directory first on PYTHONPATH, once, and PYTHONSAFEPATH for the workers only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import mutepro
from mutepro.spark.workerenv import mutepro_root, workers_import_this_mutepro
from tests.unit.spark._builder import FakeBuilder


class TestWorkerEnv:
    def test_the_root_is_where_this_mutepro_is_imported_from(self) -> None:
        assert Path(mutepro_root()) / "mutepro" == Path(mutepro.__file__).resolve().parent

    def test_this_mutepro_goes_first_on_pythonpath_once(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Already on it further back: moved first, not repeated; empty entries dropped; PYTHONSAFEPATH only in
        the executors' environment (set here it would reach every later subprocess)."""
        monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
        root = mutepro_root()
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/other", root, ""]))
        builder = FakeBuilder()
        assert workers_import_this_mutepro(builder) is builder
        assert os.environ["PYTHONPATH"] == os.pathsep.join([root, "/other"])
        assert builder.conf == {"spark.executorEnv.PYTHONSAFEPATH": "1"}
        assert "PYTHONSAFEPATH" not in os.environ

    def test_without_a_pythonpath(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("PYTHONPATH", raising=False)
        workers_import_this_mutepro(FakeBuilder())
        assert os.environ["PYTHONPATH"] == mutepro_root()
