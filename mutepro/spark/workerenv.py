"""Spark's Python workers import the same mutepro as the process that starts Spark.

Local mode starts its Python workers as ``python -m pyspark.daemon`` in the driver's working directory, and
``-m`` puts that directory first on ``sys.path``. Run from a source checkout whose C extension is not built there
(a clean clone beside an installed wheel, as in CI), the workers then imported the checkout's ``mutepro`` and not
the installed one: ``MuteProducer`` cannot be imported without its extension (``ExtensionMissing``), and every
task failed. ``PYTHONSAFEPATH=1`` (Python 3.11+) keeps the working directory off ``sys.path``; the directory this
process imports mutepro from goes first on ``PYTHONPATH`` (an editable checkout included).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def mutepro_root() -> str:
    """The directory the running ``mutepro`` package is imported from: on executors' PYTHONPATH, they import the
    same mutepro (a checkout, or the environment's site-packages when installed there)."""
    import mutepro

    return str(Path(mutepro.__file__).resolve().parent.parent)


def workers_import_this_mutepro(builder: Any) -> Any:
    """``builder`` (a ``SparkSession.Builder``) configured so that the Python workers import this process's
    mutepro (see the module docstring): its directory first on ``PYTHONPATH`` (in this process's environment,
    which the Spark JVM it starts next inherits) and ``PYTHONSAFEPATH=1`` for the workers only
    (``spark.executorEnv``; not in this process's environment, where it would reach every later subprocess)."""
    root = mutepro_root()
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
    os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])
    return builder.config("spark.executorEnv.PYTHONSAFEPATH", "1")
