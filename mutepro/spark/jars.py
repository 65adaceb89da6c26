"""Resolve Spark's own Kafka sink (``spark-sql-kafka-0-10``) from Maven Central, for benchmarks and comparisons.

mutepro's sink needs no jar. The built-in sink is only needed to compare against (``benchmarks/spark_bench.py``)
or to migrate from. Its connector must match the installed PySpark's Scala line (2.13 for Spark 4). The newest
PySpark is sometimes on PyPI before its connector is on the Maven Central this machine reaches: then the newest
published release of the same major version is used (4.2.0 runs on the 4.3.0 runtime), and the result says so.

The jars (the connector, its token provider, ``kafka-clients`` and ``commons-pool2``; Spark's own ``provided``
dependencies are left out) are copied into ``~/.cache/mutepro/spark-kafka-<version>/jars`` with Maven, and a
``.complete`` marker written last, as for the Kafka server jars.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mutepro.cluster.jars import cache_root
from mutepro.errors import PrerequisiteError

SCALA_VERSION = "2.13"
#: Tried in this order after the installed PySpark's own version (newest first).
FALLBACK_VERSIONS = ("4.2.0", "4.1.1", "4.0.1")
_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies"
_TIMEOUT_S = 900
_RETRY_MISSING_S = 86_400.0
_CONNECTOR_JARS = ("spark-sql-kafka-0-10_", "spark-token-provider-kafka-0-10_", "kafka-clients-", "commons-pool2-")


@dataclass(frozen=True)
class SparkKafkaJars:
    """The built-in Kafka sink's jars for one connector version."""

    version: str
    wanted: str  # the version asked for (the installed PySpark's); differs from ``version`` after a fallback
    jars: tuple[Path, ...]
    source: str  # "cache" or "maven"

    @property
    def spark_jars(self) -> str:
        """The value for ``spark.jars`` (comma-separated local paths)."""
        return ",".join(str(p) for p in self.jars)

    @property
    def fell_back(self) -> bool:
        return self.version != self.wanted


def installed_spark_version() -> str:
    """The installed PySpark's version, without a ``.devN``/``rc`` tail."""
    try:
        import pyspark
    except ImportError as err:
        raise PrerequisiteError("PySpark is not installed: pip install 'mutepro[spark]'") from err
    return str(pyspark.__version__).split(".dev")[0].split("rc")[0]


def resolve_spark_kafka(version: str | None = None, *, cache_dir: Path | None = None) -> SparkKafkaJars:
    """The built-in Kafka sink's jars for ``version`` (default: the installed PySpark's), resolved once.

    Falls back to :data:`FALLBACK_VERSIONS` of the same major version when the wanted one is not published.
    """
    wanted = version or installed_spark_version()
    major = wanted.split(".")[0]
    candidates = [wanted, *(v for v in FALLBACK_VERSIONS if v.split(".")[0] == major and v != wanted)]
    failures: list[str] = []
    for candidate in candidates:
        target = (cache_dir or cache_root()) / f"spark-kafka-{candidate}"
        found = _cached(target)
        if found:
            return SparkKafkaJars(candidate, wanted, found, "cache")
        missing = target / ".unavailable"
        if missing.exists() and time.time() - missing.stat().st_mtime < _RETRY_MISSING_S:
            failures.append(f"{candidate}: not published (checked within the last day)")
            continue
        ok, detail = _maven(candidate, target)
        if ok:
            return SparkKafkaJars(candidate, wanted, _cached(target), "maven")
        missing.write_text(detail, encoding="utf-8")  # asking Maven again on every run costs ~10 s
        failures.append(f"{candidate}: {detail}")
    raise PrerequisiteError(
        f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_VERSION} could not be resolved for Spark {wanted} "
        f"(tried {', '.join(candidates)}). Check the network to Maven Central (or the mirror in "
        "~/.m2/settings.xml).\n" + "\n".join(failures)
    )


def _cached(target: Path) -> tuple[Path, ...]:
    jars_dir = target / "jars"
    if not (target / ".complete").exists():
        return ()
    # Spark's own jars already carry Scala, Hadoop, lz4, snappy and slf4j: a second copy on spark.jars could
    # shadow the runtime's, so only the connector's own four are handed out.
    return tuple(sorted(p for p in jars_dir.glob("*.jar") if p.name.startswith(_CONNECTOR_JARS)))


def _maven(version: str, target: Path) -> tuple[bool, str]:
    mvn = shutil.which("mvn")
    if not mvn:
        raise PrerequisiteError("mvn was not found on PATH; install Maven (Debian: apt-get install maven)")
    target.mkdir(parents=True, exist_ok=True)
    pom = target / "pom.xml"
    pom.write_text(_pom(version), encoding="utf-8")
    staging = Path(tempfile.mkdtemp(prefix="jars-", dir=target))
    output = ""
    for extra in (["-o"], []):  # ~/.m2 first: a warm machine resolves without the network
        cmd = [mvn, "-B", "-q", *extra, "-f", str(pom), _PLUGIN, "-DincludeScope=runtime",
               f"-DoutputDirectory={staging}"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            shutil.rmtree(staging, ignore_errors=True)
            return False, f"mvn did not finish within {_TIMEOUT_S}s"
        output = (proc.stdout + proc.stderr).strip()
        if proc.returncode == 0 and any(staging.glob("spark-sql-kafka-*.jar")):
            jars_dir = target / "jars"
            if jars_dir.exists():
                shutil.rmtree(jars_dir)
            staging.rename(jars_dir)
            (target / ".complete").write_text(version, encoding="utf-8")
            return True, ""
    shutil.rmtree(staging, ignore_errors=True)
    return False, " ".join(output.splitlines()[-3:])[:400] or "mvn failed"


def _pom(version: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.mutepro.local</groupId>
  <artifactId>spark-kafka-runtime</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.spark</groupId>
      <artifactId>spark-sql-kafka-0-10_{SCALA_VERSION}</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""
