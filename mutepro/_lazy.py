"""Lazy public names for a package's ``__init__`` (PEP 562), written once for ``mutepro`` and ``mutepro.spark``.

Why lazy: ``import mutepro`` for ``mutepro config check`` took 1.2 s of CPU when it pulled in the producer, the
mute manager, pybreaker and their imports; importing each name's module on first use keeps it at ~0.16 s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from importlib.util import find_spec
from typing import Any


def lazy_exports(
    package: str, names: Mapping[str, str], namespace: dict[str, Any], *, subpackages: bool = False,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name in ``names`` (name -> its module) is imported on
    first use and kept in ``namespace`` (the package's globals), so later lookups skip ``__getattr__``. With
    ``subpackages``, any other public name that is a subpackage or module of the package is imported too (as
    attribute access found them before the names were lazy)."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            if subpackages and not name.startswith("_") and find_spec(f"{package}.{name}") is not None:
                return import_module(f"{package}.{name}")
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return __getattr__, __dir__
