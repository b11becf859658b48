#!/usr/bin/env bash
# clang-tidy with the repository's .clang-tidy over the project's translation units, any warning an error.
# Usage: scripts/tidy.sh BUILD_DIR [--all | BASE_REF]
#   --all      every C++ source of the project in BUILD_DIR's compile database (about 30 s of CPU per file
#              that includes Beast; too long for every CI run on 2 cores)
#   BASE_REF   only the sources changed since BASE_REF (default HEAD~1: the last commit), a changed header
#              standing for the source file beside it
# Prints how many files were checked and how many had findings; exits 1 when any had.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?build directory with compile_commands.json}
mode=${2:-HEAD~1}
db="$build/compile_commands.json"
[ -f "$db" ] || { echo "tidy: $db missing (configure with CMAKE_EXPORT_COMPILE_COMMANDS)"; exit 1; }

# Every project source the compile database knows (tests included; generated files excluded).
mapfile -t known < <(jq -r '.[].file' "$db" | sed "s#^$PWD/##" | grep -v "^/\|^build/" | sort -u)
if [ "$mode" = "--all" ]; then
  files=("${known[@]}")
else
  if ! git rev-parse --verify -q "$mode^{commit}" >/dev/null; then
    echo "tidy: $mode is not a commit of this clone (a shallow clone?): fetch more history or pass --all"
    exit 1
  fi
  mapfile -t changed < <(git diff --name-only --diff-filter=d "$mode" -- '*.cpp' '*.h' 2>/dev/null |
    sed 's/\.h$/.cpp/' | sort -u)
  files=()
  for f in "${changed[@]}"; do
    printf '%s\n' "${known[@]}" | grep -qxF "$f" && files+=("$f")
  done
fi
echo "tidy: ${#files[@]} file(s) ($mode)"
[ "${#files[@]}" -gt 0 ] || exit 0

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -I{} sh -c \
  'clang-tidy -p "$1" --quiet --warnings-as-errors="*" "$2" >"$3/$(echo "$2" | tr / _).log" 2>&1 || echo "$2" >>"$3/failed"' \
  _ "$build" {} "$log"
# Findings located in generated files (the build tree: bpftool's skeletons) are not the project's code:
# a file whose only findings are there passes.
if [ -s "$log/failed" ]; then
  while read -r f; do
    grep -E "(warning|error):" "$log/$(echo "$f" | tr / _).log" | grep -v "warnings generated" |
      grep -qv "^$PWD/build/\|^$(realpath "$build")/" && echo "$f"
  done <"$log/failed" >"$log/ours"
  mv "$log/ours" "$log/failed"
fi
if [ -s "$log/failed" ]; then
  while read -r f; do
    echo "== clang-tidy: $f"
    grep -E "(warning|error):" "$log/$(echo "$f" | tr / _).log" | grep -v "warnings generated" || true
  done <"$log/failed"
  echo "tidy: $(wc -l <"$log/failed") of ${#files[@]} file(s) have findings"
  exit 1
fi
echo "tidy: ${#files[@]} file(s) clean"
