#!/usr/bin/env bash
# Installs the Debian packages into a fresh Debian 12 root and checks what a user gets:
#   1. debootstrap (minbase) a bookworm root from the machine's own Debian mirror;
#   2. `apt-get install ./hsnsd_*.deb ./hsns-aggregator_*.deb ./hsnsctl_*.deb` there, dependencies from Debian;
#   3. each binary answers --version, `check-config` passes on the shipped configuration, the hsns system user
#      and the generated tokens file exist, and `systemd-analyze verify` accepts the installed units;
#   4. the aggregator runs from the root (on loopback), a subnet is created through hsnsctl, a conffile is
#      changed; then an upgrade to a newer build of the same packages keeps the changed conffile and the
#      database (the subnet is still there);
#   5. the dashboard as a fresh machine runs the browser tests: Debian's nodejs, npm and chromium installed
#      in the root, scripts/install-node.sh brings the Node.js the tools need (Debian 12's is too old),
#      `npm ci` installs web/'s pinned tools and web/tests/package_smoke.mjs logs in to the packages'
#      aggregator in Debian's chromium (the root gets the machine's CA certificates and npm settings);
#   6. `apt-get purge` removes the user, the state and the configuration.
# Usage: tests/packaging/install_test.sh DEB_DIR [WORK_DIR]      (as root)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
debs=$(cd "$1" && pwd)
work=${2:-$(mktemp -d /var/tmp/hsns-install-test.XXXXXX)}
root=$work/root
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, chroot)"
for tool in debootstrap dpkg-deb; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps.sh)"
done

aggregator_pid=
cleanup() {
  [ -n "$aggregator_pid" ] && kill "$aggregator_pid" 2>/dev/null && wait "$aggregator_pid" 2>/dev/null
  for m in dev/pts dev proc; do mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"; done
  rm -rf "$work"
}
trap cleanup EXIT
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }

