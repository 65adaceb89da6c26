"""``mutepro demo``: the end-to-end job on the embedded cluster (see :mod:`mutepro.demo.run`), and the
producer-only comparison (``--plain``, :mod:`mutepro.demo.plain`)."""

from __future__ import annotations

from mutepro.demo.command import demo

__all__ = ["demo"]
