"""Find the Apache Kafka server jars: a user's ``KAFKA_HOME`` or a per-user cache filled by Maven.

Resolution order:

1. ``KAFKA_HOME`` (or ``kafka_home=``) pointing at an unpacked official distribution: its ``libs/*.jar``.
   No Maven needed.
2. ``~/.cache/mutepro/kafka-<version>/libs`` when a previous resolution completed (a ``.complete`` marker
   is written last, so an interrupted download is never mistaken for a good cache).
3. ``mvn`` copying ``org.apache.kafka:kafka_2.13:<version>`` with its runtime dependencies (and
   ``kafka-tools`` for ``kafka-reassign-partitions``) from Maven Central into that cache. Maven's own
   ``~/.m2`` is tried offline first, so a warm machine resolves in a few seconds without the network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mutepro.errors import PrerequisiteError

#: The Kafka release mutepro's launcher is tested with (override with ``MUTEPRO_KAFKA_VERSION``).
DEFAULT_KAFKA_VERSION = "4.3.1"
SCALA_VERSION = "2.13"
#: The log4j2 release of Kafka 4.3's own dependencies, for the SLF4J binding.
LOG4J_VERSION = "2.25.4"
_MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies"
_MAVEN_TIMEOUT_S = 900


@dataclass(frozen=True)
class KafkaDistribution:
    """Where the jars of one Kafka version are, and where they came from."""

    version: str
    libs_dir: Path
    source: str  # "KAFKA_HOME", "cache" or "maven"

    @property
    def classpath(self) -> str:
        """A JVM classpath wildcard covering every jar of the distribution."""
        return str(self.libs_dir / "*")

    def jar(self, prefix: str) -> Path | None:
        """The first jar whose file name starts with ``prefix`` (e.g. ``kafka-clients-``), if any."""
        for path in sorted(self.libs_dir.glob(f"{prefix}*.jar")):
            return path
        return None


def cache_root() -> Path:
    """The per-user cache directory (``$MUTEPRO_CACHE_DIR`` or ``$XDG_CACHE_HOME/mutepro``)."""
    explicit = os.environ.get("MUTEPRO_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "mutepro"


def kafka_version() -> str:
    """The Kafka version to run: ``$MUTEPRO_KAFKA_VERSION`` or :data:`DEFAULT_KAFKA_VERSION`."""
    return os.environ.get("MUTEPRO_KAFKA_VERSION", DEFAULT_KAFKA_VERSION)


def require_java() -> str:
    """The path of ``java`` (``$JAVA_HOME/bin/java`` first); a clear error if there is none."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.exists():
            return str(candidate)
    found = shutil.which("java")
    if not found:
        raise PrerequisiteError(
            "java was not found on PATH (and JAVA_HOME is not set). Kafka 4.x brokers need Java 17 or newer: "
            "install a JDK (Debian: `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME."
        )
    return found


def resolve_kafka(
    version: str | None = None,
    *,
    kafka_home: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    offline_first: bool = True,
) -> KafkaDistribution:
    """Return a usable Kafka distribution, resolving it with Maven the first time.

    Raises :class:`~mutepro.errors.PrerequisiteError` naming the cause and the fix when ``KAFKA_HOME`` is
    wrong, ``mvn`` is missing, or Maven cannot reach its repository.
    """
    home = kafka_home if kafka_home is not None else os.environ.get("KAFKA_HOME")
    if home:
        return _from_kafka_home(Path(home).expanduser())

    version = version or kafka_version()
    target = Path(cache_dir).expanduser() if cache_dir else cache_root() / f"kafka-{version}"
    libs = target / "libs"
    marker = target / ".complete"
    if marker.exists() and any(libs.glob("kafka_*.jar")) and any(libs.glob("log4j-slf4j-impl-*.jar")):
        return KafkaDistribution(version, libs, "cache")

    mvn = shutil.which("mvn")
    if not mvn:
        raise PrerequisiteError(
            f"mvn was not found on PATH, so Kafka {version} cannot be resolved from Maven Central. Install "
            "Maven (Debian: `apt-get install maven`), or download Apache Kafka, unpack it and set "
            "KAFKA_HOME to its directory."
        )
    target.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="libs-", dir=target))
    pom = target / "pom.xml"
    pom.write_text(_pom(version), encoding="utf-8")
    attempts = [["-o"], []] if offline_first else [[]]
    output = ""
    for extra in attempts:
        cmd = [
            mvn, "-B", "-q", *extra, "-f", str(pom), _MAVEN_DEPENDENCY_PLUGIN,
            "-DincludeScope=runtime", f"-DoutputDirectory={staging}",
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_MAVEN_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as err:
            shutil.rmtree(staging, ignore_errors=True)
            raise PrerequisiteError(
                f"mvn did not finish resolving Kafka {version} within {_MAVEN_TIMEOUT_S}s; check the network "
                "to Maven Central (or a mirror in ~/.m2/settings.xml), or set KAFKA_HOME."
            ) from err
        output = (proc.stdout + proc.stderr).strip()
        if proc.returncode == 0 and any(staging.glob("kafka_*.jar")):
            break
    else:
        shutil.rmtree(staging, ignore_errors=True)
        tail = "\n".join(output.splitlines()[-15:])
        hint = (
            "Maven could not reach its repository"
            if any(s in output for s in ("Could not transfer", "Unknown host", "resolve", "Connection"))
            else "Maven failed"
        )
        raise PrerequisiteError(
            f"{hint} while resolving org.apache.kafka:kafka_{SCALA_VERSION}:{version}. Fix the network or "
            "~/.m2/settings.xml mirror, pick an existing version with MUTEPRO_KAFKA_VERSION, or set KAFKA_HOME "
            f"to an unpacked Kafka distribution.\n--- mvn output (tail) ---\n{tail}"
        )
    if libs.exists():
        shutil.rmtree(libs)
    staging.rename(libs)
    marker.write_text(version, encoding="utf-8")
    return KafkaDistribution(version, libs, "maven")


def _from_kafka_home(home: Path) -> KafkaDistribution:
    libs = home / "libs"
    jars = sorted(libs.glob(f"kafka_{SCALA_VERSION}-*.jar")) or sorted(libs.glob("kafka_*.jar"))
    if not jars:
        raise PrerequisiteError(
            f"KAFKA_HOME={home} does not look like an unpacked Kafka distribution (no {libs}/kafka_*.jar). "
            "Point KAFKA_HOME at the directory that contains bin/ and libs/, or unset it to resolve Kafka "
            "from Maven Central."
        )
    name = jars[0].name  # kafka_2.13-4.3.1.jar
    version = name.rsplit("-", 1)[-1].removesuffix(".jar")
    return KafkaDistribution(version, libs, "KAFKA_HOME")


def _pom(version: str) -> str:
    # kafka_2.13 brings the broker, the KRaft controller, StorageTool and log4j2; kafka-tools brings
    # kafka-reassign-partitions and friends, which the rack helpers can drive.
    # The broker logs through SLF4J 1.7; its POM leaves the binding to the distribution, which ships
    # log4j-slf4j-impl. Without it every broker log is silently discarded (SLF4J's NOP logger).
    artifacts = (
        ("org.apache.kafka", f"kafka_{SCALA_VERSION}", version),
        ("org.apache.kafka", "kafka-tools", version),
        ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION),
    )
    deps = "".join(
        f"""
    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{ver}</version>
    </dependency>"""
        for group, artifact, ver in artifacts
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.mutepro.local</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>{deps}
  </dependencies>
</project>
"""
