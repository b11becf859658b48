#!/usr/bin/env bash
# The main job: installs what is missing, builds hsns, starts hsns-aggregator with its embedded SQLite
# on loopback, loads a small sample cluster through hsnsctl, and prints where to look. Ctrl-C stops it.
# Usage: scripts/demo.sh [--port N]
set -euo pipefail
cd "$(dirname "$0")/.."
port=8080
[ "${1:-}" = "--port" ] && port=$2

scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target hsns-aggregator hsnsctl >/dev/null

bin=build/release
state=build/demo
mkdir -p "$state"
rm -f "$state"/aggregator.db* "$state"/ready
"$bin/aggregator/hsns-aggregator" run --config /dev/null --insecure-no-auth \
  --listen "127.0.0.1:$port" --database "$state/aggregator.db" --ready-file "$state/ready" \
  2>"$state/aggregator.log" &
agg=$!
trap 'kill -TERM $agg 2>/dev/null; wait $agg 2>/dev/null; echo "demo stopped"' EXIT INT TERM
for _ in $(seq 200); do [ -f "$state/ready" ] && break; kill -0 $agg 2>/dev/null || break; sleep 0.05; done
if [ ! -f "$state/ready" ]; then cat "$state/aggregator.log"; exit 1; fi

export HSNS_SERVER="http://127.0.0.1:$port"
ctl="$bin/cli/hsnsctl"
lab/sample-cluster.sh "$ctl" >/dev/null

cat <<EOT

hsns demo is running: hsns-aggregator at $HSNS_SERVER (authentication off, loopback only)
  database  $state/aggregator.db      log  $state/aggregator.log
  sample    4 hosts x 8 NPUs, subnets rail-even (198.18.0.0/24) and rail-odd (2001:db8:1::/64), 32 ports

Try:
  export HSNS_SERVER=$HSNS_SERVER
  $ctl subnets list
  $ctl ports list --host host-01
  $ctl desired host-01
  $ctl reachability \$($ctl -o json ports list --host host-01 | jq -r '.items[0].id') \$($ctl -o json ports list --host host-02 | jq -r '.items[1].id')
  curl -s $HSNS_SERVER/metrics | grep hsns_http_requests_total
  curl -s $HSNS_SERVER/api/v1/openapi.json | jq .info

Press Ctrl-C to stop.
EOT
wait $agg
