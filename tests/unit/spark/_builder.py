"""A stand-in for ``SparkSession.Builder``: records what ``config()`` was given."""

from __future__ import annotations


class FakeBuilder:
    def __init__(self) -> None:
        self.conf: dict[str, str] = {}

    def config(self, key: str, value: str) -> FakeBuilder:
        self.conf[key] = value
        return self
