#!/usr/bin/env bash
# The fast path of the demo (scripts/demo.sh --fast): installs what is missing, builds hsns (release preset), starts the emulated cluster
# (lab/hsns-lab: hosts with NPU ports in network namespaces, rail-aligned leaf and spine bridges, the real
# hsns-aggregator and one real hsnsd per host), creates two subnets and one port per NPU through hsnsctl, waits
# until every daemon has applied them, imports the emulated cluster's topology, runs a topology search and
# prints where to look. Ctrl-C (or any exit) tears everything down.
# Usage: scripts/demo.sh --fast [--hosts N] [--npus M] [--prefix P] [--bin DIR]      (as root; see docs/lab.md)
#   --bin DIR  use binaries already built in DIR and skip installing and building
set -euo pipefail
cd "$(dirname "$0")/.."
hosts=4
npus=4
prefix=demo
bin=
while [ $# -gt 0 ]; do
  case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --npus) npus=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) sed -n '2,7p' "$0"; exit 64 ;;
  esac
done
# scripts/demo.sh, which starts this script, has checked for root.

if [ -z "$bin" ]; then
  scripts/build-release.sh hsns-aggregator hsnsd hsnsctl hsns_web
  bin=build/release
fi

state=build/lab-$prefix
lab() { local c=$1; shift; lab/hsns-lab "$c" --prefix "$prefix" --state "$state" "$@"; }
ctl() { lab ctl -- "$@"; }
sleeper=
trap 'trap - EXIT INT TERM; [ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
      echo; echo "demo: tearing down the emulated cluster"; lab down; echo "demo stopped"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

lab up --hosts "$hosts" --npus "$npus" --bin "$bin"

# The daemons register their hosts (and NPUs) at start; ports need them.
registered() {
  [ "$(lab api /api/v1/hosts 2>/dev/null | jq --arg p "$prefix-h" '[.items[] | select(.name | startswith($p))] | length')" = "$hosts" ]
}
for _ in $(seq 200); do registered && break; sleep 0.1; done
registered || { echo "demo: the daemons did not register within 20 s; see $state/h*/hsnsd.log" >&2; exit 1; }

# Two tenant subnets, rail-aligned: even NPUs on one, odd NPUs on the other; one port per NPU.
ctl subnets create --name rail-even --cidr 198.18.0.0/24 --mtu 9000 >/dev/null
ctl subnets create --name rail-odd --cidr 198.18.1.0/24 --mtu 9000 >/dev/null
for ((i = 0; i < hosts; i++)); do
  for ((j = 0; j < npus; j++)); do
    if ((j % 2 == 0)); then subnet=rail-even; else subnet=rail-odd; fi
    ctl ports create --subnet "$subnet" --host "$prefix-h$i" --npu "$j" --name "h$i-npu$j" >/dev/null
  done
done
lab wait --timeout 60

# The emulated cluster's topology, so that topology search and scheduling see what the namespaces wire up:
# NPU j of every host on leaf j (100 Gbit/s veths), every leaf on the one spine.
topology=$state/topology.yaml
{
  echo "version: 1"
  echo "name: $prefix-lab"
  echo "defaults: {bandwidth_gbps: 100, latency_us: 1}"
  echo "switches:"
  for ((j = 0; j < npus; j++)); do echo "  - {name: $prefix-leaf$j, tier: leaf}"; done
  echo "  - {name: $prefix-spine0, tier: spine}"
  echo "hosts:"
  for ((i = 0; i < hosts; i++)); do
    echo "  - name: $prefix-h$i"
    echo "    npus:"
    for ((j = 0; j < npus; j++)); do echo "      - {index: $j, port: npu$j, leaf: $prefix-leaf$j}"; done
  done
  echo "links:"
  for ((j = 0; j < npus; j++)); do echo "  - {lower: $prefix-leaf$j, upper: $prefix-spine0, bandwidth_gbps: 400}"; done
} >"$topology"
ctl topology import "$topology" >/dev/null
# A small GPT-style job: tensor parallel inside each host, data parallel across two hosts (rail by rail,
# so every DP pair stays in its NPU's subnet).
model="--parameters 1300000000 --layers 24 --hidden 2048 --heads 16 --seq-len 2048 --micro-batch 1 --global-batch 16 --tp $npus --dp 2"

h0_even=$(ctl -o json ports list --host "$prefix-h0" | jq -r '.items[] | select(.npu == 0) | .ip_address')
h1_even=$(ctl -o json ports list --host "$prefix-h1" | jq -r '.items[] | select(.npu == 0) | .ip_address')
h1_odd=$(ctl -o json ports list --host "$prefix-h1" | jq -r '.items[] | select(.npu == 1) | .ip_address')
ctl ports list
echo
echo "topology search for a $((2 * npus))-NPU job (tp $npus, dp 2):"
# shellcheck disable=SC2086
ctl search $model --answers 2
cat <<EOT

hsns demo is running: $hosts hosts x $npus NPUs in network namespaces $prefix-h0..$prefix-h$((hosts - 1)),
rail-aligned leaves $prefix-leaf0..$prefix-leaf$((npus - 1)) joined by $prefix-spine0, every hsnsd in sync.
  aggregator  http://198.19.0.1:8080 inside namespace $prefix-mgmt (operator token in $state/operator.token)
  subnets     rail-even 198.18.0.0/24 (even NPUs), rail-odd 198.18.1.0/24 (odd NPUs); one port per NPU
  logs        $state/aggregator.log, $state/h<i>/hsnsd.log; agent state $state/h<i>/state/

Try (in another terminal):
  lab/hsns-lab ctl --prefix $prefix -- subnets list
  lab/hsns-lab ctl --prefix $prefix -- ports list --host $prefix-h0
  lab/hsns-lab ctl --prefix $prefix -- desired $prefix-h0
  lab/hsns-lab api --prefix $prefix /api/v1/agents | jq .
  lab/hsns-lab exec --prefix $prefix mgmt -- curl -s http://198.19.0.1:8080/api/v1/agents -H "Authorization: Bearer \$(cat $state/operator.token)" | jq .
  lab/hsns-lab exec --prefix $prefix h0 -- ip -br addr
  lab/hsns-lab exec --prefix $prefix h0 -- ip rule
  lab/hsns-lab exec --prefix $prefix h0 -- ping -c 3 -I $h0_even $h1_even      # same subnet: answers
  lab/hsns-lab exec --prefix $prefix h0 -- ping -c 3 -w 3 -I npu0 $h1_odd       # other subnet: dropped by eBPF
  lab/hsns-lab api --prefix $prefix /api/v1/agents/$prefix-h0/status | jq '.report.ports'   # isolation_dropped_packets
  lab/hsns-lab exec --prefix $prefix h0 -- curl -s 127.0.0.1:9810/metrics | grep ^hsns_daemon
  lab/hsns-lab exec --prefix $prefix h1 -- ip addr del $h1_even/24 dev npu0    # hsnsd restores it within a second
  lab/hsns-lab ctl --prefix $prefix -- topology show
  lab/hsns-lab ctl --prefix $prefix -- topology export --format slurm-tree
  lab/hsns-lab ctl --prefix $prefix -- schedule job-a --best $model --out-dir $state/job-a
  lab/hsns-lab ctl --prefix $prefix -- jobs get job-a          # ranks with their NPU addresses
  cat $state/job-a/hccl.json $state/job-a/MultiQpSrcPort.cfg
  lab/hsns-lab ctl --prefix $prefix -- jobs delete job-a

Press Ctrl-C to stop (removes every namespace, pin and the state directory).
EOT
while :; do sleep 3600 & sleeper=$!; wait "$sleeper"; done
