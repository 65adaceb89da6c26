"""Fixtures of the mutepro.aio tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit._producer_fakes import Harness


@pytest.fixture
def harness() -> Iterator[Harness]:
    h = Harness(keyed_policy="reroute")
    yield h
    if not h.producer._closed:
        h.close()
