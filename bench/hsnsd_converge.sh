#!/bin/bash
# hsnsd benchmark: time to converge 16 NPU ports from empty, and idle RSS/CPU over a window.
# Runs the real hsnsd in a network namespace it creates (16 veth ports, no route out) against the real
# aggregator bound to the root side of a management veth (198.18.254.1/30). Needs root and ip(8).
# Usage: bench/hsnsd_converge.sh [build dir] [idle seconds]   (defaults: build/release, 60)
# Baselines printed alongside: the duration of an empty (nothing to change) reconcile pass, and the RSS
# of `sleep` (the smallest process this machine runs).
set -euo pipefail
build=${1:-build/release}
idle=${2:-60}
hsnsd=$build/daemon/core/hsnsd
agg=$build/aggregator/hsns-aggregator
[ -x "$hsnsd" ] && [ -x "$agg" ] || { echo "build $hsnsd and $agg first" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
ports=16
ns=hsnsb-$$
link=hsb$$
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  ip netns del "$ns" 2>/dev/null || true
  ip link del "$link" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
wait_until() { # timeout-seconds command...
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do [ "$(date +%s)" -lt "$deadline" ] || return 1; sleep 0.01; done
}

ip netns add "$ns"
ip link add "$link" type veth peer name mgmt0 netns "$ns"
ip addr add 198.18.254.1/30 dev "$link"; ip link set "$link" up
ip -n "$ns" link set lo up
ip -n "$ns" addr add 198.18.254.2/30 dev mgmt0; ip -n "$ns" link set mgmt0 up
npus=""
for i in $(seq 0 $((ports - 1))); do
  ip -n "$ns" link add "npu$i" type veth peer name "npu${i}p"
  ip -n "$ns" link set "npu${i}p" up
  mac=$(ip -n "$ns" -o link show "npu$i" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
  npus="$npus${npus:+,}{\"index\":$i,\"netdev\":\"npu$i\",\"mac\":\"$mac\"}"
done

cat > "$tmp/tokens.yaml" <<EOT
tokens:
  - {name: ops, role: operator, token: bench-operator-token-0123456789}
  - {name: hsnsd, role: agent, token: bench-agent-token-0123456789}
EOT
echo bench-agent-token-0123456789 > "$tmp/agent.token"
echo '{}' > "$tmp/agg.yaml"
"$agg" run --config "$tmp/agg.yaml" --listen 198.18.254.1:0 --database "$tmp/agg.db" \
  --tokens-file "$tmp/tokens.yaml" --ready-file "$tmp/ready" --threads 2 2> "$tmp/agg.log" &
pids+=($!)
wait_until 20 test -s "$tmp/ready"
port=$(awk '{print $2}' "$tmp/ready")
url=http://198.18.254.1:$port
api() { curl -sf -X "$1" -H "Authorization: Bearer bench-operator-token-0123456789" \
  -H "Content-Type: application/json" "$url$2" ${3:+-d "$3"}; }

# The aggregator knows the host and its 16 ports before hsnsd starts: hsnsd converges from empty.
api PUT /api/v1/hosts/bench-host "{\"npus\":[$npus]}" > /dev/null
sa=$(api POST /api/v1/subnets '{"name":"rail-a","cidr":"198.18.64.0/24","mtu":9000}' | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
sb=$(api POST /api/v1/subnets '{"name":"rail-b","cidr":"2001:db8:64::/64","mtu":9000}' | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
for i in $(seq 0 $((ports - 1))); do
  if [ $((i % 2)) = 0 ]; then api POST /api/v1/ports "{\"subnet_id\":\"$sa\",\"host\":\"bench-host\",\"npu\":$i}" > /dev/null
  else api POST /api/v1/ports "{\"subnet_id\":\"$sb\",\"host\":\"bench-host\",\"npu\":$i}" > /dev/null; fi
done

{
  echo "host: bench-host"
  echo "aggregator: {url: \"$url\", token_file: $tmp/agent.token}"
  echo "state_dir: $tmp/state"
  echo "metrics: {listen: \"\"}"
  echo "interval_ms: 1000"
  echo "npus:"
  for i in $(seq 0 $((ports - 1))); do echo "  - {index: $i, netdev: npu$i}"; done
} > "$tmp/hsnsd.yaml"

converged() {
  [ -s "$tmp/state/status.json" ] &&
    [ "$(grep -c '"state": "converged"' "$tmp/state/status.json")" = "$ports" ]
}
t0=$(now_ms)
ip netns exec "$ns" "$hsnsd" run --config "$tmp/hsnsd.yaml" 2> "$tmp/hsnsd.log" &
hpid=$!
pids+=($hpid)
wait_until 30 converged || { cat "$tmp/hsnsd.log"; echo "did not converge" >&2; exit 1; }
t1=$(now_ms)
first_pass=$(sed -n 's/.*"pass_seconds": \([0-9.e-]*\).*/\1/p' "$tmp/state/status.json")
changes=$(sed -n 's/.*"changes": \([0-9]*\).*/\1/p' "$tmp/state/status.json" | head -1)
pass_then=$(sed -n 's/.*"pass": \([0-9]*\).*/\1/p' "$tmp/state/status.json")
wait_until 10 sh -c "[ \$(sed -n 's/.*\"pass\": \([0-9]*\).*/\1/p' $tmp/state/status.json) -ge $((pass_then + 2)) ]"
empty_pass=$(sed -n 's/.*"pass_seconds": \([0-9.e-]*\).*/\1/p' "$tmp/state/status.json")
empty_changes=$(sed -n 's/.*"changes": \([0-9]*\).*/\1/p' "$tmp/state/status.json" | head -1)

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hz=$(getconf CLK_TCK)
sleep 3600 & spid=$!; pids+=($spid)
c0=$(ticks "$hpid"); w0=$(now_ms)
sleep "$idle"   # the measurement window itself
c1=$(ticks "$hpid"); w1=$(now_ms)
cpu=$(awk -v c=$((c1 - c0)) -v hz="$hz" -v ms=$((w1 - w0)) 'BEGIN { printf "%.3f", 100 * c / hz / (ms / 1000) }')

echo "hsnsd benchmark ($ports ports: 8 IPv4 + 8 IPv6, interval 1 s, build $build)"
echo "  converge from empty, hsnsd start to all ports converged: $((t1 - t0)) ms"
echo "  first reconcile pass ($changes netlink/sysctl changes):   $(awk -v s="$first_pass" 'BEGIN{printf "%.1f", s*1000}') ms"
echo "  baseline: empty reconcile pass ($empty_changes changes):  $(awk -v s="$empty_pass" 'BEGIN{printf "%.1f", s*1000}') ms"
echo "  idle RSS after ${idle} s: $(rss_kb "$hpid") kB (peak $(awk '/^VmHWM/ {print $2}' "/proc/$hpid/status") kB); baseline sleep(1): $(rss_kb "$spid") kB"
echo "  idle CPU over ${idle} s: ${cpu}% of one core"
