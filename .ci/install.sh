#!/usr/bin/env bash
# Installs everything mutepro's tests and demo need on a fresh Debian machine, and nothing twice:
#   - Debian packages: redis-server (tests start their own), a JDK 17+ and Maven if absent
#   - the project with all extras (pip, editable)
#   - the Apache Kafka server jars from Maven Central into ~/.cache/mutepro (skipped when KAFKA_HOME is set)
#   - Spark's built-in Kafka sink jars (spark-sql-kafka-0-10) into the same cache, for the Spark benchmark
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)
command -v javac >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || [ -n "${KAFKA_HOME:-}" ] || need_apt+=(maven)
# the C fast path of MuteProducer (optional: without a compiler mutepro installs and runs pure Python)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
PY=${PYTHON:-python3}
$PY -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  || need_apt+=(python3-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install: Debian packages ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# pip runs when this checkout is not the installed one, or pyproject.toml or the C fast path changed since the
# last install here.
stamp=.mutepro/install.stamp
want="$(cat pyproject.toml mutepro/producer/_fastpath.c | sha256sum | cut -d' ' -f1) $PWD"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] \
   || ! $PY -c "import mutepro, confluent_kafka, pybreaker, structlog, pydantic, redis, pyspark, pyarrow, pandas, matplotlib" 2>/dev/null; then
  echo "install: pip install -e .[all]"
  $PY -m pip install -q --disable-pip-version-check --root-user-action=ignore -e ".[all]"
  mkdir -p .mutepro && echo "$want" > "$stamp"
fi
if $PY -c "import mutepro.producer._fastpath" 2>/dev/null; then
  echo "install: MuteProducer C fast path built"
else
  echo "install: WARNING: MuteProducer C fast path not built (no C compiler?); running the pure-Python path" >&2
fi

if [ -z "${KAFKA_HOME:-}" ]; then
  mutepro cluster jars
fi
# Spark's built-in Kafka sink, only for benchmarks/spark_bench.py's comparison (mutepro's sink needs no jar)
mutepro spark jars >/dev/null
