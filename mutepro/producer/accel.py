"""MuteProducer's C extension (``mutepro.producer._fastpath``): the one implementation of the per-message rules
(see docs/architecture.md "The per-message path"). It is required: the wheel ships it built, and a source install
compiles it (a C compiler is needed then). Without it ``import mutepro`` fails with
:class:`~mutepro.errors.ExtensionMissing`."""

from __future__ import annotations

from mutepro.errors import ExtensionMissing

try:
    from mutepro.producer import _fastpath as fastpath
except ImportError as err:  # a source install without a C compiler, or a copied tree without the .so
    raise ExtensionMissing(
        "mutepro needs its C extension mutepro.producer._fastpath, which is not built here "
        f"({err}): install mutepro from its wheel (pip install --force-reinstall mutepro), or install a C "
        "compiler (gcc) and the Python headers and reinstall from source"
    ) from err

__all__ = ["fastpath"]
