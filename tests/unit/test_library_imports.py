"""The library and its commands do not depend on test tooling: pytest is imported only by mutepro.testing's plugins."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import mutepro

_ROOT = Path(mutepro.__file__).parent
#: the pytest plugins; everything else in the package must work where pytest is not installed
_PLUGINS = {"mutepro.testing.dropin", "mutepro.testing.fixtures"}


def _library_modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages([str(_ROOT)], prefix="mutepro.")]
    # spark's modules import pyspark, which is an optional extra; the rest must import anywhere
    return sorted(n for n in names if n not in _PLUGINS and not n.startswith("mutepro.spark"))


def _imported_names(path: Path) -> set[str]:
    """Every module named by an import statement anywhere in the file (function bodies too: imports there run
    when the command runs, not when the module is loaded)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


class TestNoPytestInLibrary:
    def test_importing_the_commands_leaves_pytest_unloaded(self) -> None:
        """A fresh interpreter importing the CLI, the demo and every library module does not load pytest."""
        modules = ["mutepro.cli", "mutepro.demo", *_library_modules()]
        code = "import importlib, sys\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
        code += "print('pytest' in sys.modules)"
        out = subprocess.run(
            [sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=120, check=True
        )
        assert out.stdout.strip() == "False"

    def test_no_library_source_imports_test_tooling(self) -> None:
        """No module outside the pytest plugins imports pytest or a plugin, even lazily inside a function."""
        offenders = {}
        for path in sorted(_ROOT.rglob("*.py")):
            module = "mutepro." + ".".join(path.relative_to(_ROOT).with_suffix("").parts)
            if module in _PLUGINS:
                continue
            bad = {n for n in _imported_names(path) if n.split(".")[0] in {"pytest", "_pytest"} or n in _PLUGINS}
            if bad:
                offenders[module] = sorted(bad)
        assert offenders == {}


def _imported_modules(path: Path, module: str) -> set[str]:
    """Every module the file imports, anywhere in it (function bodies too), relative imports resolved against
    ``module`` (``from . import x`` and ``from .racks import y`` count)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            parent = ".".join([*base, *([node.module] if node.module else [])])
            names.add(parent)
            names.update(f"{parent}.{alias.name}" for alias in node.names)
    return names


class TestLayering:
    def test_cluster_does_not_import_racks(self) -> None:
        """The dependency is one-way: mutepro.racks may use mutepro.cluster (the Kafka distribution, the admin
        helpers), mutepro.cluster never imports mutepro.racks, even lazily inside a function."""
        offenders = {}
        for path in sorted((_ROOT / "cluster").rglob("*.py")):
            module = "mutepro." + ".".join(path.relative_to(_ROOT).with_suffix("").parts)
            if module.endswith(".__init__"):
                module = module.removesuffix(".__init__")
            bad = {
                n for n in _imported_modules(path, module)
                if n == "mutepro.racks" or n.startswith("mutepro.racks.")
            }
            if bad:
                offenders[module] = sorted(bad)
        assert offenders == {}


#: what the producer stack and the Spark sink load; none of it is needed to import mutepro or check a policy file
_HEAVY = ("pyspark", "pybreaker", "redis", "confluent_kafka")
_CONFIG = str(Path(__file__).resolve().parents[2] / "config" / "minimal.yaml")


def _loaded_after(code: str) -> list[str]:
    """The modules of :data:`_HEAVY` (and mutepro's heavy packages) a fresh interpreter has loaded after ``code``."""
    probe = (
        "import sys\n" + code + "\n"
        f"heavy = {(*_HEAVY, 'mutepro.producer', 'mutepro.cluster', 'mutepro.racks', 'mutepro.spark')!r}\n"
        "print('loaded:' + ','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("loaded:"), out.stdout
    return [m for m in last.removeprefix("loaded:").split(",") if m]


class TestLightImports:
    def test_importing_mutepro_loads_no_heavy_dependency(self) -> None:
        """``import mutepro`` loads no pyspark, redis, pybreaker or confluent_kafka: the public names are lazy."""
        assert _loaded_after("import mutepro") == []

    def test_config_check_loads_only_the_policy_code(self) -> None:
        """``mutepro config check FILE`` imports the policy code, not the producer, the cluster tools or pyspark."""
        code = (
            f"sys.argv = ['mutepro', 'config', 'check', {_CONFIG!r}]\n"
            "from mutepro.cli import main\n"
            "try:\n    main()\nexcept SystemExit as exit:\n    assert not exit.code, exit.code\n"
        )
        assert _loaded_after(code) == []

    def test_importing_the_spark_package_loads_no_pyspark(self) -> None:
        """``mutepro.spark`` (and ``mutepro spark``'s commands) load pyspark only when the data source is used."""
        assert "pyspark" not in _loaded_after("import mutepro.spark, mutepro.spark.cli")

    def test_every_public_name_still_resolves(self) -> None:
        """The lazy names are the same objects as before: ``from mutepro import X`` works for all of ``__all__``."""
        for name in mutepro.__all__:
            assert getattr(mutepro, name) is not None, name
        assert mutepro.MuteProducer.__module__ == "mutepro.producer.producer"

    def test_every_spark_name_still_resolves(self) -> None:
        pytest.importorskip("pyspark")
        import mutepro.spark

        for name in mutepro.spark.__all__:
            assert getattr(mutepro.spark, name) is not None, name
