#!/usr/bin/env bash
# Acceptance test of hsnsd on the emulated cluster (lab/hsns-lab): 3 hosts x 2 NPU ports, 2 subnets, the real
# aggregator and one real hsnsd per host namespace with isolation on.
#   A = 198.18.0.0/24: h0/npu0 .10, h1/npu0 .11, h2/npu0 .12, h2/npu1 .13 (h2 has two ports in A)
#   B = 198.18.1.0/24: h0/npu1 .10, h1/npu1 .11
# Checks: (a) same-subnet ICMP and UDP; (b) cross-subnet traffic fails and the sender port's isolation drop
# counter rises, also on a host with ports in both subnets for traffic sourced from one subnet's address to the
# other subnet (the port's routing table ends in an unreachable default route); (c) on h2 each source address leaves through its own port; (d) a hand-deleted address is
# restored and reported as drift within one interval; (e) with the aggregator killed every address stays, and
# after `hsns-lab restart-aggregator` the daemons resynchronise (a port created after the restart is applied).
# Usage: lab_acceptance_test.sh SOURCE_DIR BUILD_DIR UDP_PROBE       (root; exit 77 = skipped)
set -euo pipefail

src=${1:?source dir}
build=${2:?build dir}
probe=${3:?udp_probe binary}
interval_ms=1000

if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root (network namespaces)"; exit 77; fi
for tool in ip ping curl jq; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
for b in aggregator/hsns-aggregator daemon/core/hsnsd cli/hsnsctl; do
  [ -x "$build/$b" ] || { echo "FAIL: $build/$b is missing (build hsns-aggregator hsnsd hsnsctl)"; exit 1; }
done

labtool=$src/lab/hsns-lab
# shellcheck source=lab_teardown.sh
. "$src/tests/lab/lab_teardown.sh"
# A run killed without its teardown (ctest's timeout sends SIGKILL) leaves lt<pid>-* behind: remove those whose
# test process is gone.
for stale in $(ip netns list | awk '{print $1}' | sed -n 's/^\(lt[0-9]*\)-mgmt$/\1/p'); do
  if ! grep -qs lab_acceptance_test "/proc/${stale#lt}/cmdline"; then
    echo "removing the lab of an earlier run that did not tear down: $stale"
    "$labtool" down --prefix "$stale" --state "/tmp/hsns-lab-test.$stale" || true
    rm -rf "/tmp/hsns-lab-test.$stale.scratch"
  fi
