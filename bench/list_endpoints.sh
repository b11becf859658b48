#!/usr/bin/env bash
# List endpoints near a static server, and desired-state fan-out (issue 10 figures), one run:
#  a. GET /api/v1/ports with 1,000 ports (125 hosts x 8 NPUs) against nginx serving the very same body as
#     a static file (nginx-light, started here on loopback with its own prefix and configuration), with
#     the same wrk settings; then If-None-Match -> 304 on the ports list against GET /healthz;
#  b. 10,000 simulated node daemons polling their desired state with If-None-Match every 5 s (2,000
#     requests/s, one load client, kept-alive connections): aggregator CPU, p99 of the 304 path, and the
#     time from a subnet rename to the last host seeing it (hsns_bench_desired_fanout).
# Both sides get 2 threads/workers. The database lives in /dev/shm (tmpfs), as a fast disk would.
# Usage: bench/list_endpoints.sh [DURATION_SECONDS=10] [HOSTS=10000]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
fanout_hosts=${2:-10000}
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target hsns-aggregator hsns_bench_port_create \
  hsns_bench_desired_fanout >/dev/null

work=$(mktemp -d -p /dev/shm hsns-bench-lists.XXXXXX)
chmod 755 "$work"
token=bench-token-0123456789abcdef
printf 'tokens:\n  - {name: bench, role: operator, token: %s}\n' "$token" >"$work/tokens.yaml"
agg=""
nginx_pid=""
cleanup() {
  [ -n "$agg" ] && kill -TERM "$agg" 2>/dev/null && wait "$agg" 2>/dev/null
  [ -n "$nginx_pid" ] && kill -QUIT "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

start_aggregator() {  # $1: database file
  rm -f "$work/ready"
  build/release/aggregator/hsns-aggregator run --config /dev/null --listen 127.0.0.1:0 --threads 2 \
    --database "$1" --tokens-file "$work/tokens.yaml" --ready-file "$work/ready" 2>>"$work/log" &
  agg=$!
  for _ in $(seq 200); do [ -f "$work/ready" ] && break; sleep 0.05; done
  url="http://127.0.0.1:$(cut -d' ' -f2 "$work/ready")"
}
stop_aggregator() {
  kill -TERM "$agg"
  wait "$agg" || true
  agg=""
}
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
rps() {  # wrk requests/s of: URL [extra wrk args...]
  wrk -t2 -c64 -d"${duration}s" "$@" | awk '/Requests\/sec/ {print $2}'
}
auth=(-H "Authorization: Bearer $token")

echo "== a. GET /api/v1/ports (1,000 ports) against nginx with the same body (wrk -t2 -c64, ${duration}s each)"
start_aggregator "$work/ports.db"
build/release/bench/hsns_bench_port_create "$url" "$token" 125 >/dev/null
mkdir -p "$work/nginx/www" "$work/nginx/logs"
curl -sf "${auth[@]}" "$url/api/v1/ports" >"$work/nginx/www/ports.json"
bytes=$(wc -c <"$work/nginx/www/ports.json")
count=$(jq '.items | length' "$work/nginx/www/ports.json")
etag=$(curl -sf -o /dev/null -D - "${auth[@]}" "$url/api/v1/ports" | awk 'tolower($1) == "etag:" {print $2}' | tr -d '\r')
chmod -R a+rX "$work/nginx"
nginx_port=$(free_port)
cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  default_type application/json;
  client_body_temp_path $work/nginx/tmp_body;
  proxy_temp_path $work/nginx/tmp_proxy;
  fastcgi_temp_path $work/nginx/tmp_fastcgi;
  uwsgi_temp_path $work/nginx/tmp_uwsgi;
  scgi_temp_path $work/nginx/tmp_scgi;
  server {
    listen 127.0.0.1:$nginx_port;
    root $work/nginx/www;
  }
}
CONF
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$nginx_port/ports.json" && break; sleep 0.05; done
cmp -s <(curl -sf "http://127.0.0.1:$nginx_port/ports.json") "$work/nginx/www/ports.json" ||
  { echo "nginx does not serve the body" >&2; exit 1; }
echo "body: $count ports, $bytes bytes; ETag $etag"
nginx_rps=$(rps "http://127.0.0.1:$nginx_port/ports.json")
ports_rps=$(rps "${auth[@]}" "$url/api/v1/ports")
ports_304_rps=$(rps "${auth[@]}" -H "If-None-Match: $etag" "$url/api/v1/ports")
health_rps=$(rps "$url/healthz")
printf 'nginx static file (same body):              %10.0f requests/s\n' "$nginx_rps"
printf 'GET /api/v1/ports (1,000 ports):            %10.0f requests/s\n' "$ports_rps"
awk -v a="$ports_rps" -v b="$nginx_rps" 'BEGIN { printf "ratio ports / nginx:                        %10.2f (target >= 0.5)\n", a / b }'
printf 'GET /api/v1/ports, If-None-Match -> 304:    %10.0f requests/s\n' "$ports_304_rps"
printf 'baseline GET /healthz:                      %10.0f requests/s\n' "$health_rps"
awk -v a="$ports_304_rps" -v b="$health_rps" 'BEGIN { printf "ratio 304 / healthz:                        %10.2f\n", a / b }'
kill -QUIT "$nginx_pid"
wait "$nginx_pid" || true
nginx_pid=""
stop_aggregator

echo "== b. ${fanout_hosts} agents polling desired state with If-None-Match every 5 s"
start_aggregator "$work/fanout.db"
build/release/bench/hsns_bench_desired_fanout "$url" "$token" "$agg" "$fanout_hosts" 5 20 8
stop_aggregator
