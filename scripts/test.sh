#!/usr/bin/env bash
# Installs what is missing, builds hsns with AddressSanitizer/UBSan, and runs the whole test suite:
# unit, integration (real aggregator over loopback), OpenAPI lint, promtool, and a bounded libFuzzer run.
# Usage: scripts/test.sh        (as root on Debian 12, or a user with sudo)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
jobs=$(nproc)

echo "== npm ci (OpenAPI linter)"
(cd tests/openapi && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

echo "== build (asan-ubsan)"
cmake --preset asan-ubsan >/dev/null
cmake --build --preset asan-ubsan -j"$jobs"

echo "== build (fuzz targets, clang)"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$jobs"

echo "== tests"
status=0
ctest --preset asan-ubsan -j"$jobs" || status=1
ctest --preset fuzz || status=1
exit $status
