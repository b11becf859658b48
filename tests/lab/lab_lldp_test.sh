#!/usr/bin/env bash
# LLDP discovery end to end on the emulated cluster (lab/hsns-lab): 3 hosts x 2 NPUs, 2 spines, lldpd in
# every leaf and spine namespace, the real aggregator with the lab's topology (no host links) and one real
# hsnsd per host.
# Checks:
#   (a) the lab imported its topology: 3 hosts, 6 NPUs, 2 leaves, 2 spines, the 4 leaf-spine links only;
#   (b) the switches' lldpd hear each other exactly as cabled: leaf j sees spine k on up<k> (port leaf<j>)
#       and spine k sees leaf j on leaf<j> (port up<k>), nothing else (hsnsd never sends);
#   (c) hsnsd hears exactly the cabling: on host i, npu<j> has one neighbour, leaf j's port h<i>
#       (hsns_lldp_neighbors and hsns_lldp_neighbor_info on its /metrics);
#   (d) hsnsd's own reports (its report uploader, `report:` in the lab's hsnsd.yaml) make the aggregator's
#       topology hold every host link exactly as cabled, the test posting nothing;
#   (e) the aggregator's view of it: the topology's links are exactly the lab's cabling (each host's npu<j>
#       on leaf j port h<i>, the leaf-spine links), GET /api/v1/topology/lldp lists the 6 observations, the
#       links were added once each, and no neighbour was unresolved or conflicting.
# Teardown runs on every exit path (`hsns-lab down`); the test fails if a namespace, pin, state directory,
# mount or process of the lab (lldpd included) is left behind, or a process needed SIGKILL.
# A missing prerequisite (root, ip, curl, jq, lldpd, lldpcli, the binaries) is a failure, never a skip.
# Usage: lab_lldp_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail

src=${1:?source dir}
build=${2:?build dir}
hosts=3
npus=2
spines=2

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces, packet sockets)"
for tool in ip curl jq lldpd lldpcli; do command -v "$tool" >/dev/null || fail "$tool is not installed"; done
for b in aggregator/hsns-aggregator daemon/core/hsnsd; do
  [ -x "$build/$b" ] || fail "$build/$b is missing (build hsns-aggregator hsnsd)"
done

labtool=$src/lab/hsns-lab
# shellcheck source=lab_teardown.sh
. "$src/tests/lab/lab_teardown.sh"
# A run killed without its teardown leaves ll<pid>-* behind: remove those whose test process is gone.
for stale in $(ip netns list | awk '{print $1}' | sed -n 's/^\(ll[0-9]*\)-mgmt$/\1/p'); do
  if ! grep -qs lab_lldp_test "/proc/${stale#ll}/cmdline"; then
    echo "removing the lab of an earlier run that did not tear down: $stale"
    "$labtool" down --prefix "$stale" --state "/tmp/hsns-lab-lldp.$stale" || true
  fi
done
prefix=ll$$
state=/tmp/hsns-lab-lldp.$prefix
lab() { local c=$1; shift; "$labtool" "$c" --prefix "$prefix" --state "$state" --bin "$build" "$@"; }
inns() { local n=$1; shift; "$labtool" exec --prefix "$prefix" "$n" -- "$@"; }
api() { lab api "$@"; }
step() { echo; echo "=== $*"; }

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ $rc != 0 ] && [ -d "$state" ]; then
    echo "--- diagnostics (exit $rc)" >&2
    lab status >&2 || true
    tail -n 20 "$state/aggregator.log" >&2 2>/dev/null || true
    for f in "$state"/h*/hsnsd.log "$state"/lldpd/*/lldpd.log; do
      echo "--- $f (tail)" >&2
      tail -n 15 "$f" >&2 2>/dev/null || true
    done
  fi
  lab_teardown_checked "$prefix" "$state" || rc=1
  [ $rc = 0 ] && echo "PASS"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Retry "$@" every 0.2 s for up to $1 seconds.
within() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# What the lab is cabled as, one link per line: "lower lower_port upper upper_port", sorted.
cabled_host_links() {
  local i j
  for ((i = 0; i < hosts; i++)); do
    for ((j = 0; j < npus; j++)); do echo "$prefix-h$i npu$j $prefix-leaf$j h$i"; done
  done | sort
}
cabled_fabric_links() {
  local j k
  for ((j = 0; j < npus; j++)); do
    for ((k = 0; k < spines; k++)); do echo "$prefix-leaf$j up$k $prefix-spine$k leaf$j"; done
  done | sort
}
topology_links() {  # the aggregator's topology, same form
  api "/api/v1/topology/export?format=json" | jq -r '
    (.nodes | map({key: (.id | tostring), value: .name}) | from_entries) as $n
    | .links[] | "\($n[.source | tostring]) \(.source_port) \($n[.target | tostring]) \(.target_port)"' | sort
}
topology_is_cabled() { [ "$(topology_links)" = "$(sort <(cabled_host_links) <(cabled_fabric_links))" ]; }

# hsnsd's neighbours on host $1 from its /metrics: "netdev system_name port_id chassis_id", sorted.
label() { sed -n "s/.*[{,]$1=\"\\([^\"]*\\)\".*/\\1/p" <<<"$2"; }
hsnsd_neighbors() {
  local line
  inns "$1" curl -sS --max-time 2 http://127.0.0.1:9810/metrics | grep '^hsns_lldp_neighbor_info{' |
    while read -r line; do
      echo "$(label netdev "$line") $(label system_name "$line") $(label port_id "$line") $(label chassis_id "$line")"
    done | sort
}
hsnsd_sees_cabling() {  # host index $1: exactly one neighbour per NPU port, the right leaf and port
  local i=$1 j expected
  expected=$(for ((j = 0; j < npus; j++)); do echo "npu$j $prefix-leaf$j h$i"; done)
  [ "$(hsnsd_neighbors "h$i" | cut -d' ' -f1-3)" = "$expected" ]
}
# lldpd's neighbours in switch namespace $1: "local_port system_name port_id", sorted.
lldpd_neighbors() {
  inns "$1" lldpcli -u "$state/lldpd/$1/lldpd.socket" -f keyvalue show neighbors | awk -F= '
    { split($1, k, "."); port = k[2] }
    $1 ~ /\.chassis\.name$/ { name[port] = $2 }
    $1 ~ /\.port\.ifname$/ { id[port] = $2 }
    END { for (p in name) print p, name[p], id[p] }' | sort
}
switches_see_cabling() {
  local j k expected
  for ((j = 0; j < npus; j++)); do
    expected=$(for ((k = 0; k < spines; k++)); do echo "up$k $prefix-spine$k leaf$j"; done)
    [ "$(lldpd_neighbors "leaf$j")" = "$expected" ] || return 1
  done
  for ((k = 0; k < spines; k++)); do
    expected=$(for ((j = 0; j < npus; j++)); do echo "leaf$j $prefix-leaf$j up$k"; done)
    [ "$(lldpd_neighbors "spine$k")" = "$expected" ] || return 1
  done
}
aggregator_metric() { api /metrics | awk -v s="$1" '$1 == s {print $2}'; }

