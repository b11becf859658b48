#!/bin/sh
# Verifies the systemd units: `systemd-analyze verify` on copies whose ExecStart points at an existing binary,
# and `systemd-analyze security --offline=yes` with an exposure limit per unit.
# Usage: systemd_units_test.sh <source dir> <hsnsd binary> <aggregator binary>
set -eu
src=$1 hsnsd=$2 aggregator=$3
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
check() { # unit binary installed-path max-exposure
  unit=$1 bin=$2 installed=$3 max=$4
  sed "s|$installed|$bin|g" "$src/systemd/$unit" > "$tmp/$unit"
  if ! out=$(systemd-analyze verify --man=no "$tmp/$unit" 2>&1); then
    echo "FAIL: systemd-analyze verify $unit:"; echo "$out"; status=1
  elif [ -n "$out" ]; then
    echo "FAIL: systemd-analyze verify $unit warned:"; echo "$out"; status=1
  else
    echo "ok: verify $unit"
  fi
  out=$(systemd-analyze security --offline=yes --no-pager "$tmp/$unit" 2>&1 || true)
  score=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p' | tail -n1)
  if [ -z "$score" ]; then
    echo "FAIL: no exposure score for $unit:"; echo "$out"; status=1
  elif awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }'; then
    echo "ok: $unit exposure $score <= $max"
  else
    printf '%s\n' "$out" | grep -v '^  ✓' || true
    echo "FAIL: $unit exposure $score > $max"; status=1
  fi
}
check hsnsd.service "$hsnsd" /usr/sbin/hsnsd 3.5
check hsns-aggregator.service "$aggregator" /usr/sbin/hsns-aggregator 3.5
exit $status