# The machine's own Debian mirror (deb822 or one-line sources), else Debian's.
mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
mirror=${mirror:-http://deb.debian.org/debian}

echo "== debootstrap bookworm (minbase) from $mirror"
mkdir -p "$root"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log"; fail "debootstrap failed"; }
# The same suites as the machine (security and point-release updates): the packages were built against them.
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${mirror%/debian}/debian-security bookworm-security main
SOURCES
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
# No service starts inside the root (there is no systemd running in it anyway).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
in_root apt-get update -qq

echo "== install"
mkdir -p "$root/tmp/debs/v1" "$root/tmp/debs/v2"
cp "$debs"/hsnsd_*.deb "$debs"/hsns-aggregator_*.deb "$debs"/hsnsctl_*.deb "$root/tmp/debs/v1/"
in_root sh -c 'apt-get install -y -qq --no-install-recommends /tmp/debs/v1/*.deb' >"$work/install.log" 2>&1 ||
  { tail -30 "$work/install.log"; fail "apt-get install of the packages failed"; }

echo "== installed files"
for b in /usr/sbin/hsnsd /usr/sbin/hsns-flowprobe /usr/sbin/hsns-aggregator /usr/bin/hsnsctl \
  /lib/systemd/system/hsnsd.service /lib/systemd/system/hsns-aggregator.service \
  /usr/share/man/man8/hsnsd.8.gz /usr/share/man/man8/hsns-aggregator.8.gz /usr/share/man/man1/hsnsctl.1.gz \
  /etc/hsns/hsnsd.yaml /etc/hsns/aggregator.yaml /etc/hsns/tokens.yaml /usr/share/hsns/patterns/link.yaml \
  /usr/share/hsns/web/index.html /usr/share/hsns/web/app.js /usr/share/hsns/web/app.css; do
  [ -e "$root$b" ] || fail "$b is not installed"
done
in_root hsnsd --version | grep -q '^hsnsd ' || fail "hsnsd --version"
in_root hsns-aggregator --version | grep -q '^hsns-aggregator ' || fail "hsns-aggregator --version"
in_root hsnsctl --version | grep -q 'hsnsctl' || fail "hsnsctl --version"
in_root hsnsd check-config || fail "hsnsd check-config on the shipped configuration"
in_root hsns-aggregator check-config || fail "hsns-aggregator check-config on the shipped configuration"
in_root getent passwd hsns >/dev/null || fail "no system user hsns"
# Numeric ids: the machine's own user names mean nothing in the root.
hsns_ids=$(awk -F: '$1 == "hsns" { print $3 ":" $4 }' "$root/etc/passwd")
[ "$(stat -c '%u:%g %a' "$root/var/lib/hsns")" = "$hsns_ids 750" ] ||
  fail "/var/lib/hsns: $(stat -c '%u:%g %a' "$root/var/lib/hsns"), expected $hsns_ids 750"
[ "$(stat -c '%u:%g %a' "$root/etc/hsns/tokens.yaml")" = "0:${hsns_ids#*:} 640" ] ||
  fail "/etc/hsns/tokens.yaml: $(stat -c '%u:%g %a' "$root/etc/hsns/tokens.yaml"), expected 0:${hsns_ids#*:} 640"
for f in hsnsd.yaml aggregator.yaml; do
  grep -qx "/etc/hsns/$f" "$root/var/lib/dpkg/info/"*.conffiles || fail "/etc/hsns/$f is not a conffile"
done
# The units verified where they run: inside the root, with systemd (minbase has none), procps (/bin/kill of
# ExecReload) and man-db (the Documentation= man pages are looked up).
in_root apt-get install -y -qq --no-install-recommends systemd procps man-db >"$work/systemd.log" 2>&1 ||
  { tail -30 "$work/systemd.log"; fail "installing systemd into the root"; }
in_root systemd-analyze verify /lib/systemd/system/hsnsd.service /lib/systemd/system/hsns-aggregator.service \
  >"$work/verify.log" 2>&1 || { cat "$work/verify.log"; fail "systemd-analyze verify"; }
[ ! -s "$work/verify.log" ] || { cat "$work/verify.log"; fail "systemd-analyze verify printed warnings"; }
[ -L "$root/etc/systemd/system/multi-user.target.wants/hsnsd.service" ] || fail "hsnsd.service not enabled"
[ -L "$root/etc/systemd/system/multi-user.target.wants/hsns-aggregator.service" ] || fail "hsns-aggregator.service not enabled"

# The aggregator of the root, run as its user on loopback (port chosen by the kernel).
start_aggregator() {
  rm -f "$root/run/hsns-ready/ready"
  chroot --userspec="$hsns_ids" "$root" /usr/sbin/hsns-aggregator run --listen 127.0.0.1:0 \
    --ready-file /run/hsns-ready/ready >>"$work/aggregator.log" 2>&1 &
  aggregator_pid=$!
  for _ in $(seq 100); do [ -s "$root/run/hsns-ready/ready" ] && break; sleep 0.1; done
  [ -s "$root/run/hsns-ready/ready" ] || { cat "$work/aggregator.log"; fail "the aggregator did not start"; }
  port=$(awk '{print $2}' "$root/run/hsns-ready/ready")
}
stop_aggregator() { kill "$aggregator_pid"; wait "$aggregator_pid" || true; aggregator_pid=; }
mkdir -p "$root/run/hsns-ready"
chown "$hsns_ids" "$root/run/hsns-ready"
token=$(sed -n 's/.*token: "\([0-9a-f]*\)".*/\1/p' "$root/etc/hsns/tokens.yaml")
[ ${#token} -ge 32 ] || fail "no operator token in the generated tokens file"
printf '%s\n' "$token" >"$root/tmp/token"
ctl() { in_root hsnsctl --server "http://127.0.0.1:$port" --token-file /tmp/token "$@"; }

echo "== data before the upgrade"
start_aggregator
ctl subnets create --tenant acme --name upgrade-check --cidr 198.18.0.0/24 >/dev/null ||
  { cat "$work/aggregator.log"; fail "creating a subnet"; }
stop_aggregator
# An operator's change to a conffile.
sed -i 's/^port: 8080$/port: 8181/' "$root/etc/hsns/aggregator.yaml"
grep -q '^port: 8181$' "$root/etc/hsns/aggregator.yaml" || fail "could not change the conffile"

echo "== the dashboard in Debian's chromium, driven by the Node.js that scripts/install-node.sh chooses"
in_root apt-get install -y -qq --no-install-recommends ca-certificates nodejs npm chromium >"$work/web.log" 2>&1 ||
  { tail -30 "$work/web.log"; fail "installing nodejs, npm and chromium into the root"; }
# The machine's CA certificates and npm settings (registry, proxy, CA file), as a new machine of its kind has.
mkdir -p "$root/usr/local/share/ca-certificates"
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
in_root update-ca-certificates >>"$work/web.log" 2>&1 || fail "update-ca-certificates in the root"
for f in /etc/npmrc /usr/etc/npmrc /root/.npmrc; do
  if [ -f "$f" ]; then mkdir -p "$root$(dirname "$f")" && cp "$f" "$root$f"; fi
done
mkdir -p "$root/tmp/hsns/scripts" "$root/tmp/hsns/web/tests"
cp "$src/scripts/install-node.sh" "$root/tmp/hsns/scripts/"
cp "$src/web/package.json" "$src/web/package-lock.json" "$root/tmp/hsns/web/"
cp "$src/web/tests/package_smoke.mjs" "$root/tmp/hsns/web/tests/"
web_env=(env HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
in_root "${web_env[@]}" /tmp/hsns/scripts/install-node.sh || fail "scripts/install-node.sh in the root"
in_root "${web_env[@]}" sh -c 'cd /tmp/hsns/web && npm ci --no-audit --no-fund --loglevel=error' \
  >>"$work/web.log" 2>&1 || { tail -30 "$work/web.log"; fail "npm ci of web/ in the root"; }
start_aggregator
ctl topology generate --hosts 8 --npus-per-host 8 >/dev/null || { cat "$work/aggregator.log"; fail "generating a topology"; }
in_root "${web_env[@]}" node /tmp/hsns/web/tests/package_smoke.mjs --url "http://127.0.0.1:$port" --token "$token" ||
  { cat "$work/aggregator.log"; fail "the dashboard smoke test in the root"; }
stop_aggregator

echo "== upgrade to a newer build"
# The same packages as version <v>+upgrade1: dpkg runs the real upgrade path (prerm upgrade, unpack,
# conffile handling, postinst configure <old version>).
for deb in "$root"/tmp/debs/v1/*.deb; do
  x=$work/x/$(basename "$deb" .deb)
  mkdir -p "$work/x"
  dpkg-deb -R "$deb" "$x"
  sed -i 's/^Version: \(.*\)$/Version: \1+upgrade1/' "$x/DEBIAN/control"
  dpkg-deb -b "$x" "$root/tmp/debs/v2/" >/dev/null
done
in_root sh -c 'apt-get install -y -qq --no-install-recommends /tmp/debs/v2/*.deb' >"$work/upgrade.log" 2>&1 ||
  { tail -30 "$work/upgrade.log"; fail "the upgrade failed"; }
in_root dpkg-query -W -f '${Version}\n' hsns-aggregator | grep -q '+upgrade1$' || fail "hsns-aggregator not upgraded"
grep -q '^port: 8181$' "$root/etc/hsns/aggregator.yaml" || fail "the upgrade lost the changed conffile"
start_aggregator
ctl -o json subnets list | grep -q '"upgrade-check"' || fail "the upgrade lost the database"
stop_aggregator

echo "== purge"
in_root apt-get purge -y -qq hsnsd hsns-aggregator hsnsctl >"$work/purge.log" 2>&1 ||
  { tail -30 "$work/purge.log"; fail "purge failed"; }
in_root getent passwd hsns >/dev/null && fail "purge left the user hsns"
in_root getent group hsns >/dev/null && fail "purge left the group hsns"
[ -e "$root/var/lib/hsns" ] && fail "purge left /var/lib/hsns: $(ls -A "$root/var/lib/hsns")"
[ -e "$root/etc/hsns" ] && fail "purge left /etc/hsns: $(ls -A "$root/etc/hsns")"
echo "PASS: installed, verified, dashboard shown by the fresh root's own tools, upgraded (conffile and database kept), purged"
