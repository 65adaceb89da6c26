"""Whether MuteProducer's C fast path (``mutepro.producer._fastpath``) is available and wanted.

The extension is built at install time when a C compiler is there (it is optional in ``pyproject.toml``).
``MUTEPRO_PURE_PYTHON=1`` in the environment ignores it; ``MuteProducer(..., accelerate=False)`` does the same
for one producer. Both paths keep the same counters and give the same results: the tests run both.
"""

from __future__ import annotations

import os
from types import ModuleType

fastpath: ModuleType | None
try:
    if os.environ.get("MUTEPRO_PURE_PYTHON", "").strip().lower() not in ("", "0", "false", "no"):
        raise ImportError("MUTEPRO_PURE_PYTHON is set")
    from mutepro.producer import _fastpath as fastpath
except ImportError:  # no compiler at install time, or switched off
    fastpath = None


def available() -> bool:
    """True when the C fast path can be used."""
    return fastpath is not None
