"""Spark's Python workers import the same mutepro as the driver (mutepro.spark.workerenv): this mutepro's directory
first on PYTHONPATH (once), and the working directory kept off the workers' sys.path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import mutepro
from mutepro.spark.workerenv import mutepro_root, workers_import_this_mutepro


class Builder:
    def __init__(self) -> None:
        self.conf: dict[str, str] = {}

    def config(self, key: str, value: str) -> Any:
        self.conf[key] = value
        return self


def test_the_root_is_where_this_mutepro_is_imported_from() -> None:
    assert Path(mutepro_root()) / "mutepro" == Path(mutepro.__file__).resolve().parent


def test_this_mutepro_goes_first_once_and_workers_get_a_safe_path(monkeypatch: pytest.MonkeyPatch) -> None:
    root = mutepro_root()
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/elsewhere", root]))
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    builder = Builder()
    assert workers_import_this_mutepro(builder) is builder
    workers_import_this_mutepro(builder)
    assert os.environ["PYTHONPATH"].split(os.pathsep) == [root, "/elsewhere"]
    assert builder.conf == {"spark.executorEnv.PYTHONSAFEPATH": "1"}
    assert "PYTHONSAFEPATH" not in os.environ  # only the workers', not every later subprocess of this one
