"""Every shipped policy validates: config/*.yaml and each *.yaml under examples/; the reference covers every key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from mutepro.policy import PolicyDocument, TopicPolicy, load_policy

ROOT = Path(__file__).resolve().parents[3]
CONFIG_FILES = sorted((ROOT / "config").glob("*.yaml")) + sorted((ROOT / "config").glob("*.yml"))
EXAMPLE_FILES = sorted((ROOT / "examples").rglob("*.yaml")) + sorted((ROOT / "examples").rglob("*.yml"))


def _leaf_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            paths.extend(_leaf_paths(annotation, (*prefix, name)))
        else:
            paths.append((*prefix, name))
    return paths


def _has(data: Any, path: tuple[str, ...]) -> bool:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


class TestShippedPolicies:
    def test_the_required_files_exist(self) -> None:
        """config/ holds the minimal, reference and Spark job policies."""
        assert {p.name for p in CONFIG_FILES} >= {"minimal.yaml", "reference.yaml", "spark-job.yaml"}

    @pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.name)
    def test_config_file_validates(self, path: Path) -> None:
        """Each config/ file loads with an empty environment (every ${...} has a default)."""
        assert load_policy(path, env={}).version == 1

    @pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
    def test_example_policy_validates(self, path: Path) -> None:
        """Each examples/ policy loads with an empty environment."""
        assert load_policy(path, env={}).version == 1

    def test_reference_names_every_key(self) -> None:
        """reference.yaml writes out every key of the schema (so it documents all of them)."""
        data = yaml.safe_load((ROOT / "config" / "reference.yaml").read_text(encoding="utf-8"))
        missing = [".".join(p) for p in _leaf_paths(PolicyDocument) if not _has(data, p)]
        assert missing == []

    def test_reference_defaults_are_the_schema_defaults(self) -> None:
        """The defaults: block of reference.yaml shows the real defaults."""
        policy = load_policy(ROOT / "config" / "reference.yaml", env={})
        assert policy.defaults == TopicPolicy()

    def test_spark_job_policy(self) -> None:
        """The Spark job holds orders' keyed messages and shares state through Redis from the environment."""
        env = {"MUTEPRO_REDIS_URL": "redis://:pw@redis:6379/2", "KAFKA_BOOTSTRAP": "b1:9092"}
        policy = load_policy(ROOT / "config" / "spark-job.yaml", env=env)
        assert policy.for_topic("orders").keyed_policy == "hold"
        assert (policy.state.backend, policy.state.url) == ("redis", "redis://:pw@redis:6379/2")
        assert policy.client["bootstrap.servers"] == "b1:9092"
        assert load_policy(ROOT / "config" / "spark-job.yaml", env={}).state.url == "redis://127.0.0.1:6379/0"
