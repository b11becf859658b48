#!/usr/bin/env bash
# Loads a small sample cluster into a running aggregator through hsnsctl: 4 hosts with 8 NPUs each,
# two subnets (even NPUs on an IPv4 rail subnet, odd NPUs on an IPv6 one) and one port per NPU.
# Usage: lab/sample-cluster.sh PATH_TO_HSNSCTL      (HSNS_SERVER and HSNS_TOKEN as for hsnsctl)
set -euo pipefail
ctl=$1
"$ctl" subnets create --name rail-even --cidr 198.18.0.0/24 --gateway 198.18.0.1 --mtu 4200
"$ctl" subnets create --name rail-odd --cidr 2001:db8:1::/64 --mtu 4200
for h in 01 02 03 04; do
  npus=()
  for i in 0 1 2 3 4 5 6 7; do
    npus+=(--npu "$i:eth$((i + 2)):02:00:00:00:$h:0$i:mlx5_$i:200000")
  done
  "$ctl" hosts register "host-$h" "${npus[@]}"
  for i in 0 1 2 3 4 5 6 7; do
    if (( i % 2 == 0 )); then subnet=rail-even; else subnet=rail-odd; fi
    "$ctl" ports create --subnet "$subnet" --host "host-$h" --npu "$i"
  done
done
