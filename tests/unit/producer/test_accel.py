"""The C extension is required (mutepro.producer.accel): it is the module MuteProducer runs on, and without it the
import fails with an ExtensionMissing that says how to get it."""

from __future__ import annotations

import builtins
import importlib
import sys
from typing import Any

import pytest

from mutepro.errors import ExtensionMissing, MuteproError
from mutepro.producer import accel


def test_the_fast_path_is_the_built_extension() -> None:
    assert accel.fastpath.__name__ == "mutepro.producer._fastpath"
    assert hasattr(accel.fastpath, "FastPath")


def test_without_the_extension_the_import_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_extension(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if name == "mutepro.producer" and fromlist and "_fastpath" in fromlist:
            raise ImportError("No module named 'mutepro.producer._fastpath'")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", no_extension)
    monkeypatch.delitem(sys.modules, "mutepro.producer.accel")
    with pytest.raises(ExtensionMissing, match="install mutepro from its wheel") as raised:
        importlib.import_module("mutepro.producer.accel")
    assert isinstance(raised.value, MuteproError)
    monkeypatch.undo()
    importlib.import_module("mutepro.producer.accel")  # restored for the tests that follow
