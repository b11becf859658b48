#!/usr/bin/env bash
# Does CPU-heavy scheduling starve the light routes? (issue 9 figure)
# Throughput of GET /healthz with wrk, first alone, then while a client keeps one schedule call running at
# all times (POST /api/v1/schedule, then DELETE of the job, in a loop), same aggregator, same run. Prints
# both figures, the ratio and how many schedule calls completed during the loaded run.
# Usage: bench/healthz_under_schedule.sh [DURATION_SECONDS=10] [HOSTS_IN_JOB=16] [WORKER_NICE=10]
# (WORKER_NICE is the aggregator's http.worker_nice; 0 shows the cost without the lower worker priority.)
# The load generator (a shell loop of curl calls) runs at nice 19: in production the scheduler calls from
# another machine, so its own CPU is not the aggregator's cost.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
job_hosts=${2:-16}
worker_nice=${3:-10}
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target hsns-aggregator >/dev/null

work=$(mktemp -d)
printf 'http:\n  worker_nice: %d\n' "$worker_nice" >"$work/config.yaml"
build/release/aggregator/hsns-aggregator run --config "$work/config.yaml" --listen 127.0.0.1:0 --threads 2 \
  --database "$work/bench.db" --insecure-no-auth --ready-file "$work/ready" 2>"$work/log" &
agg=$!
loader=
cleanup() {
  [ -z "$loader" ] || kill "$loader" 2>/dev/null || true
  kill -TERM $agg 2>/dev/null
  wait $agg 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 200); do [ -f "$work/ready" ] && break; sleep 0.05; done
port=$(cut -d' ' -f2 "$work/ready")
url="http://127.0.0.1:$port"
api() { curl -sf -H 'Content-Type: application/json' "$@"; }

# A cluster of 64 hosts x 8 NPUs; the job's hosts get their NPUs registered and addressed.
api -X POST "$url/api/v1/topology/generate" \
  -d '{"hosts": 64, "npus_per_host": 8, "hosts_per_su": 16, "spines_per_plane": 4}' >/dev/null
subnet=$(api -X POST "$url/api/v1/subnets" -d '{"name": "rdma", "cidr": "198.18.0.0/16"}' | jq -r .id)
hosts=()
for h in $(seq 1 "$job_hosts"); do
  name=$(printf 'host%03d' "$h")
  hosts+=("\"$name\"")
  npus=$(for n in $(seq 0 7); do printf '{"index": %d, "netdev": "eth%d", "mac": "02:00:00:00:%02x:%02x"}\n' \
    "$n" "$n" "$h" "$n"; done | jq -s .)
  api -X PUT "$url/api/v1/hosts/$name" -d "{\"npus\": $npus}" >/dev/null
  for n in $(seq 0 7); do
    api -X POST "$url/api/v1/ports" -d "{\"subnet_id\": \"$subnet\", \"host\": \"$name\", \"npu\": $n}" >/dev/null
  done
done
host_list=$(IFS=,; echo "${hosts[*]}")
body='{"job_name": "load", "hosts": ['"$host_list"'], "framework": "megatron", "algorithm": "ring",
  "model": {"parameters": 7000000000, "layers": 32, "hidden": 4096, "heads": 32, "seq_len": 4096,
            "micro_batch": 1, "global_batch": 1024},
  "parallel": {"tp": 8, "dp": '"$job_hosts"'}}'
start_ns=$(date +%s%N)
api -X POST "$url/api/v1/schedule" -d "$body" >/dev/null
one_ms=$((($(date +%s%N) - start_ns) / 1000000))
api -X DELETE "$url/api/v1/jobs/load" >/dev/null
echo "one schedule call (${job_hosts} hosts x 8 NPUs, TP 8): ${one_ms} ms wall clock"

run_wrk() { wrk -t1 -c16 -d"${duration}s" "$url/healthz" | awk '/Requests\/sec/ {print $2}'; }

echo "== GET /healthz alone (wrk, 1 thread, 16 connections, ${duration}s; aggregator: 2 I/O threads, 2 workers at nice ${worker_nice})"
alone=$(run_wrk)

echo "== GET /healthz while one schedule call is always running"
export url body work
export -f api
nice -n 19 bash -c '
  n=0
  while true; do
    api -X POST "$url/api/v1/schedule" -d "$body" >/dev/null && api -X DELETE "$url/api/v1/jobs/load" >/dev/null
    n=$((n + 1))
    echo "$n" >"$work/schedules"
  done' &
loader=$!
sleep 1
before=$(cat "$work/schedules" 2>/dev/null || echo 0)
loaded=$(run_wrk)
after=$(cat "$work/schedules" 2>/dev/null || echo 0)
kill "$loader" 2>/dev/null || true
wait "$loader" 2>/dev/null || true
loader=

printf 'GET /healthz alone:              %10.0f requests/s\n' "$alone"
printf 'GET /healthz under schedule load: %9.0f requests/s (%d schedule calls completed meanwhile)\n' \
  "$loaded" "$((after - before))"
awk -v a="$loaded" -v b="$alone" 'BEGIN { printf "ratio loaded / alone:            %10.3f\n", a / b }'
