#!/usr/bin/env bash
# Topology update and import benchmark of hsns-aggregator over loopback (issue 16 figures): for each
# cluster size, a fresh aggregator and database; the import of HOSTS hosts x 8 NPUs (time, peak RSS)
# beside the JSON parse alone, one device-state PATCH (p50/p99) and a bulk update of 1,000 devices beside
# GET /healthz in the same run.
# Usage: bench/topology_update.sh [HOSTS...]   (default: 10000 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
cmake --preset release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build build/release -j2 --target hsns-aggregator hsns_bench_topology_update >/dev/null

work=$(mktemp -d)
token=bench-token-0123456789abcdef
printf 'tokens:\n  - {name: bench, role: operator, token: %s}\n' "$token" >"$work/tokens.yaml"
agg=
cleanup() {
  if [ -n "$agg" ]; then kill -TERM "$agg" 2>/dev/null || true; wait "$agg" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
for hosts in "${sizes[@]}"; do
  rm -f "$work"/bench.db* "$work/ready"
  build/release/aggregator/hsns-aggregator run --config /dev/null --listen 127.0.0.1:0 --threads 2 \
    --database "$work/bench.db" --tokens-file "$work/tokens.yaml" --ready-file "$work/ready" 2>"$work/log" &
  agg=$!
  for _ in $(seq 200); do [ -f "$work/ready" ] && break; sleep 0.05; done
  port=$(cut -d' ' -f2 "$work/ready")
  echo "== $hosts hosts"
  build/release/bench/topology_update/hsns_bench_topology_update "http://127.0.0.1:$port" "$token" "$hosts" "$agg"
  kill -TERM "$agg"
  wait "$agg" || true
  agg=
done
