#!/usr/bin/env bash
# Installs every Debian package hsns needs to build, test, benchmark and run its demo on Debian 12.
# Idempotent: packages already present are skipped; when all are installed it prints only the Node.js check
# (scripts/install-node.sh, run last: Debian 12's nodejs is too old for the dashboard's and the OpenAPI
# linter's tools, so a newer one comes from the npm registry where needed).
# Usage: scripts/install-deps.sh            (run as root, or with sudo available)
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang lld libclang-rt-dev clang-format clang-tidy
  # libraries
  libboost1.81-dev libboost-url1.81-dev prometheus-cpp-dev libcli11-dev libyaml-cpp-dev
  nlohmann-json3-dev libsqlite3-dev libexpected-dev libsystemd-dev libssl-dev zlib1g-dev libisal-dev
  libgtest-dev libgmock-dev
  libre2-dev  # the brain's fault patterns: RE2, linear-time regular expressions for patterns users write
  # node daemon: eBPF (libbpf, bpftool, clang above), rtnetlink, rdma-core verbs
  libbpf-dev bpftool libnl-route-3-dev libibverbs-dev linux-libc-dev
  # test and benchmark tools
  prometheus wrk nginx-light curl jq sqlite3 ca-certificates python3 systemd openssl
  iproute2 iputils-ping ethtool tshark
  # the demo: its loopback port forward to the dashboard inside the management namespace
  socat
  # host telemetry tests: property tests of the report spool, real LLDP announced inside test namespaces
  librapidcheck-dev lldpd
  # Debian packages: dpkg-buildpackage with debhelper, lintian, and the install test's fresh root
  debhelper lintian debootstrap
  # switch KPIs by SNMP: net-snmp's library; its agent and command-line tools for the poller's tests
  libsnmp-dev snmpd snmp
  # alarms pushed to a real Alertmanager in the tests (started on loopback by the test itself)
  prometheus-alertmanager
  # the dashboard's browser tests: Debian's chromium, driven headless by playwright-core (web/tests)
  chromium
  # the eBPF programs verified inside Debian 12's own kernel under qemu (tests/bpf/kernels)
  qemu-system-x86 busybox-static cpio
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done
# Node.js with npm builds the dashboard and runs the web and OpenAPI tests. Debian's npm is enough to start:
# install-node.sh below brings a Node.js the tools support where the machine's is older.
if ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exec "$(dirname "$0")/install-node.sh"
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
# lldpd's package would start the daemon at once, announcing this machine on every interface: tests run
# it only inside namespaces they create. A policy-rc.d that refuses service starts (Debian's mechanism,
# honoured by invoke-rc.d and deb-systemd-invoke) covers the install; the unit is disabled afterwards.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
  "${sudo_cmd[@]}" chmod 755 "$policy"
  own_policy=1
fi
status=0
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
[ "$own_policy" -eq 0 ] || "${sudo_cmd[@]}" rm -f "$policy"
[ "$status" -eq 0 ] || exit "$status"
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  "${sudo_cmd[@]}" systemctl disable --now lldpd.service >/dev/null 2>&1 || true
fi
"$(dirname "$0")/install-node.sh"
