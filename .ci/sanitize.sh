#!/usr/bin/env bash
# MuteProducer's C fast path under AddressSanitizer + UndefinedBehaviorSanitizer: builds the extension with
# -fsanitize=address,undefined into a scratch copy of the package, then runs every unit test and the real-cluster
# reentrancy tests (callbacks that produce, a multi-thread stress with mutes) against that build. Any sanitizer
# finding aborts the process, so the step fails. Everything else in CI runs the plain build.
#
# The Kafka cluster is started first, with the normal environment: the sanitizer runtime is preloaded only into
# the Python processes of the tests (a JVM with libasan preloaded does not start).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
PY=${PYTHON:-python3}
work=$(mktemp -d)
name="asan-$$"
cleanup() {
  mutepro cluster down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# a copy of the checkout (tests read config/, examples/, benchmarks/ and the README too)
git ls-files -z | xargs -0 cp --parents -t "$work"
find "$work/mutepro" -name '*.so' -delete
inc=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$($PY -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
gcc -shared -fPIC -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
  -Wall -Wno-missing-field-initializers -I"$inc" mutepro/producer/_fastpath.c \
  -o "$work/mutepro/producer/_fastpath$suffix"
echo "sanitize: built _fastpath$suffix with -fsanitize=address,undefined"

mutepro cluster up --name "$name" --json > "$work/cluster.json"
bootstrap=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["bootstrap_servers"])' "$work/cluster.json")

cd "$work"
sanitized() {
  # libstdc++ preloaded too: otherwise ASan cannot intercept __cxa_throw in C++ extensions loaded later
  # (matplotlib's ft2font raises through pybind11 on import: "CHECK failed ... real___cxa_throw", abort)
  env LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)" \
      ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:handle_segv=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      PYTHONMALLOC=malloc PYTHONPATH="$work" MUTEPRO_BOOTSTRAP="$bootstrap" \
      "$@"
}
# the tests must import the sanitized build, not the installed one
sanitized "$PY" -c 'import sys, mutepro.producer._fastpath as f; assert f.__file__.startswith(sys.argv[1]), f.__file__' "$work"
sanitized "$PY" -m pytest -q -p no:cacheprovider tests/unit
sanitized "$PY" -m pytest -q -p no:cacheprovider tests/integration/test_reentrancy.py -k "stress or produces"
echo "sanitize: no AddressSanitizer / UndefinedBehaviorSanitizer finding"
