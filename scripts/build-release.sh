#!/usr/bin/env bash
# Installs what is missing and builds the named targets of the release preset (build/release) without their
# output: the binaries the demo runs (scripts/demo.sh, scripts/demo-fast.sh).
# Usage: scripts/build-release.sh TARGET...
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"${HSNS_JOBS:-$(nproc)}" --target "$@" >/dev/null
