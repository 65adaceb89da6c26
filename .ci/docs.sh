#!/usr/bin/env bash
# Builds the documentation site (mkdocs.yml) in strict mode: a broken link, a missing page or an API reference
# that does not resolve fails CI. The site goes to a temporary directory; `mkdocs serve` shows it locally.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
NO_MKDOCS_2_WARNING=1 $PY -m mkdocs build --strict --quiet --site-dir "$out"
echo "docs: built $(find "$out" -name index.html | wc -l) pages (strict)"