done
prefix=lt$$            # unique per run: namespaces lt<pid>-h0 ..., pins /sys/fs/bpf/hsns-lab/lt<pid>
state=/tmp/hsns-lab-test.$prefix
scratch=$state.scratch
rm -rf "$scratch" && mkdir -p "$scratch"
lab() { local c=$1; shift; "$labtool" "$c" --prefix "$prefix" --state "$state" --bin "$build" "$@"; }
inhost() { local h=$1; shift; "$labtool" exec --prefix "$prefix" "$h" -- "$@"; }
ctl() { lab ctl -- "$@"; }
api() { lab api "$@"; }
now_ms() { date +%s%3N; }
step() { echo; echo "=== $*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ $rc != 0 ] && [ -d "$state" ]; then
    echo "--- diagnostics (exit $rc)" >&2
    lab status >&2 || true
    api /api/v1/agents >&2 2>/dev/null || true
    echo "--- aggregator.log (tail)" >&2
    tail -n 20 "$state/aggregator.log" >&2 2>/dev/null || true
    for d in "$state"/h*/; do
      echo "--- ${d}hsnsd.log (tail)" >&2
      tail -n 30 "${d}hsnsd.log" >&2 2>/dev/null || true
    done
  fi
  lab_teardown_checked "$prefix" "$state" || rc=1
  rm -rf "$scratch"
  [ $rc = 0 ] && echo "PASS"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Poll: retry "$@" every 0.1 s until it succeeds or $1 milliseconds pass.
until_ms() {
  local limit=$1 start
  shift
  start=$(now_ms)
  while ! "$@" >/dev/null 2>&1; do
    [ $(($(now_ms) - start)) -lt "$limit" ] || return 1
    sleep 0.1
  done
}

# host npu address subnet: the ports (same layout as the header comment)
ports_a=("h0 0 198.18.0.10" "h1 0 198.18.0.11" "h2 0 198.18.0.12" "h2 1 198.18.0.13")
ports_b=("h0 1 198.18.1.10" "h1 1 198.18.1.11")

has_addr() { inhost "$1" ip -4 -o addr show dev "$2" | grep -qF " $3/24 "; }
no_addr() { ! has_addr "$@"; }
ns_empty() { [ -z "$(ip netns pids "$1")" ]; }
tx_packets() { inhost "$1" cat "/sys/class/net/$2/statistics/tx_packets"; }
port_field() {  # host netdev jq-field: a field of that port in the agent's last status report
  api "/api/v1/agents/$prefix-$1/status" | jq -r --arg d "$2" ".report.ports[] | select(.netdev == \$d) | $3"
}
dropped() { local v; v=$(port_field "$1" "$2" '.isolation_dropped_packets // 0'); echo "${v:-0}"; }
dropped_at_least() { [ "$(dropped "$1" "$2")" -ge "$3" ]; }
in_sync() { lab wait --timeout "${1:-30}" >/dev/null; }

ping_ok() {  # host src dst: one echo answered within 5 s
  inhost "$1" ping -n -q -c 1 -w 5 -I "$2" "$3" >/dev/null || fail "ping $2 -> $3 (from $1) got no answer"
}

udp_ok() {  # srchost src dsthost dst: 5 datagrams from src arrive at dst, all with source address src
  local out="$scratch/udp.$RANDOM" ready="$scratch/ready.$RANDOM" pid
  inhost "$3" "$probe" recv "$4" 4791 5 5000 "$ready" >"$out" &
  pid=$!
  until_ms 5000 test -f "$ready" || fail "UDP receiver on $4 did not start"
  inhost "$1" "$probe" send "$2" "$4" 4791 5 "hello-from-$2" || fail "UDP send $2 -> $4 failed"
  wait "$pid" || fail "UDP $2 -> $4: not every datagram arrived ($(wc -l <"$out") of 5)"
  [ "$(grep -c "^$2 hello-from-$2 " "$out")" = 5 ] || fail "UDP $2 -> $4: unexpected sources: $(cat "$out")"
  rm -f "$out" "$ready"
}

step "up: 3 hosts x 2 NPUs, interval ${interval_ms} ms (prefix $prefix)"
lab up --hosts 3 --npus 2 --interval-ms "$interval_ms"
hosts_registered() {
  [ "$(api /api/v1/hosts | jq --arg p "$prefix-h" '[.items[] | select(.name | startswith($p))] | length')" = 3 ]
}
until_ms 20000 hosts_registered || fail "the 3 daemons did not register their hosts"

step "subnets A, B and 6 ports through the aggregator"
ctl subnets create --name A --cidr 198.18.0.0/24 >/dev/null
ctl subnets create --name B --cidr 198.18.1.0/24 >/dev/null
for p in "${ports_a[@]/%/ A}" "${ports_b[@]/%/ B}"; do
  read -r h n a s <<<"$p"
  ctl ports create --subnet "$s" --host "$prefix-$h" --npu "$n" --ip "$a" --name "$h-npu$n" >/dev/null
done
in_sync 30 || fail "daemons not in sync"
for p in "${ports_a[@]}" "${ports_b[@]}"; do
  read -r h n a <<<"$p"
  has_addr "$h" "npu$n" "$a" || fail "$a is not on $h/npu$n"
done
echo "all 3 daemons in sync, 6 addresses applied"

no_ping() {  # host src dst: no echo answered (the kernel refuses to route it, or nothing comes back)
  if inhost "$1" ping -n -q -c 1 -w 2 -I "$2" "$3" >/dev/null 2>&1; then
    fail "ping $2 -> $3 (from $1) was answered"
  fi
}

no_udp() {  # srchost src dsthost dst: none of 5 datagrams from src arrives at dst
  local out="$scratch/udp.$RANDOM" ready="$scratch/ready.$RANDOM" pid
  inhost "$3" "$probe" recv "$4" 4791 1 2000 "$ready" >"$out" 2>/dev/null &
  pid=$!
  until_ms 5000 test -f "$ready" || fail "UDP receiver on $4 did not start"
  inhost "$1" "$probe" send "$2" "$4" 4791 5 "cross-from-$2" >/dev/null 2>&1 || true
  if wait "$pid"; then fail "UDP $2 -> $4 (from $1) arrived: $(cat "$out")"; fi
  rm -f "$out" "$ready"
}

step "(a) same subnet: ICMP and UDP between every pair of hosts"
for group in a b; do
  declare -n members="ports_$group"
  for p in "${members[@]}"; do
    for q in "${members[@]}"; do
      read -r h1 _ a1 <<<"$p"
      read -r h2 _ a2 <<<"$q"
      [ "$h1" = "$h2" ] && continue
      ping_ok "$h1" "$a1" "$a2"
      udp_ok "$h1" "$a1" "$h2" "$a2"
      echo "ok  $h1 $a1 -> $h2 $a2 (ICMP, UDP)"
    done
  done
  unset -n members
done

step "(b) different subnets: no traffic, and the sender port's isolation drop counter rises"
# The ordinary attempt: h2 has no route to B at all.
if inhost h2 ping -n -q -c 1 -w 2 -I 198.18.0.12 198.18.1.10 >/dev/null 2>&1; then
  fail "198.18.0.12 (A) reached 198.18.1.10 (B)"
fi
# Force the packets onto the wire: bind to the A port and give the neighbour by hand (what a tenant with root
# on the host could do). Only the eBPF program on h2/npu0 stands between them and h0/npu1.
inhost h2 ip neigh replace 198.18.1.10 lladdr 02:00:00:00:01:01 dev npu0 nud permanent
inhost h0 ip neigh replace 198.18.0.12 lladdr 02:00:00:02:00:01 dev npu1 nud permanent
base=$(dropped h2 npu0)
if inhost h2 ping -n -q -c 3 -i 0.2 -w 3 -I npu0 198.18.1.10 >/dev/null 2>&1; then
  fail "ICMP from h2/npu0 (A) reached 198.18.1.10 (B)"
fi
until_ms $((3 * interval_ms)) dropped_at_least h2 npu0 $((base + 3)) ||
  fail "isolation drop counter of h2/npu0 did not rise by 3 (was $base, now $(dropped h2 npu0))"
echo "ok  ICMP h2/npu0 198.18.0.12 -> 198.18.1.10 failed; drops $base -> $(dropped h2 npu0)"
base=$(dropped h2 npu0)
out="$scratch/udp-cross"
ready="$scratch/ready-cross"
inhost h0 "$probe" recv 198.18.1.10 4791 1 2000 "$ready" >"$out" &
rpid=$!
until_ms 5000 test -f "$ready" || fail "UDP receiver on 198.18.1.10 did not start"
inhost h2 "$probe" send 198.18.0.12 198.18.1.10 4791 5 cross npu0 || true
if wait "$rpid"; then fail "UDP from h2/npu0 (A) reached 198.18.1.10 (B): $(cat "$out")"; fi
until_ms $((3 * interval_ms)) dropped_at_least h2 npu0 $((base + 5)) ||
  fail "isolation drop counter of h2/npu0 did not rise by 5 for UDP (was $base, now $(dropped h2 npu0))"
echo "ok  UDP h2/npu0 198.18.0.12 -> 198.18.1.10 not received; drops $base -> $(dropped h2 npu0)"
# And the other direction, from a B port to an A address.
base=$(dropped h0 npu1)
if inhost h0 ping -n -q -c 3 -i 0.2 -w 3 -I npu1 198.18.0.12 >/dev/null 2>&1; then
  fail "ICMP from h0/npu1 (B) reached 198.18.0.12 (A)"
fi
until_ms $((3 * interval_ms)) dropped_at_least h0 npu1 $((base + 3)) ||
  fail "isolation drop counter of h0/npu1 did not rise (was $base, now $(dropped h0 npu1))"
echo "ok  ICMP h0/npu1 198.18.1.10 -> 198.18.0.12 failed; drops $base -> $(dropped h0 npu1)"
inhost h2 ip neigh del 198.18.1.10 dev npu0
inhost h0 ip neigh del 198.18.0.12 dev npu1
# h0 has a port in each subnet. Sourced from its A address, a packet to a B address must not leave through
# the B port (whose isolation program allows B destinations): the A port's table ends in an unreachable
# default route, so the lookup stops there instead of falling through to the main table. And vice versa.
for c in "198.18.0.10 h1 198.18.1.11" "198.18.1.10 h1 198.18.0.11" "198.18.1.10 h2 198.18.0.12"; do
  read -r src dh dst <<<"$c"
  no_ping h0 "$src" "$dst"
  no_udp h0 "$src" "$dh" "$dst"
  echo "ok  h0 $src -> $dh $dst failed (ICMP, UDP): the source address's subnet holds on a two-subnet host"
done

step "(c) h2 has two ports in A: traffic from each address leaves through its own port"
count=50
for p in "0 198.18.0.12" "1 198.18.0.13"; do
  read -r own addr <<<"$p"
  other=$((1 - own))
  ping_ok h2 "$addr" 198.18.0.10  # neighbours resolved before counting
  own0=$(tx_packets h2 "npu$own")
  oth0=$(tx_packets h2 "npu$other")
  inhost h2 ping -n -q -c $count -i 0.01 -w 10 -I "$addr" 198.18.0.10 >/dev/null || fail "ping from $addr lost packets"
  inhost h2 "$probe" send "$addr" 198.18.0.11 4792 $count egress || fail "UDP from $addr failed"
  own_d=$(($(tx_packets h2 "npu$own") - own0))
  oth_d=$(($(tx_packets h2 "npu$other") - oth0))
  echo "from $addr: npu$own tx +$own_d, npu$other tx +$oth_d"
  [ "$own_d" -ge $((2 * count)) ] || fail "$addr: its port npu$own sent only $own_d of $((2 * count)) packets"
  [ "$oth_d" -le 5 ] || fail "$addr: the other port npu$other sent $oth_d packets"
done

step "(d) a hand-deleted address is restored and reported as drift within one interval"
port_h1=$(ctl -o json ports list --host "$prefix-h1" | jq -r '.items[] | select(.npu == 0) | .id')
repairs() { inhost h1 curl -s --max-time 2 http://127.0.0.1:9810/metrics | awk '$1 == "hsns_daemon_drift_repairs_total" {print $2}'; }
repairs0=$(repairs)
inhost h1 ip addr del 198.18.0.11/24 dev npu0
t0=$(now_ms)
restored_ms="" reported_ms=""
while [ $(($(now_ms) - t0)) -lt $((3 * interval_ms + 2000)) ]; do
  if [ -z "$restored_ms" ] && has_addr h1 npu0 198.18.0.11; then restored_ms=$(($(now_ms) - t0)); fi
  if [ -z "$reported_ms" ] &&
    [ "$(api "/api/v1/agents/$prefix-h1/status" | jq --arg id "$port_h1" \
      '[.report.ports[] | select(.port_id == $id) | .drift // [] | length] | add // 0')" -gt 0 ]; then
    reported_ms=$(($(now_ms) - t0))
  fi
  [ -n "$restored_ms" ] && [ -n "$reported_ms" ] && break
  sleep 0.05
done
[ -n "$restored_ms" ] || fail "198.18.0.11 was not restored"
[ -n "$reported_ms" ] || fail "the repair was not reported as drift to the aggregator"
echo "restored after ${restored_ms} ms, drift reported after ${reported_ms} ms (interval ${interval_ms} ms)"
# One interval, plus one more for a pass that had just started, plus margin for the polling itself.
[ "$restored_ms" -le $((2 * interval_ms + 1000)) ] || fail "restore took ${restored_ms} ms"
[ "$reported_ms" -le $((2 * interval_ms + 1000)) ] || fail "drift report took ${reported_ms} ms"
[ "$(repairs)" -gt "$repairs0" ] || fail "hsns_daemon_drift_repairs_total did not rise"
ping_ok h1 198.18.0.11 198.18.0.10  # the port's table and rule work again
ping_ok h0 198.18.0.10 198.18.0.11

step "(e) aggregator killed: addresses stay; restarted: the daemons resynchronise"
# Free h2/npu1 for a port created after the restart.
port_h2b=$(ctl -o json ports list --host "$prefix-h2" | jq -r '.items[] | select(.npu == 1) | .id')
ctl ports delete "$port_h2b" >/dev/null
until_ms 10000 no_addr h2 npu1 198.18.0.13 ||
  fail "198.18.0.13 was not removed after its port was deleted"
in_sync 30 || fail "daemons not in sync after the port deletion"
remaining=("h0 0 198.18.0.10" "h1 0 198.18.0.11" "h2 0 198.18.0.12" "h0 1 198.18.1.10" "h1 1 198.18.1.11")
agg_pids=$(ip netns pids "$prefix-mgmt")
[ -n "$agg_pids" ] || fail "no aggregator process in $prefix-mgmt"
# shellcheck disable=SC2086
kill -KILL $agg_pids
until_ms 5000 ns_empty "$prefix-mgmt" || fail "the aggregator did not die"
if api /api/v1/agents >/dev/null 2>&1; then fail "the aggregator still answers"; fi
t0=$(now_ms)
while [ $(($(now_ms) - t0)) -lt $((5 * interval_ms)) ]; do
  for p in "${remaining[@]}"; do
    read -r h n a <<<"$p"
    has_addr "$h" "npu$n" "$a" || fail "$a disappeared from $h/npu$n while the aggregator was down"
  done
  for h in h0 h1 h2; do [ -n "$(ip netns pids "$prefix-$h")" ] || fail "hsnsd of $h exited"; done
  sleep 0.5
done
ping_ok h0 198.18.0.10 198.18.0.12
ping_ok h1 198.18.1.11 198.18.1.10
echo "5 intervals without the aggregator: every address in place, traffic flows"
lab restart-aggregator
ctl ports create --subnet A --host "$prefix-h2" --npu 1 --ip 198.18.0.14 --name h2-npu1-new >/dev/null
until_ms 15000 has_addr h2 npu1 198.18.0.14 || fail "the port created after the restart was not applied"
in_sync 30 || fail "daemons not in sync after the aggregator restart"
has_addr h2 npu1 198.18.0.13 && fail "the deleted port's address 198.18.0.13 came back"
for p in "${remaining[@]}"; do
  read -r h n a <<<"$p"
  has_addr "$h" "npu$n" "$a" || fail "$a missing after the restart"
done
ping_ok h2 198.18.0.14 198.18.0.10
ping_ok h0 198.18.0.10 198.18.0.14
echo "after the restart: all daemons in sync, 198.18.0.14 applied on h2/npu1"

step "teardown"
