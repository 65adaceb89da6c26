"""create_topic (demo, examples, benchmarks, test fixtures) refuses nonsense before calling the admin client."""

from __future__ import annotations

import pytest

from mutepro.cluster.topics import create_topic
from mutepro.errors import ConfigError


class _NoAdmin:
    """Fails the test if the helper got as far as the admin client."""

    def create_topics(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("create_topics called for an invalid topic")


class TestCreateTopicShape:
    @pytest.mark.parametrize(
        ("kwargs", "named"),
        [
            ({"partitions": -5}, "partitions"),
            ({"partitions": 0}, "partitions"),
            ({"partitions": 100_000_000}, "partitions"),
            ({"replication_factor": 0}, "replication_factor"),
            ({"replication_factor": -1}, "replication_factor"),
            ({"replica_assignment": [[1, 1, 2]]}, r"replica_assignment\[0\]"),
            ({"replica_assignment": [[1], []]}, r"replica_assignment\[1\]"),
            ({"replica_assignment": []}, "replica_assignment"),
        ],
    )
    def test_refused_before_any_admin_call(self, kwargs: dict[str, object], named: str) -> None:
        """Each bad shape is a ConfigError naming the argument."""
        with pytest.raises(ConfigError, match=named):
            create_topic(_NoAdmin(), "t", **kwargs)  # type: ignore[arg-type]
