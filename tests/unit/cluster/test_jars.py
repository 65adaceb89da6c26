"""Finding the Kafka server jars and java (mutepro.cluster.jars), without running Java or Maven: KAFKA_HOME, a
completed cache, the missing prerequisites explained, and the environment variables that move the cache and pick
the version."""

from __future__ import annotations

from pathlib import Path

import pytest

from mutepro.cluster.jars import (
    DEFAULT_KAFKA_VERSION,
    _pom,
    cache_root,
    kafka_version,
    require_java,
    resolve_kafka,
)
from mutepro.errors import PrerequisiteError


class TestPrerequisites:
    def test_missing_java_is_explained(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """Without java on PATH or JAVA_HOME the error says how to install it."""
        monkeypatch.setenv("PATH", str(tmp_path))
        monkeypatch.delenv("JAVA_HOME", raising=False)
        with pytest.raises(PrerequisiteError, match=r"java was not found.*JAVA_HOME"):
            require_java()

    def test_missing_mvn_suggests_kafka_home(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """Without mvn and without a cache the error names Maven and KAFKA_HOME."""
        monkeypatch.setenv("PATH", str(tmp_path))
        monkeypatch.delenv("KAFKA_HOME", raising=False)
        with pytest.raises(PrerequisiteError, match=r"mvn was not found.*KAFKA_HOME"):
            resolve_kafka("4.3.1", cache_dir=tmp_path / "cache")

    def test_bad_kafka_home_is_explained(self, tmp_path: Path) -> None:
        """A KAFKA_HOME without libs/kafka_*.jar is rejected with the expected layout."""
        with pytest.raises(PrerequisiteError, match="does not look like an unpacked Kafka distribution"):
            resolve_kafka(kafka_home=tmp_path)

    def test_kafka_home_version_is_read_from_the_jar(self, tmp_path: Path) -> None:
        """An unpacked distribution is used as is, its version taken from kafka_2.13-<v>.jar."""
        (tmp_path / "libs").mkdir()
        (tmp_path / "libs" / "kafka_2.13-4.3.1.jar").write_bytes(b"")
        dist = resolve_kafka(kafka_home=tmp_path)
        assert (dist.version, dist.source) == ("4.3.1", "KAFKA_HOME")


class TestCache:
    def test_a_completed_cache_is_used_without_maven(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """The .complete marker and the broker and SLF4J-binding jars present: no mvn needed (PATH is empty)."""
        monkeypatch.setenv("PATH", str(tmp_path / "bin"))
        monkeypatch.delenv("KAFKA_HOME", raising=False)
        libs = tmp_path / "cache" / "libs"
        libs.mkdir(parents=True)
        for name in ("kafka_2.13-4.3.1.jar", "log4j-slf4j-impl-2.25.4.jar", "kafka-clients-4.3.1.jar"):
            (libs / name).write_bytes(b"")
        (tmp_path / "cache" / ".complete").write_text("4.3.1")
        dist = resolve_kafka("4.3.1", cache_dir=tmp_path / "cache")
        assert (dist.version, dist.source, dist.libs_dir) == ("4.3.1", "cache", libs)
        assert dist.jar("kafka-clients-") == libs / "kafka-clients-4.3.1.jar" and dist.jar("nope-") is None
        assert dist.classpath == f"{libs}/*"

    def test_an_interrupted_download_is_not_a_cache(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """Jars but no marker: resolved again (here: mvn missing, so the error)."""
        monkeypatch.setenv("PATH", str(tmp_path / "bin"))
        monkeypatch.delenv("KAFKA_HOME", raising=False)
        libs = tmp_path / "cache" / "libs"
        libs.mkdir(parents=True)
        (libs / "kafka_2.13-4.3.1.jar").write_bytes(b"")
        with pytest.raises(PrerequisiteError, match="mvn was not found"):
            resolve_kafka("4.3.1", cache_dir=tmp_path / "cache")

    def test_the_pom_asks_for_the_broker_the_tools_and_the_slf4j_binding(self) -> None:
        pom = _pom("4.3.1")
        for artifact in ("<artifactId>kafka_2.13</artifactId>", "<artifactId>kafka-tools</artifactId>",
                         "<artifactId>log4j-slf4j-impl</artifactId>"):
            assert artifact in pom
        assert pom.count("<version>4.3.1</version>") == 3  # the project's and the two Kafka artifacts'


class TestEnvironment:
    def test_cache_root(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        monkeypatch.setenv("MUTEPRO_CACHE_DIR", str(tmp_path / "explicit"))
        assert cache_root() == tmp_path / "explicit"
        monkeypatch.delenv("MUTEPRO_CACHE_DIR")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert cache_root() == tmp_path / "xdg" / "mutepro"
        monkeypatch.delenv("XDG_CACHE_HOME")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        assert cache_root() == tmp_path / "home" / ".cache" / "mutepro"

    def test_kafka_version(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("MUTEPRO_KAFKA_VERSION", raising=False)
        assert kafka_version() == DEFAULT_KAFKA_VERSION
        monkeypatch.setenv("MUTEPRO_KAFKA_VERSION", "4.0.0")
        assert kafka_version() == "4.0.0"

    def test_java_home_comes_first(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        java = tmp_path / "jdk" / "bin" / "java"
        java.parent.mkdir(parents=True)
        java.write_text("")
        monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
        monkeypatch.setenv("PATH", str(tmp_path))
        assert require_java() == str(java)
