#!/bin/bash
# hsnsd reporting benchmark (issue 11): the real hsnsd in a network namespace it creates, with 8 NPU ports
# (veths), its flow probe on a ninth veth fed by hsns-roce-gen from a second namespace, and the real
# aggregator on the namespace's loopback. Needs root and ip(8); all traffic stays in the namespaces.
#  1. steady: 8 ports and about 10,000 live flows (3 generators x 3,400 flows, 1 packet per flow per second),
#     harvest and report every second: hsnsd's CPU (% of one core) and RSS over the window, beside the
#     same run without reporting (the flow probe writing its JSON-lines sink): the same-run baseline;
#  2. burst: about 100,000 flows (25 generators x 4,000 flows, one packet each) harvested in one batch and
#     reported: hsnsd's peak memory (VmHWM), beside the same burst without reporting.
# Usage: bench/daemon_report.sh [build dir] [window seconds]   (defaults: build/release, 30)
# BENCH_POLL_EVERY_SECOND=1: read telemetry with interval_ms: 1000 (desired-state poll and reconcile every
# second too: what the bench configured before telemetry_interval_ms, and what an older hsnsd understands).
# PERF_OUT=file: also record a perf profile (499 Hz, call graphs) of the reporting hsnsd over its window
# (PERF_CALL_GRAPH="--call-graph dwarf" for a build without frame pointers).
set -euo pipefail
build=${1:-build/release}
window=${2:-30}
hsnsd=$build/daemon/core/hsnsd
agg=$build/aggregator/hsns-aggregator
gen=$build/lab/roce_gen/hsns-roce-gen
for b in "$hsnsd" "$agg" "$gen"; do [ -x "$b" ] || { echo "build $b first" >&2; exit 1; }; done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
na=hsnsra-$$
nb=hsnsrb-$$
tmp=$(mktemp -d)
pin=/sys/fs/bpf/hsns-bench-report-$$
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  ip netns del "$na" 2>/dev/null || true
  ip netns del "$nb" 2>/dev/null || true
  rm -rf "$tmp" "$pin"
}
trap cleanup EXIT INT TERM

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
wait_until() { # timeout-seconds command...
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do [ "$(date +%s)" -lt "$deadline" ] || return 1; sleep 0.05; done
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# "name ticks" per thread of PID (the harvester and the uploader name their threads)
thread_ticks() {
  for t in /proc/"$1"/task/*; do
    echo "$(cat "$t/comm") $(awk '{print $14 + $15}' "$t/stat")"
  done | awk '{s[$1] += $2} END {for (n in s) print n, s[n]}' | sort
}
status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
metric() { ip netns exec "$nb" curl -sf http://127.0.0.1:9812/metrics | awk -v m="$1" '$1 == m {print $2}'; }
hz=$(getconf CLK_TCK)

ip netns add "$na"; ip netns add "$nb"
ip -n "$na" link set lo up; ip -n "$nb" link set lo up
ip -n "$na" link add va type veth peer name vb netns "$nb"
ip -n "$na" addr add 198.18.70.1/24 dev va; ip -n "$na" link set va up
ip -n "$nb" addr add 198.18.70.2/24 dev vb; ip -n "$nb" link set vb up
for i in $(seq 0 7); do
  ip -n "$nb" link add "npu$i" type veth peer name "npu${i}p"
  ip -n "$nb" link set "npu$i" up; ip -n "$nb" link set "npu${i}p" up
done
wait_until 10 ip netns exec "$na" ping -c1 -W1 198.18.70.2 > /dev/null

cat > "$tmp/tokens.yaml" <<EOT
tokens:
  - {name: hsnsd, role: agent, token: bench-agent-token-0123456789}
EOT
echo bench-agent-token-0123456789 > "$tmp/agent.token"
echo '{}' > "$tmp/agg.yaml"
ip netns exec "$nb" "$agg" run --config "$tmp/agg.yaml" --listen 127.0.0.1:0 --database "$tmp/agg.db" \
  --tokens-file "$tmp/tokens.yaml" --ready-file "$tmp/ready" --threads 2 2> "$tmp/agg.log" &
pids+=($!)
wait_until 20 test -s "$tmp/ready"
port=$(awk '{print $2}' "$tmp/ready")

# write_config REPORT(on|off) TABLE_SIZE HARVEST_MS
write_config() {
  {
    echo "host: bench-report-host"
    echo "aggregator: {url: \"http://127.0.0.1:$port\", token_file: $tmp/agent.token}"
    echo "state_dir: $tmp/state"
    echo "metrics: {listen: \"127.0.0.1:9812\"}"
    # Telemetry read every second; the desired-state poll and reconcile keep their default period.
    [ "${BENCH_POLL_EVERY_SECOND:-0}" = 1 ] && echo "interval_ms: 1000" || echo "telemetry_interval_ms: 1000"
    echo "npus:"
    for i in $(seq 0 7); do echo "  - {index: $i, netdev: npu$i}"; done
    echo "flow_probe:"
    echo "  interval_ms: $3"
    echo "  table_size: $2"
    echo "  pin_dir: $pin"
    echo "  sink: $tmp/flows.jsonl"
    echo "  interfaces: [{name: vb, attach: tc, direction: ingress}]"
    [ "$1" = on ] && echo "report: {interval_ms: 1000}"
    true
  } > "$tmp/hsnsd.yaml"
}

hpid=
start_hsnsd() {
  rm -rf "$pin" "$tmp/flows.jsonl" "$tmp/state/report-spool"
  ip netns exec "$nb" "$hsnsd" run --config "$tmp/hsnsd.yaml" 2> "$tmp/hsnsd.log" &
  hpid=$!
  wait_until 30 sh -c "[ \"\$(ip netns exec $nb curl -sf http://127.0.0.1:9812/metrics | awk '\$1 == \"hsns_flow_probe_up\" {print \$2}')\" = 1 ]" ||
    { cat "$tmp/hsnsd.log"; echo "hsnsd did not start its probe" >&2; exit 1; }
}
stop_hsnsd() { kill -TERM "$hpid"; wait "$hpid" || true; }

# generators N FLOWS PACKETS RATE: N generators in namespace A with seeds of their own (distinct flows).
gpids=()
generators() {
  gpids=()
  for s in $(seq 1 "$1"); do
    ip netns exec "$na" "$gen" --mode udp --src 198.18.70.1 --dst 198.18.70.2 --seed "$((s * 7919))" \
      --flows "$2" --packets "$3" --rate "$4" > /dev/null 2>&1 &
    gpids+=($!)
  done
}
stop_generators() { for p in "${gpids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }

# steady MODE: prints "cpu% rss_kb hwm_kb records sent harvest_ms" (harvest_ms: mean of harvest + write +
# commit over the run, from hsns_flow_probe_harvest_duration_seconds)
steady() {
  write_config "$1" 65536 1000
  start_hsnsd
  generators 3 3400 $((window + 20)) 3400
  sleep 8  # every flow seen at least once, the first reports out
  local c0 w0 c1 w1
  c0=$(ticks "$hpid"); w0=$(now_ms)
  local t0; t0=$(thread_ticks "$hpid")
  local perf_pid=
  if [ "$1" = on ] && [ -n "${PERF_OUT:-}" ]; then
    perf record -q -F 499 ${PERF_CALL_GRAPH:--g} -o "$PERF_OUT" -p "$hpid" -- sleep "$window" > /dev/null 2>&1 &
    perf_pid=$!
  fi
  sleep "$window"
  [ -z "$perf_pid" ] || wait "$perf_pid" || true
  c1=$(ticks "$hpid"); w1=$(now_ms)
  local per_thread
  per_thread=$(join <(echo "$t0") <(thread_ticks "$hpid") |
    awk -v hz="$hz" -v ms=$((w1 - w0)) '{printf "%s%s %.2f%%", (NR > 1 ? ", " : ""), $1, 100 * ($3 - $2) / hz / (ms / 1000)}')
  echo "$1: per thread: $per_thread" >> "$tmp/threads"
  local rss hwm records sent
  rss=$(status_kb "$hpid" VmRSS); hwm=$(status_kb "$hpid" VmHWM)
  records=$(metric hsns_flow_probe_last_harvest_records); sent=$(metric hsns_report_batches_sent_total)
  local hsum hcount
  hsum=$(metric hsns_flow_probe_harvest_duration_seconds_sum); hcount=$(metric hsns_flow_probe_harvest_duration_seconds_count)
  stop_generators
  stop_hsnsd
  awk -v c=$((c1 - c0)) -v hz="$hz" -v ms=$((w1 - w0)) -v rss="$rss" -v hwm="$hwm" -v r="$records" -v s="${sent:-0}" \
    -v hs="${hsum:-0}" -v hc="${hcount:-0}" \
    'BEGIN { printf "%.2f %d %d %d %d %.1f\n", 100 * c / hz / (ms / 1000), rss, hwm, r, s, (hc > 0 ? 1000 * hs / hc : 0) }'
}

# burst MODE: prints "hwm_kb records sent"
burst() {
  write_config "$1" 131072 3000
  start_hsnsd
  generators 25 4000 1 20000
  for p in "${gpids[@]}"; do wait "$p" || true; done
  sleep 8  # two harvests and the upload
  local hwm records sent
  hwm=$(status_kb "$hpid" VmHWM)
  records=$(metric hsns_flow_probe_records_total); sent=$(metric hsns_report_batches_sent_total)
  stop_hsnsd
  echo "$hwm ${records:-0} ${sent:-0}"
}

read -r base_cpu base_rss base_hwm base_rec _ base_hms <<< "$(steady off)"
read -r rep_cpu rep_rss rep_hwm rep_rec rep_sent rep_hms <<< "$(steady on)"
read -r bb_hwm bb_rec _ <<< "$(burst off)"
read -r rb_hwm rb_rec rb_sent <<< "$(burst on)"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
echo "hsnsd reporting benchmark (build $build, window $window s)"
echo "  steady, 8 ports + ~10,000 flows, harvest and report every 1 s:"
echo "    baseline (probe -> JSON-lines sink, no reporting): CPU ${base_cpu}% of a core, RSS ${base_rss} kB (peak ${base_hwm} kB), ${base_rec} flows in the last harvest, ${base_hms} ms per harvest (harvest + write + commit)"
echo "    reporting (probe + telemetry -> spool -> aggregator): CPU ${rep_cpu}% of a core, RSS ${rep_rss} kB (peak ${rep_hwm} kB), ${rep_rec} flows in the last harvest, ${rep_hms} ms per harvest (harvest + spool append + commit), ${rep_sent} batches acknowledged"
echo "    ratio reporting / baseline: CPU $(ratio "$rep_cpu" "$base_cpu"), RSS $(ratio "$rep_rss" "$base_rss")"
sed 's/^off:/    baseline,/; s/^on:/    reporting,/' "$tmp/threads"
echo "  burst, ~100,000 flows in one harvest:"
echo "    baseline (JSON-lines sink): peak VmHWM ${bb_hwm} kB, ${bb_rec} records harvested"
echo "    reporting (spool + upload): peak VmHWM ${rb_hwm} kB, ${rb_rec} records harvested, ${rb_sent} batches acknowledged"
echo "    ratio reporting / baseline: $(ratio "$rb_hwm" "$bb_hwm")"
