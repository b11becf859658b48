#!/usr/bin/env bash
# Installs what is missing, builds hsns with AddressSanitizer/UBSan, and runs the whole test suite:
# unit, integration (real aggregator over loopback), OpenAPI lint, promtool, and bounded libFuzzer runs.
# Prints the time each stage took and how many tests ran.
# Usage: scripts/test.sh        (as root on Debian 12, or a user with sudo)
set -euo pipefail
cd "$(dirname "$0")/.."

stage_start=$SECONDS
stage() {
  local now=$SECONDS
  [ -z "${stage_name:-}" ] || echo "== ${stage_name}: $((now - stage_start)) s"
  stage_name=$1
  stage_start=$now
  [ -z "$stage_name" ] || echo "== $stage_name"
}

stage "install dependencies"
scripts/install-deps.sh
jobs=$(nproc)

stage "npm ci (OpenAPI linter)"
(cd tests/openapi && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

stage "build (asan-ubsan)"
cmake --preset asan-ubsan >/dev/null
cmake --build --preset asan-ubsan -j"$jobs"

stage "build (fuzz targets, clang)"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$jobs"

status=0
stage "tests (asan-ubsan)"
ctest --preset asan-ubsan -j"$jobs" || status=1
stage "tests (bounded fuzzing)"
ctest --preset fuzz -j"$jobs" || status=1
stage ""
echo "== total: ${SECONDS} s"
exit $status
