#!/usr/bin/env bash
# Installs what is missing, builds hsns once (clang with AddressSanitizer/UBSan, the libFuzzer targets in the
# same tree) and runs the whole test suite: unit, integration (real aggregator over loopback), OpenAPI lint,
# promtool, the browser tests, the packages, and bounded libFuzzer runs.
# Prints the time each stage took and how many tests ran.
# Usage: scripts/test.sh        (as root on Debian 12, or a user with sudo)
set -euo pipefail
cd "$(dirname "$0")/.."

stage_start=$SECONDS
stage() {
  local now=$SECONDS
  [ -z "${stage_name:-}" ] || echo "== ${stage_name}: $((now - stage_start)) s"
  stage_name=$1
  stage_start=$now
  [ -z "$stage_name" ] || echo "== $stage_name"
}

stage "install dependencies"
scripts/install-deps.sh
jobs=$(nproc)

status=0
# A formatting slip fails the run at the end, after the tests, so that their results are still seen.
stage "format check (clang-format, the repository's .clang-format)"
if ! find aggregator bench bpf cli daemon include lab lib tests -path tests/openapi/node_modules -prune -o \
  \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) -print0 | xargs -0 clang-format --dry-run -Werror; then
  echo "== format check failed: run clang-format -i on the files named above"
  status=1
fi

stage "npm ci (OpenAPI linter, dashboard)"
(cd tests/openapi && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
(cd web && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

stage "build (asan-ubsan: clang, AddressSanitizer and UBSan, fuzz targets included)"
cmake --preset asan-ubsan >/dev/null
cmake --build --preset asan-ubsan -j"$jobs"

# clang-tidy on the sources the last commit changed (the whole tree takes ~40 min on 2 cores: run
# scripts/tidy.sh build/asan-ubsan --all by hand). Like formatting, a finding fails the run at the end.
stage "clang-tidy (the repository's .clang-tidy, sources changed by the last commit)"
if ! scripts/tidy.sh build/asan-ubsan "${HSNS_TIDY_BASE:-HEAD~1}"; then
  status=1
fi

# Runs one ctest preset; a test that skipped (a missing tool or privilege) fails the run, since a green
# run must prove that everything ran. Prints how many tests ran, skipped and failed.
ran_total=0
run_tests() {
  local preset=$1 log
  log=$(mktemp)
  local rc=0
  if ! ctest --preset "$preset" -j"$jobs" 2>&1 | tee "$log"; then rc=1; fi  # pipefail: ctest's status
  local total failed skipped
  total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  failed=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -1)
  skipped=$(grep -c -- '\*\*\*Skipped\|(Not Run)\|(Disabled)' "$log" || true)
  echo "== ${preset}: ${total:-0} tests ran, ${skipped} skipped, ${failed:-?} failed"
  if [ "$skipped" -gt 0 ]; then
    echo "== ${preset}: a skipped test fails the run (install what it needs, run as root); skipped:"
    grep -- '\*\*\*Skipped\|(Not Run)\|(Disabled)' "$log" | sed 's/^ *[0-9/]* *Test *#[0-9]*: */   /' || true
    rc=1
  fi
  [ -n "$total" ] || rc=1
  ran_total=$((ran_total + ${total:-0}))
  rm -f "$log"
  [ "$rc" -eq 0 ] || status=1
}

# One line per libFuzzer run from ctest's log: runs, seconds, executions per second, coverage (edges and
# features) and corpus size at the end, peak RSS.
fuzz_summary() {
  local log=${1:-build/asan-ubsan/Testing/Temporary/LastTest.log}
  [ -f "$log" ] || return 0
  awk '
    / Testing: fuzz_.*_bounded$/ { name = $NF; sub(/_bounded$/, "", name) }
    /[[:space:]]DONE +cov:/ { for (i = 1; i < NF; i++) { if ($i == "cov:") cov = $(i + 1); if ($i == "ft:") ft = $(i + 1);
                                             if ($i == "corp:") corp = $(i + 1) } }
    /^Done [0-9]+ runs in/ { runs = $2; secs = $5 }
    /^stat::average_exec_per_sec:/ { eps = $2 }
    /^stat::peak_rss_mb:/ { rss = $2 }
    /_bounded" end time:/ {
      printf "== fuzz %-22s %9s runs in %3s s, %6s exec/s, cov %5s ft %6s corp %-14s rss %s MB\n",
             name, runs, secs, eps, cov, ft, corp, rss
      name = runs = secs = eps = cov = ft = corp = rss = "?"
    }' "$log"
}

stage "tests (asan-ubsan, bounded fuzzing included)"
run_tests asan-ubsan
fuzz_summary
stage ""
echo "== total: ${ran_total} tests in ${SECONDS} s; $([ $status -eq 0 ] && echo passed || echo FAILED)"
exit $status
