"""Spark's built-in Kafka sink's jars (mutepro.spark.jars), without Maven: a completed cache is used as is, only
the connector's own jars handed out; a version known to be unpublished falls back to one of the same major
version, and the result says so; nothing found names every version tried."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.errors import PrerequisiteError
from mutepro.spark.jars import FALLBACK_VERSIONS, SparkKafkaJars, resolve_spark_kafka


def _cache(root: Path, version: str) -> Path:
    """A completed cache of ``version``: the connector's four jars and one of Spark's own."""
    jars = root / f"spark-kafka-{version}" / "jars"
    jars.mkdir(parents=True)
    for name in (f"spark-sql-kafka-0-10_2.13-{version}.jar", f"spark-token-provider-kafka-0-10_2.13-{version}.jar",
                 "kafka-clients-3.9.0.jar", "commons-pool2-2.12.0.jar", "scala-library-2.13.16.jar"):
        (jars / name).write_bytes(b"")
    (jars.parent / ".complete").write_text(version)
    return jars


def _unavailable(root: Path, version: str) -> None:
    """Maven said (within the last day) that ``version`` is not published."""
    target = root / f"spark-kafka-{version}"
    target.mkdir(parents=True)
    (target / ".unavailable").write_text("not found")


class TestResolve:
    def test_a_completed_cache_hands_out_only_the_connectors_jars(self, tmp_path: Path) -> None:
        jars_dir = _cache(tmp_path, "4.1.1")
        found = resolve_spark_kafka("4.1.1", cache_dir=tmp_path)
        assert (found.version, found.wanted, found.source, found.fell_back) == ("4.1.1", "4.1.1", "cache", False)
        assert [p.name for p in found.jars] == sorted(
            p.name for p in jars_dir.iterdir() if not p.name.startswith("scala-")
        )
        assert found.spark_jars == ",".join(str(p) for p in found.jars)

    def test_an_unpublished_version_falls_back_within_its_major(self, tmp_path: Path) -> None:
        """4.3.0 not published (checked today): the newest cached 4.x fallback is used, and said to be one."""
        _unavailable(tmp_path, "4.3.0")
        _cache(tmp_path, FALLBACK_VERSIONS[0])
        found = resolve_spark_kafka("4.3.0", cache_dir=tmp_path)
        assert (found.version, found.wanted, found.fell_back) == (FALLBACK_VERSIONS[0], "4.3.0", True)

    def test_nothing_found_names_every_version_tried(self, tmp_path: Path) -> None:
        candidates = ["4.3.0", *FALLBACK_VERSIONS]
        for version in candidates:
            _unavailable(tmp_path, version)
        with pytest.raises(PrerequisiteError, match="tried " + ", ".join(candidates)) as caught:
            resolve_spark_kafka("4.3.0", cache_dir=tmp_path)
        assert str(caught.value).count("not published (checked within the last day)") == len(candidates)

    def test_an_incomplete_cache_is_not_used(self, tmp_path: Path) -> None:
        """Jars without the .complete marker (an interrupted copy), the version unpublished and no 3.x fallback:
        an error, not those jars."""
        target = _cache(tmp_path, "3.5.0").parent
        (target / ".complete").unlink()
        (target / ".unavailable").write_text("not found")
        with pytest.raises(PrerequisiteError, match=r"tried 3\.5\.0\)"):
            resolve_spark_kafka("3.5.0", cache_dir=tmp_path)


class TestSparkKafkaJars:
    def test_no_fallback_when_the_wanted_version_was_found(self) -> None:
        found = SparkKafkaJars("4.0.1", "4.0.1", (Path("/a.jar"), Path("/b.jar")), "maven")
        assert not found.fell_back and found.spark_jars == "/a.jar,/b.jar"
