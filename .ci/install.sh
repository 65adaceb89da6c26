#!/usr/bin/env bash
# Installs everything mutepro's tests and demo need on a fresh Debian machine, and nothing twice:
#   - Debian packages: redis-server (tests start their own), a JDK 17+ and Maven if absent, gcc and Python's headers
#   - a virtual environment of its own, .mutepro/venv (no system site-packages, so a dependency's new release
#     cannot hide behind what the machine happens to have), holding mutepro installed from a WHEEL built here
#     (with its C fast path) and its extras [all] at the newest versions the bounds in pyproject.toml allow
#   - the Apache Kafka server jars from Maven Central into ~/.cache/mutepro (skipped when KAFKA_HOME is set)
#   - Spark's built-in Kafka sink jars (spark-sql-kafka-0-10) into the same cache, for the Spark benchmark
# Then `.mutepro/venv/bin/pytest` tests the installed wheel, not this checkout (see tests/conftest.py).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

PY=${PYTHON:-python3}                  # the interpreter the venv is made from (its base, when PY is in a venv)
venv=$root/.mutepro/venv
dist=$root/.mutepro/dist

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)
command -v javac >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || [ -n "${KAFKA_HOME:-}" ] || need_apt+=(maven)
# MuteProducer's C extension (required: the wheel is built with it, and a build without a compiler fails)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
$PY -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  || need_apt+=(python3-dev)
$PY -c 'import ensurepip, venv' 2>/dev/null || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install: Debian packages ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

pip=("$venv/bin/python" -m pip -q --disable-pip-version-check)
if ! "$venv/bin/python" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' 2>/dev/null; then
  echo "install: new virtual environment $venv"
  "$($PY -c 'import sys; print(sys._base_executable)')" -m venv --clear "$venv"
  "${pip[@]}" install --upgrade pip
  rm -f "$root/.mutepro/wheel.stamp" "$root/.mutepro/deps.stamp"
fi

# The wheel is rebuilt when anything that goes into it changed (the package's files, pyproject.toml, the
# interpreter). pip builds it in an isolated environment with the setuptools pyproject.toml asks for (>=74.1,
# for ext-modules in pyproject.toml), whatever setuptools the machine or the venv has.
wheel_want=$( { find mutepro -type f ! -name '*.so' ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 | sort -z \
                | xargs -0 sha256sum; sha256sum pyproject.toml; "$venv/bin/python" -VV; } | sha256sum | cut -d' ' -f1)
whl=$(ls "$dist"/mutepro-*.whl 2>/dev/null | head -n1 || true)
if [ -z "$whl" ] || [ "$(cat .mutepro/wheel.stamp 2>/dev/null)" != "$wheel_want" ]; then
  echo "install: building the mutepro wheel (pip wheel, build isolation)"
  rm -rf "$dist" build
  # the build's output (setuptools' deprecation notices, the compiler's) goes to a log, shown when it matters
  log=$root/.mutepro/wheel-build.log
  "${pip[@]}" wheel --no-deps . -w "$dist" > "$log" 2>&1 || { cat "$log" >&2; exit 1; }
  rm -rf build mutepro.egg-info  # pip builds in the tree: no leftovers next to the sources
  whl=$(ls "$dist"/mutepro-*.whl)
  # the extension is required (pyproject.toml): a wheel without it would fail at `import mutepro`
  if ! "$venv/bin/python" -c 'import sys, zipfile
sys.exit(not any(n.startswith("mutepro/producer/_fastpath") for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$whl"
  then
    echo "install: the wheel has no C extension mutepro/producer/_fastpath (see $log)" >&2
    exit 1
  fi
  "${pip[@]}" install --no-deps --force-reinstall "$whl"
  echo "$wheel_want" > .mutepro/wheel.stamp
fi

# Dependencies: the newest each bound allows, checked against the index when pyproject.toml changed or with
# MUTEPRO_UPGRADE=1 (.ci/run sets it once per run, ~15 s, so a dependency's release shows up in the next CI run).
deps_want=$( { sha256sum pyproject.toml; "$venv/bin/python" -VV; } | sha256sum | cut -d' ' -f1)
if [ "$(cat .mutepro/deps.stamp 2>/dev/null)" != "$deps_want" ] || [ "${MUTEPRO_UPGRADE:-}" = "1" ]; then
  echo "install: dependencies of mutepro[all], newest allowed"
  "${pip[@]}" install --upgrade --upgrade-strategy eager "mutepro[all] @ file://$whl"
  echo "$deps_want" > .mutepro/deps.stamp
fi
# from / so that this checkout's mutepro/ is not what gets imported
(cd / && "$venv/bin/python" - <<'PY'
import importlib.metadata as md
import mutepro
from mutepro.producer import accel
print(f"install: mutepro {md.version('mutepro')} from {mutepro.__file__}, C extension {accel.fastpath.__file__}; "
      f"confluent-kafka {md.version('confluent-kafka')}, PyYAML {md.version('PyYAML')}")
PY
)

if [ -z "${KAFKA_HOME:-}" ]; then
  "$venv/bin/mutepro" cluster jars
fi
# Spark's built-in Kafka sink, only for benchmarks/spark_bench.py's comparison (mutepro's sink needs no jar)
"$venv/bin/mutepro" spark jars >/dev/null
