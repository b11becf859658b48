#!/usr/bin/env bash
# The main job: installs what is missing, builds hsns (release preset), starts the aggregator and an emulated
# cluster (lab/hsns-lab: 8 hosts x 8 NPUs on 8 rail leaves and 2 spines in network namespaces, one real hsnsd
# per host), creates rail subnets and a port per NPU, places two training jobs with the scheduling API, starts
# their RoCEv2 traffic (hsns-roce-gen: a burst per iteration, ring all-reduce over each rail), forwards a
# loopback port to the dashboard, then injects a timed sequence of faults and says what each should look like:
# link down, a flapping link, a degrading optic, congestion on a rate-limited leaf port, a QoS misconfiguration.
# Ctrl-C (or any exit) tears everything down: processes, namespaces (with their qdiscs), pins, state. docs/demo.md
#
# Usage: scripts/demo.sh [--fast ...] [--hosts N] [--npus M] [--spines S] [--prefix P] [--bin DIR] [--port N]
#                        [--timetable full|short] [--expect-file FILE]                  (as root)
#   --fast            the fast path (scripts/demo-fast.sh: 4 x 4, subnets and ports, no traffic, no faults)
#   --bin DIR         use binaries already built in DIR (aggregator, hsnsd, hsnsctl, hsns-roce-gen, web assets)
#                     and skip installing and building
#   --port N          the dashboard's loopback port (default 8080; 0: no port forward)
#   --timetable T     full (default: faults over about 10 minutes) or short (about 2 minutes, for the test)
#   --expect-file F   also write the expected incidents (JSON) to F once the faults are chosen
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD

# --- workers (run by the demo itself in their own process group) ----------------------------------------
# __telemetry STATE PREFIX: the emulated switches' interface counters as KPIs, as SNMP or gNMI would report
# them: every 5 s, per switch port, if_in_octets_per_s, if_out_octets_per_s, if_out_discards_per_s (the port's
# tx drops plus its egress qdisc's drops: a switch's egress-queue discards) and if_oper_status (IF-MIB).
if [ "${1:-}" = __telemetry ]; then
  state=$2 prefix=$3
  prev=$state/demo/telemetry
  mkdir -p "$prev"
  while :; do
    now_ms=$(date +%s%3N)
    batch=$state/demo/telemetry-batch.json
    : >"$batch.lines"
    for n in $(ip netns list | awk '{print $1}' | grep -E "^$prefix-(leaf|spine)[0-9]+$" | sort -V); do
      links=$(ip netns exec "$n" ip -s -j link show 2>/dev/null) || continue
      qdiscs=$(ip netns exec "$n" tc -s -j qdisc show 2>/dev/null) || continue
      # Per port: octets, the port's tx drops plus its root qdisc's drops, and the operational state.
      cur=$(jq -n --argjson l "$links" --argjson q "$qdiscs" --argjson t "$now_ms" '
        {t: $t, ports: ([$l[] | select(.ifname != "lo" and .ifname != "br0" and .ifname != "mgmt0") | .ifname as $p
          | {key: $p, value: {in: .stats64.rx.bytes, out: .stats64.tx.bytes,
              drops: (.stats64.tx.dropped + ([$q[] | select(.root == true and .dev == $p) | .drops // 0] | add // 0)),
              oper: (if .operstate == "UP" then 1 elif .operstate == "LOWERLAYERDOWN" then 7 else 2 end)}}]
          | from_entries)}')
      if [ -f "$prev/$n.json" ]; then
        jq -r --slurpfile p "$prev/$n.json" --arg sw "$n" '
          ($p[0]) as $old | ((.t - $old.t) / 1000) as $dt | select($dt > 0) | .t as $t
          | .ports | to_entries[] | select($old.ports[.key] != null) | .key as $port | .value as $v
          | $old.ports[$port] as $o
          | ({metric: "if_oper_status", value: $v.oper},
             (select($v.in >= $o.in and $v.out >= $o.out and $v.drops >= $o.drops)
              | {metric: "if_in_octets_per_s", value: (($v.in - $o.in) / $dt)},
                {metric: "if_out_octets_per_s", value: (($v.out - $o.out) / $dt)},
                {metric: "if_out_discards_per_s", value: (($v.drops - $o.drops) / $dt)}))
          | {entity: ($sw + "/" + $port), metric, ts: $t, value} | tojson' <<<"$cur" >>"$batch.lines" || true
      fi
      printf '%s\n' "$cur" >"$prev/$n.json"
    done
    if [ -s "$batch.lines" ]; then
      jq -s '{samples: .}' "$batch.lines" >"$batch"
      lab/hsns-lab api --prefix "$prefix" --state "$state" /api/v1/kpis -X POST -H 'Content-Type: application/json' \
        --data-binary @"$batch" -o /dev/null -w '' 2>/dev/null || true
    fi
    sleep 5
  done
fi
# __optics STATE PREFIX ENTITY: replays lab/demo/optics-degrading.csv (a module's diagnostics every 2 s) as the
# KPIs of ENTITY's module, at the real pace, stamped with the time of the replay.
if [ "${1:-}" = __optics ]; then
  state=$2 prefix=$3 entity=$4
  start=$(date +%s%3N)
  grep -v '^#' lab/demo/optics-degrading.csv | tail -n +2 | while IFS=, read -r t rx tx temp; do
    due=$((start + t * 1000))
    while [ "$(date +%s%3N)" -lt "$due" ]; do sleep 0.2; done
    now=$(date +%s%3N)
    body=$(jq -cn --arg e "$entity" --argjson t "$now" --argjson rx "$rx" --argjson tx "$tx" --argjson c "$temp" \
      '{samples: [{entity: $e, metric: "rx_power_dbm", ts: $t, value: $rx},
                  {entity: $e, metric: "tx_power_dbm", ts: $t, value: $tx},
                  {entity: $e, metric: "module_temperature_celsius", ts: $t, value: $c}]}')
    lab/hsns-lab api --prefix "$prefix" --state "$state" /api/v1/kpis -X POST -H 'Content-Type: application/json' \
      --data-binary "$body" -o /dev/null 2>/dev/null || true
  done
  exit 0
fi

hosts=8
npus=8
spines=2
prefix=demo
bin=
port=8080
timetable=full
expect_file=
if [ "$(id -u)" != 0 ]; then
  echo "demo.sh: the emulated cluster needs root (network namespaces, eBPF); run: sudo $0 $*" >&2
  exit 1
fi
[ "${1:-}" = --fast ] && { shift; exec scripts/demo-fast.sh "$@"; }
while [ $# -gt 0 ]; do
  case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --npus) npus=$2; shift 2 ;;
    --spines) spines=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --timetable) timetable=$2; shift 2 ;;
    --expect-file) expect_file=$2; shift 2 ;;
    *) sed -n '10,17p' "$0"; exit 64 ;;
  esac
done
case $timetable in full | short) ;; *) echo "demo.sh: --timetable is full or short" >&2; exit 64 ;; esac
if [ "$hosts" -lt 4 ] || [ "$npus" -lt 6 ] || [ $((hosts % 2)) != 0 ]; then
  echo "demo.sh: the faults need at least 4 hosts (an even number) and 6 NPUs per host" >&2
  exit 64
fi

if [ -z "$bin" ]; then
  scripts/build-release.sh hsns-aggregator hsnsd hsnsctl hsns_web hsns-roce-gen
  bin=build/release
