"""mutepro._lazy: a package's public names imported on first use (PEP 562)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from mutepro._lazy import lazy_exports


class TestLazyExports:
    def test_a_name_is_imported_on_first_use_and_kept(self) -> None:
        namespace: dict[str, Any] = {"__all__": ["dumps"]}
        getattr_, _ = lazy_exports("pkg", {"dumps": "json"}, namespace)
        import json

        assert getattr_("dumps") is json.dumps
        assert namespace["dumps"] is json.dumps  # later lookups find it without __getattr__

    def test_an_unknown_name_raises_attribute_error_naming_the_package(self) -> None:
        getattr_, _ = lazy_exports("pkg", {}, {})
        with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'nope'"):
            getattr_("nope")

    def test_subpackages_only_when_asked(self) -> None:
        with_sub, _ = lazy_exports("mutepro", {}, {}, subpackages=True)
        assert with_sub("errors") is sys.modules["mutepro.errors"]
        without, _ = lazy_exports("mutepro", {}, {})
        with pytest.raises(AttributeError):
            without("errors")

    def test_dir_lists_loaded_and_public_names(self) -> None:
        namespace: dict[str, Any] = {"__all__": ["later"], "loaded": 1}
        _, dir_ = lazy_exports("pkg", {"later": "json"}, namespace)
        assert dir_() == ["__all__", "later", "loaded"]
