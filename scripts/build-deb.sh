#!/usr/bin/env bash
# Builds the Debian packages hsnsd, hsns-aggregator and hsnsctl (packaging/deb/debian) with
# `dpkg-buildpackage -b` and checks them with lintian (no error, no warning).
#
#   scripts/build-deb.sh [--build-dir DIR] [--out DIR]
#     --build-dir DIR  package this existing, built CMake tree as it is (no second compile: the test
#                      command packages the tree it has just tested); without it dpkg-buildpackage
#                      configures and builds a release tree of its own
#     --out DIR        where the .deb files go (default build/deb)
#
# dpkg-buildpackage wants debian/ at the top of the source, so the script stages a copy of the source tree
# (the files git knows or would add, or without git everything but build trees; never a build tree) with
# packaging/deb/debian as its debian/ under OUT/src and builds there. Prints the packages it made.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build_dir=
out=build/deb
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '2,13p' "$0"; exit 64 ;;
  esac
done
case $out in /*) ;; *) out=$root/$out ;; esac
if [ -n "$build_dir" ]; then
  case $build_dir in /*) ;; *) build_dir=$root/$build_dir ;; esac
  [ -f "$build_dir/CMakeCache.txt" ] || { echo "build-deb.sh: $build_dir is not a CMake build tree" >&2; exit 1; }
fi

version=$(dpkg-parsechangelog -l packaging/deb/debian/changelog -S Version)
src=$out/src/hsns-$version
rm -rf "$out"
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$src"
else  # a source tree without git (an unpacked archive): everything but build trees and npm modules
  tar --exclude=./build --exclude=./.git --exclude='*/node_modules' -cf - . | tar -xf - -C "$src"
fi
cp -r packaging/deb/debian "$src/debian"

# A test build (--build-dir) makes no -dbgsym packages: they double the time of the packaging and lintian.
options=${DEB_BUILD_OPTIONS:-}
[ -n "$build_dir" ] && options="$options noddebs"
(cd "$src" && DEB_BUILD_OPTIONS=$options HSNS_BUILD_DIR=$build_dir dpkg-buildpackage -b --no-pre-clean -us -uc -j"${HSNS_JOBS:-$(nproc)}") \
  >"$out/dpkg-buildpackage.log" 2>&1 || { tail -40 "$out/dpkg-buildpackage.log" >&2; exit 1; }

changes=$(ls "$out/src"/hsns_"$version"_*.changes)
# --fail-on error,warning: a warning fails too. Overrides (packaging/deb/debian/*.lintian-overrides) each
# say why.
lintian --fail-on error,warning --tag-display-limit 0 "$changes" | tee "$out/lintian.log"
mv "$out/src"/*.deb "$out/"
ls "$out"/*.deb