fi
case $bin in /*) ;; *) bin=$here/$bin ;; esac
for tool in jq socat logger tc unshare; do
  command -v "$tool" >/dev/null || { echo "demo.sh: $tool is required (scripts/install-deps.sh)" >&2; exit 1; }
done
[ -x "$bin/lab/roce_gen/hsns-roce-gen" ] || { echo "demo.sh: no $bin/lab/roce_gen/hsns-roce-gen (build it)" >&2; exit 1; }

state=$here/build/lab-$prefix
lab() { local c=$1; shift; lab/hsns-lab "$c" --prefix "$prefix" --state "$state" "$@"; }
say() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
workers=()
start_worker() {  # a background job in its own process group, so that the teardown stops it with its children
  setsid "$@" </dev/null >>"$state/demo/workers.log" 2>&1 &
  workers+=($!)
}
teardown() {
  trap - EXIT INT TERM
  local pid
  echo
  say "demo: stopping traffic, telemetry and the port forward"
  for pid in "${workers[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${workers[@]}"; do wait "$pid" 2>/dev/null || true; done
  say "demo: tearing down the emulated cluster"
  lab down
  say "demo stopped"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "starting the emulated cluster: $hosts hosts x $npus NPUs, $npus rail leaves, $spines spines"
lab up --hosts "$hosts" --npus "$npus" --spines "$spines" --bin "$bin" --interval-ms 3000
mkdir -p "$state/demo"
registered() {
  [ "$(lab api /api/v1/hosts 2>/dev/null | jq --arg p "$prefix-h" '[.items[] | select(.name | startswith($p))] | length')" = "$hosts" ]
}
for _ in $(seq 300); do registered && break; sleep 0.1; done
registered || { echo "demo: the daemons did not register within 30 s; see $state/h*/hsnsd.log" >&2; exit 1; }

