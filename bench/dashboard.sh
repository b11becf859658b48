#!/usr/bin/env bash
# Dashboard benchmark (issue 13 figures, docs/performance.md): the real hsns-aggregator (release preset)
# serving the built dashboard, a generated fabric of each size, Debian's chromium headless with software
# rendering (bench/dashboard/dashboard_bench.mjs says what is measured: the pages, live alarm deltas and the
# live metric overlay grade stream; `--only grades` runs the grade stream phase alone).
# Usage: bench/dashboard.sh [HOSTS,...] [extra dashboard_bench.mjs arguments]   (default: 1000,10000)
#        BUILD_DIR=build/asan-ubsan bench/dashboard.sh ...   measures an existing tree instead (not built here)
set -euo pipefail
cd "$(dirname "$0")/.."
hosts=${1:-1000,10000}
[ $# -gt 0 ] && shift
if [ -z "${BUILD_DIR:-}" ]; then
  BUILD_DIR=build/release
  cmake --preset release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
  cmake --build build/release -j2 --target hsns-aggregator hsns_web >/dev/null
fi
[ -d web/node_modules ] || (cd web && npm ci --no-audit --no-fund --loglevel=error)
exec node bench/dashboard/dashboard_bench.mjs --build "$BUILD_DIR" --hosts "$hosts" "$@"
