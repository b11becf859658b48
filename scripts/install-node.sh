#!/usr/bin/env bash
# Makes sure that `node` can run the project's JavaScript tools: the dashboard's build and browser tests
# (esbuild, TypeScript, playwright-core: Node.js 20 or later) and the OpenAPI linter (Redocly CLI: 20.19 or
# later within 20.x, or 22.12 or later). Debian 12's own nodejs is 18.x, too old for both.
# When the machine's node is older (or 21.x), installs Node.js $node_version, the official build as the npm
# registry publishes it (package node-linux-<arch>), and npm $npm_version (package npm), into
# /usr/local/lib/hsns-node, linked from /usr/local/bin/{node,npm,npx} (ahead of /usr/bin in PATH). Debian's
# npm (scripts/install-deps.sh installs it) fetches both, so the machine's npm settings (registry, proxy, CA)
# apply and each tarball is checked against the registry's integrity hash. Debian's nodejs stays installed.
# Always prints the Node.js it checked and what it did. Idempotent.
# Usage: scripts/install-node.sh          (as root, or with sudo available)
set -euo pipefail

node_version=24.22.3  # an LTS release
npm_version=11.21.3
prefix=/usr/local/lib/hsns-node

# 0 when the version string (v<major>.<minor>.<patch>) is one every tool supports.
supported() {
  local v=${1#v} major minor
  major=${v%%.*}
  minor=${v#*.}
  minor=${minor%%.*}
  [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] || return 1
  ((major == 20 && minor >= 19)) || ((major == 22 && minor >= 12)) || ((major > 22))
}

current=$(node --version 2>/dev/null || true)
if [ -n "$current" ] && supported "$current"; then
  echo "install-node: Node.js $current ($(command -v node)): supported"
  exit 0
fi

case $(dpkg --print-architecture) in
  amd64) arch=x64 ;;
  arm64) arch=arm64 ;;
  *) echo "install-node: Node.js ${current:-(none)} is too old and the npm registry has no build for" \
       "$(dpkg --print-architecture): install Node.js 20.19 or later yourself" >&2
     exit 1 ;;
esac
command -v npm >/dev/null || { echo "install-node: npm is needed to fetch Node.js (scripts/install-deps.sh)" >&2; exit 1; }

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "install-node: Node.js ${current:-(none)} is older than the tools need (20.19 within 20.x, or 22.12):" \
  "installing Node.js $node_version and npm $npm_version from the npm registry into $prefix" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "node-linux-$arch@$node_version" "npm@$npm_version" >/dev/null)
mkdir -p "$work/node/lib/node_modules/npm"
tar -xzf "$work/node-linux-$arch-$node_version.tgz" -C "$work/node" --strip-components=1 --no-same-owner
tar -xzf "$work/npm-$npm_version.tgz" -C "$work/node/lib/node_modules/npm" --strip-components=1 --no-same-owner
got=$("$work/node/bin/node" --version)
[ "$got" = "v$node_version" ] || { echo "install-node: the fetched node says $got" >&2; exit 1; }
"${sudo_cmd[@]}" rm -rf "$prefix"
"${sudo_cmd[@]}" mkdir -p "$(dirname "$prefix")"
"${sudo_cmd[@]}" cp -a "$work/node" "$prefix"
"${sudo_cmd[@]}" chown -R root:root "$prefix"
"${sudo_cmd[@]}" ln -sfn ../lib/hsns-node/bin/node /usr/local/bin/node
"${sudo_cmd[@]}" ln -sfn ../lib/hsns-node/lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
"${sudo_cmd[@]}" ln -sfn ../lib/hsns-node/lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
hash -r
now=$(node --version 2>/dev/null || true)
if [ "$now" != "v$node_version" ]; then
  echo "install-node: installed, but \`node\` still runs ${now:-nothing}: put /usr/local/bin before" \
    "$(dirname "$(command -v node)") in PATH" >&2
  exit 1
fi
echo "install-node: Node.js $now ($(command -v node)), npm $(npm --version): installed"
