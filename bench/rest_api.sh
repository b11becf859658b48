#!/usr/bin/env bash
# REST API benchmark of hsns-aggregator over loopback (issue 2 figures):
#  1. port-creation latency p50/p99 while loading 1,000 ports (125 hosts x 8 NPUs), against GET /healthz
#     on the same connection;
#  2. throughput of GET /api/v1/ports (1,000 ports) with wrk, against GET /healthz in the same run.
# Usage: bench/rest_api.sh [DURATION_SECONDS=10]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target hsns-aggregator hsns_bench_port_create >/dev/null

work=$(mktemp -d)
token=bench-token-0123456789abcdef
printf 'tokens:\n  - {name: bench, role: operator, token: %s}\n' "$token" >"$work/tokens.yaml"
build/release/aggregator/hsns-aggregator run --config /dev/null --listen 127.0.0.1:0 --threads 2 \
  --database "$work/bench.db" --tokens-file "$work/tokens.yaml" --ready-file "$work/ready" 2>"$work/log" &
agg=$!
trap 'kill -TERM $agg 2>/dev/null; wait $agg 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 200); do [ -f "$work/ready" ] && break; sleep 0.05; done
port=$(cut -d' ' -f2 "$work/ready")
url="http://127.0.0.1:$port"

echo "== port creation latency"
build/release/bench/hsns_bench_port_create "$url" "$token" 125

echo "== throughput (wrk, 2 threads, 16 connections, ${duration}s each; aggregator has 2 I/O threads)"
bytes=$(curl -s -H "Authorization: Bearer $token" "$url/api/v1/ports" | wc -c)
count=$(curl -s -H "Authorization: Bearer $token" "$url/api/v1/ports" | jq '.items | length')
echo "GET /api/v1/ports returns $count ports, $bytes bytes"
run_wrk() {
  wrk -t2 -c16 -d"${duration}s" -H "Authorization: Bearer $token" "$url$1" | awk '/Requests\/sec/ {print $2}'
}
ports_rps=$(run_wrk /api/v1/ports)
health_rps=$(run_wrk /healthz)
printf 'GET /api/v1/ports (1,000 ports): %10.0f requests/s\n' "$ports_rps"
printf 'baseline GET /healthz:           %10.0f requests/s\n' "$health_rps"
awk -v a="$ports_rps" -v b="$health_rps" 'BEGIN { printf "ratio ports / healthz:           %10.3f\n", a / b }'