step "up: $hosts hosts x $npus NPUs, $spines spines, lldpd in every switch (prefix $prefix)"
lab up --hosts "$hosts" --npus "$npus" --spines "$spines"

step "(a) the lab's topology: switches, hosts, NPUs and the leaf-spine links, no host links"
summary=$(api /api/v1/topology)
jq -e --argjson h "$hosts" --argjson n $((hosts * npus)) --argjson l $((npus * spines)) --argjson s "$spines" \
  --argjson leaves "$npus" \
  '.hosts == $h and .npus == $n and .links == $l and .switches.leaf == $leaves and .switches.spine == $s' \
  <<<"$summary" >/dev/null || fail "unexpected topology summary: $summary"
[ "$(topology_links)" = "$(cabled_fabric_links)" ] || fail "the imported links are not the fabric's: $(topology_links)"
echo "topology imported: $summary"

step "(b) lldpd in each switch hears its neighbours exactly as cabled"
within 20 switches_see_cabling || {
  for sw in leaf0 leaf1 spine0 spine1; do echo "$sw: $(lldpd_neighbors "$sw" | paste -sd';')" >&2; done
  fail "the switches' LLDP neighbours are not the cabling"
}
for sw in leaf0 spine0; do echo "$sw hears: $(lldpd_neighbors "$sw" | paste -sd';')"; done

step "(c) hsnsd on every host hears its leaves exactly as cabled"
for ((i = 0; i < hosts; i++)); do
  within 20 hsnsd_sees_cabling "$i" || fail "h$i: hsnsd's neighbours are not the cabling: $(hsnsd_neighbors "h$i")"
  for ((j = 0; j < npus; j++)); do
    count=$(inns "h$i" curl -sS --max-time 2 http://127.0.0.1:9810/metrics |
      awk -v s="hsns_lldp_neighbors{netdev=\"npu$j\"}" '$1 == s {print $2}')
    [ "$count" = 1 ] || fail "h$i: hsns_lldp_neighbors of npu$j is '$count', not 1"
  done
  echo "h$i hears: $(hsnsd_neighbors "h$i" | cut -d' ' -f1-3 | paste -sd';')"
done

step "(d) hsnsd's own reports -> the aggregator's topology"
within 60 topology_is_cabled || fail "hsnsd's reports did not make the topology the cabling: $(topology_links)"
echo "the topology holds every host link as cabled, from hsnsd's own reports"

step "(e) the aggregator's view of the reported neighbours"
topology_is_cabled || {
  diff <(topology_links) <(sort <(cabled_host_links) <(cabled_fabric_links)) >&2 || true
  fail "the topology's links are not exactly the lab's cabling"
}
echo "topology links, exactly the cabling:"
topology_links | sed 's/^/  /'
observed=$(api /api/v1/topology/lldp | jq -r '.items[] | "\(.host) \(.port) \(.neighbor_system) \(.neighbor_port)"' | sort)
[ "$observed" = "$(cabled_host_links)" ] || fail "GET /api/v1/topology/lldp: $observed"
for kind in unresolved conflict; do
  v=$(aggregator_metric "hsns_telemetry_lldp_issues_total{kind=\"$kind\"}")
  [ "$v" = 0 ] || fail "the aggregator counted $v $kind LLDP neighbours"
done
added=$(aggregator_metric 'hsns_telemetry_lldp_links_total{change="added"}')
[ "$added" = $((hosts * npus)) ] || fail "hsns_telemetry_lldp_links_total{change=\"added\"} is $added"

step "teardown"