# Rail subnets (even NPUs on one, odd NPUs on the other), one port per NPU.
say "creating the rail subnets and $((hosts * npus)) ports"
subnet() {  # POST /api/v1/subnets; prints the new subnet's id
  lab api /api/v1/subnets -X POST -H 'Content-Type: application/json' \
    --data "{\"name\":\"$1\",\"cidr\":\"$2\",\"mtu\":9000}" | jq -er .id
}
even=$(subnet rail-even 198.18.0.0/24) odd=$(subnet rail-odd 198.18.1.0/24)
# One curl for every port (POST /api/v1/ports each): 64 hsnsctl runs take long on a busy machine.
requests=()
for ((i = 0; i < hosts; i++)); do
  for ((j = 0; j < npus; j++)); do
    if ((j % 2 == 0)); then sid=$even; else sid=$odd; fi
    [ ${#requests[@]} = 0 ] || requests+=(--next)
    requests+=(-sS -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $(cat "$state/operator.token")"
      -H 'Content-Type: application/json' --data "{\"subnet_id\":\"$sid\",\"host\":\"$prefix-h$i\",\"npu\":$j,\"name\":\"h$i-npu$j\"}"
      http://198.19.0.1:8080/api/v1/ports)
  done
done
codes=$(lab exec mgmt -- curl "${requests[@]}")
[ "$(grep -c '^201$' <<<"$codes")" = $((hosts * npus)) ] || { echo "demo: creating the ports failed: $codes" >&2; exit 1; }
lab wait --timeout 120

# The host links come from LLDP (each hsnsd hears its leaf port); scheduling and root cause need them.
want_links=$((hosts * npus + npus * spines))
links() { lab api /api/v1/topology 2>/dev/null | jq '.links | length' 2>/dev/null || echo 0; }
for _ in $(seq 120); do [ "$(links)" = "$want_links" ] && break; sleep 1; done
[ "$(links)" = "$want_links" ] || { echo "demo: the topology has $(links) links, not $want_links, after 120 s" >&2; exit 1; }
say "topology complete: $want_links links (host links learnt over LLDP)"

# Two jobs placed by the scheduling API (POST /api/v1/schedule: ranks, NPU addresses, route plan, launcher files):
# a GPT-style model, TP inside a host, DP across hosts (rail by rail); job-a on the first half of the hosts,
# job-b on the second half. A busy aggregator (503) is asked again.
dp=$((hosts / 2))
token=$(cat "$state/operator.token")
schedule() {  # JOB FIRST_HOST
  local hl body out code
  hl=$(for ((i = $2; i < $2 + dp; i++)); do printf '"%s-h%d",' "$prefix" "$i"; done)
  body="{\"job_name\":\"$1\",\"hosts\":[${hl%,}],\"algorithm\":\"hierarchical\",
    \"model\":{\"parameters\":1300000000,\"layers\":24,\"hidden\":2048,\"heads\":16,\"seq_len\":2048,
      \"micro_batch\":1,\"global_batch\":$((dp * 8))},\"parallel\":{\"tp\":$npus,\"dp\":$dp}}"
  for _ in $(seq 40); do
    out=$(lab exec mgmt -- curl -sS --max-time 300 -w '\n%{http_code}' -X POST -H "Authorization: Bearer $token" \
      -H 'Content-Type: application/json' --data "$body" http://198.19.0.1:8080/api/v1/schedule 2>&1) || true
    code=$(tail -n 1 <<<"$out")
    [ "$code" = 201 ] && { sed '$d' <<<"$out" >"$state/demo/$1-schedule.json"; return 0; }
    [ "$code" = 503 ] || break
    sleep 2
  done
  echo "demo: scheduling $1 failed: $out" >&2
  return 1
}
schedule job-a 0
schedule job-b "$dp"
for job in job-a job-b; do
  lab api "/api/v1/jobs/$job" >"$state/demo/$job.json"
  jq -e '.ranks | length > 0' "$state/demo/$job.json" >/dev/null
  say "scheduled $job on $(jq -r '[.ranks[].host] | unique | join(" ")' "$state/demo/$job.json")"
done

# Training-like traffic: every rank sends a burst each iteration (1 s) to the next host of its DP ring on its
# own rail (ring all-reduce of the gradients; tensor parallelism stays inside a host).
traffic=0
for job in job-a job-b; do
  while IFS=$'\t' read -r src_host src dst rank; do
    start_worker ip netns exec "$src_host" "$bin/lab/roce_gen/hsns-roce-gen" --src "$src" --dst "$dst" \
      --flows 2 --packets 50 --rate 4000 --seed "$rank" --iterations 0 --period-ms 1000
    traffic=$((traffic + 1))
  done < <(jq -r '.ranks | group_by(.npu)[] | sort_by(.rank) as $r | range($r | length) as $k
      | [$r[$k].host, $r[$k].ip, $r[($k + 1) % ($r | length)].ip, $r[$k].rank] | @tsv' \
      "$state/demo/$job.json")
done
say "traffic: $traffic RoCEv2 senders (a burst of 100 packets per iteration each)"
start_worker "$0" __telemetry "$state" "$prefix"

if [ "$port" != 0 ]; then
  start_worker socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" \
    "EXEC:ip netns exec $prefix-mgmt socat STDIO TCP\:198.19.0.1\:8080"
fi

# --- The faults ----------------------------------------------------------------------------------------
# Targets: distinct hosts and rails, each on a rank of a known job.
rank_host() { jq -r --argjson k "$2" '[.ranks[].host] | unique | .[$k]' "$state/demo/$1.json"; }
host_index() { echo "${1##*-h}"; }
a0=$(rank_host job-a 0) a1=$(rank_host job-a 1) a2=$(rank_host job-a 2)
b0=$(rank_host job-b 0) b1=$(rank_host job-b 1)
ia0=$(host_index "$a0") ia1=$(host_index "$a1") ia2=$(host_index "$a2") ib0=$(host_index "$b0") ib1=$(host_index "$b1")
down_leaf=1 flap_leaf=2 optic_npu=3 congest_leaf=4 qos_leaf=5

if [ "$timetable" = full ]; then
  t_down=60 down_for=90 t_flap=180 flap_down=5 flap_up=10 t_optic=270 t_congest=420 congest_for=120 t_qos=540 t_end=600
else
  t_down=5 down_for=30 t_flap=10 flap_down=3 flap_up=4 t_optic=15 t_congest=20 congest_for=60 t_qos=25 t_end=120
fi

expect=$(jq -n --arg p "$prefix" \
  --arg a0 "$a0" --arg a1 "$a1" --arg a2 "$a2" --arg b0 "$b0" --arg b1 "$b1" \
  --arg ia0 "$ia0" --arg ia1 "$ia1" --arg ib0 "$ib0" --arg ib1 "$ib1" \
  --argjson dl $down_leaf --argjson fl $flap_leaf --argjson on $optic_npu --argjson cl $congest_leaf --argjson ql $qos_leaf '
  [{fault: "link down", fault_type: "link_down", kind: "port", entity: "\($p)-leaf\($dl)/h\($ia0)", jobs: ["job-a"]},
   {fault: "flapping link", fault_type: "link_flapping", kind: "link",
    entity: "link:\($b0)/npu\($fl)|\($p)-leaf\($fl)/h\($ib0)", jobs: ["job-b"]},
   {fault: "degrading optic", fault_type: "optical_power_out_of_range", kind: "link",
    entity: "link:\($a1)/npu\($on)|\($p)-leaf\($on)/h\($ia1)", jobs: ["job-a"]},
   {fault: "congestion", fault_type: "buffer_drops", kind: "port", entity: "\($p)-leaf\($cl)/h\($ib1)", jobs: ["job-b"]},
   {fault: "QoS misconfiguration", fault_type: "qos_config_drift", kind: "switch", entity: "\($p)-leaf\($ql)",
    jobs: ["job-a", "job-b"]}]')
echo "$expect" >"$state/demo/expected-incidents.json"
[ -n "$expect_file" ] && echo "$expect" >"$expect_file"

cat <<EOT

hsns demo is running: $hosts hosts x $npus NPUs ($prefix-h0..$prefix-h$((hosts - 1))), rail leaves $prefix-leaf0..$prefix-leaf$((npus - 1)),
spines $prefix-spine0..$prefix-spine$((spines - 1)); job-a on $(jq -r '[.ranks[].host] | unique | join(",")' "$state/demo/job-a.json"), job-b on $(jq -r '[.ranks[].host] | unique | join(",")' "$state/demo/job-b.json").
  dashboard   $([ "$port" != 0 ] && echo "http://127.0.0.1:$port/ (log in with the token in $state/operator.token)" || echo "no port forward (--port 0)")
  aggregator  http://198.19.0.1:8080 inside namespace $prefix-mgmt; syslog UDP 198.19.0.1:514
  incidents   lab/hsns-lab api --prefix $prefix /api/v1/incidents | jq .
  logs        $state/aggregator.log, $state/h<i>/hsnsd.log, $state/demo/workers.log

Fault timetable ($timetable; seconds from now) and what each should look like:
  +$t_down s  link down: $prefix-leaf$down_leaf port h$ia0 (to $a0 npu$down_leaf) goes down for $down_for s; the leaf logs it.
          -> incident, fault link_down, root cause port $prefix-leaf$down_leaf/h$ia0, affected job-a; resolved after it is back.
  +$t_flap s  flapping link: $prefix-leaf$flap_leaf port h$ib0 (to $b0 npu$flap_leaf) goes down 3 times ($flap_down s down, $flap_up s up).
          -> incident, fault link_flapping, root cause the link $b0/npu$flap_leaf - $prefix-leaf$flap_leaf/h$ib0 (its cable or optics), job-b.
  +$t_optic s  degrading optic: $a1/npu$optic_npu's module diagnostics (lab/demo/optics-degrading.csv) fall below -10 dBm rx.
          -> after 30 s below: incident, fault optical_power_out_of_range, root cause the link $a1/npu$optic_npu - $prefix-leaf$optic_npu/h$ia1
             (low receive power: the fiber or the far end's laser), job-a.
  +$t_congest s  congestion: $prefix-leaf$congest_leaf port h$ib1 (to $b1) RoCEv2 rate-limited to 32 kbit/s for $congest_for s; its queue drops.
          -> after 30 s of drops: incident, fault buffer_drops, root cause port $prefix-leaf$congest_leaf/h$ib1, affected job-b.
  +$t_qos s  QoS misconfiguration: $prefix-leaf$qos_leaf port h$ia2 (to $a2) gets one best-effort egress class (RoCE loses its queue); the leaf logs the mismatch.
          -> incident, fault qos_config_drift, root cause switch $prefix-leaf$qos_leaf, affected job-a and job-b (both use the leaf).

Press Ctrl-C to stop (removes every process, namespace, qdisc, pin and the state directory).
EOT

t0=$SECONDS
at() { local due=$((t0 + $1)); while [ $SECONDS -lt "$due" ]; do sleep 0.5; done; }
leaf_log() { lab syslog --app "$2" --severity "$3" "leaf$1" -- "$4"; }
port_down() { lab exec "leaf$1" -- ip link set "h$2" down; leaf_log "$1" IFNET warning "Interface h$2 has turned into DOWN state."; }
port_up() { lab exec "leaf$1" -- ip link set "h$2" up; leaf_log "$1" IFNET notice "Interface h$2 has turned into UP state."; }

events=()
events+=("$t_down down")
events+=("$((t_down + down_for)) up")
for c in 0 1 2; do
  events+=("$((t_flap + c * (flap_down + flap_up))) flap_down")
  events+=("$((t_flap + c * (flap_down + flap_up) + flap_down)) flap_up")
done
events+=("$t_optic optic")
events+=("$t_congest congest")
events+=("$((t_congest + congest_for)) uncongest")
events+=("$t_qos qos")
while read -r when what; do
  at "$when"
  case $what in
    down) say "fault: link down $prefix-leaf$down_leaf/h$ia0"; port_down $down_leaf "$ia0" ;;
    up) say "repair: $prefix-leaf$down_leaf/h$ia0 up again"; port_up $down_leaf "$ia0" ;;
    flap_down) say "fault: $prefix-leaf$flap_leaf/h$ib0 flaps down"; port_down $flap_leaf "$ib0" ;;
    flap_up) port_up $flap_leaf "$ib0" ;;
    optic) say "fault: $a1/npu$optic_npu's optic degrades (replaying its diagnostics)"
      start_worker "$0" __optics "$state" "$prefix" "$a1/npu$optic_npu" ;;
    congest) say "fault: congestion on $prefix-leaf$congest_leaf/h$ib1 (its RoCEv2 traffic through tbf 32 kbit/s)"
      # Only RoCEv2 (UDP 4791) is rate-limited: an htb root sends everything else (ARP above all, whose loss
      # would stop the senders and with them the drops) to an unshaped class; htb counts its classes' drops.
      lab exec "leaf$congest_leaf" -- tc qdisc add dev "h$ib1" root handle 1: htb default 10
      lab exec "leaf$congest_leaf" -- tc class add dev "h$ib1" parent 1: classid 1:10 htb rate 10gbit quantum 1514
      lab exec "leaf$congest_leaf" -- tc class add dev "h$ib1" parent 1: classid 1:20 htb rate 32kbit ceil 32kbit \
        quantum 1514
      lab exec "leaf$congest_leaf" -- tc qdisc add dev "h$ib1" parent 1:20 handle 20: tbf rate 32kbit burst 4kb limit 8kb
      lab exec "leaf$congest_leaf" -- tc filter add dev "h$ib1" parent 1: protocol ip prio 1 u32 \
        match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:20 ;;
    uncongest) say "repair: rate limit on $prefix-leaf$congest_leaf/h$ib1 removed"
      lab exec "leaf$congest_leaf" -- tc qdisc del dev "h$ib1" root ;;
    qos) say "fault: QoS misconfiguration on $prefix-leaf$qos_leaf/h$ia2 (one best-effort class, no RoCE queue)"
      lab exec "leaf$qos_leaf" -- tc qdisc add dev "h$ia2" root handle 1: htb default 10
      lab exec "leaf$qos_leaf" -- tc class add dev "h$ia2" parent 1: classid 1:10 htb rate 10gbit quantum 1514
      leaf_log "$qos_leaf" QOS warning "QoS DSCP map mismatch on interface h$ia2: DSCP 26 (RoCE, lossless priority 3) mapped to the default class" ;;
  esac
done < <(printf '%s\n' "${events[@]}" | sort -n -s -k1,1)
at "$t_end"
say "every fault of the timetable has been injected; incidents: lab/hsns-lab api --prefix $prefix /api/v1/incidents | jq ."
while :; do sleep 1; done
