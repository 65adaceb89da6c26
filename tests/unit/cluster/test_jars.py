"""Where the Kafka server jars come from (mutepro.cluster.jars), without downloading anything: the cache's place,
the version, a user's KAFKA_HOME read or refused with what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.cluster import jars
from mutepro.errors import PrerequisiteError


class TestPlaces:
    def test_the_cache_root_follows_mutepros_variable_then_xdg(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.setenv("MUTEPRO_CACHE_DIR", str(tmp_path / "mine"))
        assert jars.cache_root() == tmp_path / "mine"
        monkeypatch.delenv("MUTEPRO_CACHE_DIR")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert jars.cache_root() == tmp_path / "xdg" / "mutepro"

    def test_the_version_is_the_tested_one_unless_overridden(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("MUTEPRO_KAFKA_VERSION", raising=False)
        assert jars.kafka_version() == jars.DEFAULT_KAFKA_VERSION
        monkeypatch.setenv("MUTEPRO_KAFKA_VERSION", "4.0.0")
        assert jars.kafka_version() == "4.0.0"


class TestKafkaHome:
    def test_an_unpacked_distribution_gives_its_version_and_jars(self, tmp_path: Path) -> None:
        libs = tmp_path / "libs"
        libs.mkdir()
        for name in ("kafka_2.13-4.3.1.jar", "kafka-clients-4.3.1.jar", "zstd-jni-1.5.jar"):
            (libs / name).write_bytes(b"")
        dist = jars.resolve_kafka(kafka_home=tmp_path)
        assert (dist.version, dist.source, dist.libs_dir) == ("4.3.1", "KAFKA_HOME", libs)
        assert dist.classpath == str(libs / "*")
        assert dist.jar("kafka-clients-") == libs / "kafka-clients-4.3.1.jar" and dist.jar("nothing-") is None

    def test_a_directory_that_is_not_a_distribution_says_what_to_point_at(self, tmp_path: Path) -> None:
        with pytest.raises(PrerequisiteError, match="does not look like an unpacked Kafka distribution"):
            jars.resolve_kafka(kafka_home=tmp_path)
