#!/usr/bin/env bash
# The demo end to end, unattended (issue 14): scripts/demo.sh with the short fault timetable on 8 hosts x 8 NPUs,
# 8 rail leaves and 2 spines (the real aggregator, one real hsnsd per host, lldpd in every switch), two jobs
# placed by the scheduling API with their RoCEv2 traffic, then every fault of the timetable. Checks:
#   (a) the dashboard answers through the demo's loopback port forward (its index page, and the REST API);
#   (b) each injected fault becomes the incident the demo announced (GET /api/v1/incidents): its top root
#       cause has the expected kind, entity and fault type, and its affected jobs are exactly the expected ones;
#       no other incident is opened; the demo then runs on unattended until 10 minutes after its faults
#       started (HSNS_DEMO_TEST_SECONDS), and the incidents are still exactly those;
#   (b') the dashboard, open in Debian's chromium through the forward (web/tests/lab_view.mjs), colours each
#       fault's host x NPU port cells live within one report interval (3 s) of the aggregator listing the
#       alarm, and its alarm view names each fault's entity;
#   (c) no log of the run (aggregator, every hsnsd, the switches' lldpd, the demo's workers and its own output)
#       has an error line or a sanitizer report;
#   (d) Ctrl-C (SIGINT to the demo's process group, as a terminal sends it) stops the demo with status 130 and
#       leaves nothing behind: no namespace, pin, state directory, mount, process (hsnsd, aggregator, lldpd,
#       traffic, telemetry, port forward), listener on the port, and the machine's own qdiscs unchanged.
# A missing prerequisite (root, a tool, a binary) is a failure, never a skip.
# Usage: demo_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail

src=${1:?source dir}
build=${2:?build dir}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces, eBPF)"
for tool in ip tc curl jq lldpd lldpcli socat logger unshare setsid ss node; do
  command -v "$tool" >/dev/null || fail "$tool is not installed"
done
[ -x "${HSNS_CHROMIUM:-/usr/bin/chromium}" ] || fail "chromium is not installed (scripts/install-deps.sh)"
[ -d "$src/web/node_modules/playwright-core" ] || fail "web/node_modules is missing (npm ci in web/)"
for b in aggregator/hsns-aggregator daemon/core/hsnsd cli/hsnsctl lab/roce_gen/hsns-roce-gen web/dist/index.html; do
  [ -e "$build/$b" ] || fail "$build/$b is missing (build hsns-aggregator hsnsd hsnsctl hsns-roce-gen hsns_web)"
done

prefix=dm$$
state=$src/build/lab-$prefix
port=$((20000 + $$ % 20000))
work=$(mktemp -d /tmp/hsns-demo-test.XXXXXX)
expect=$work/expected.json
log=$work/demo.log
qdiscs_before=$(tc qdisc show | sort)
token=lab-operator-token-0123456789abcdef
step() { echo; echo "=== $(date -u +%H:%M:%S) $*"; }
# Through the demo's port forward (socat, then `ip netns exec` per connection: slow on a busy machine).
api() { curl -sS --max-time 60 --retry 5 --retry-all-errors -H "Authorization: Bearer $token" "http://127.0.0.1:$port$1"; }

# The demo runs as its own process group (job control), so that SIGINT reaches it as Ctrl-C would.
set -m
"$src/scripts/demo.sh" --bin "$build" --prefix "$prefix" --port "$port" --timetable short \
  --expect-file "$expect" >"$log" 2>&1 &
demo=$!
set +m
# The dashboard watching the faults arrive (web/tests/lab_view.mjs): logs in while the cluster comes up.
node "$src/web/tests/lab_view.mjs" --url "http://127.0.0.1:$port" --token "$token" --expect "$expect" \
  --artifacts "$build/web/artifacts" --interval-ms 3000 --timeout-s 1500 --stop-file "$work/lab_view.stop" \
  >"$work/lab_view.log" 2>&1 &
viewer=$!
stopped=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  kill "$viewer" 2>/dev/null || true
  if [ $stopped = 0 ]; then
    kill -INT -- "-$demo" 2>/dev/null || true
    for _ in $(seq 120); do kill -0 "$demo" 2>/dev/null || break; sleep 1; done
    "$src/lab/hsns-lab" down --prefix "$prefix" --state "$state" >/dev/null 2>&1 || true
  fi
  if [ $rc != 0 ]; then
    echo "--- the demo's output (tail)" >&2
    tail -n 40 "$log" >&2 || true
  fi
  rm -rf "$work"
  [ $rc = 0 ] && echo "PASS"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "the demo starts (up to 15 minutes on a busy machine)"
for _ in $(seq 900); do
  [ -s "$expect" ] && break
  kill -0 "$demo" 2>/dev/null || fail "the demo exited before injecting its faults"
  sleep 1
done
[ -s "$expect" ] || fail "the demo did not reach its fault timetable within 15 minutes"
started=$SECONDS
jq -c '.[]' "$expect"

step "(a) the dashboard through the loopback port forward"
page=$(curl -sS --max-time 60 --retry 5 --retry-all-errors "http://127.0.0.1:$port/") || fail "no answer on 127.0.0.1:$port"
grep -qi '<html' <<<"$page" || fail "127.0.0.1:$port/ is not the dashboard: $(head -c 200 <<<"$page")"
api /api/v1/jobs | jq -e '[.items[].name] | sort == ["job-a", "job-b"]' >/dev/null ||
  fail "the REST API through the forward does not list job-a and job-b"

step "(b) each fault becomes its incident (up to 4 minutes)"
# An incident matches a fault when its top root cause is the fault's and its affected jobs are the fault's.
matched() {
  api '/api/v1/incidents?state=all&limit=100' | jq -e --slurpfile e "$expect" '
    .items as $inc | $e[0] | all(. as $f | any($inc[]; (.root_causes[0] // {}) as $r
      | $r.kind == $f.kind and $r.entity == $f.entity and $r.fault_type == $f.fault_type
        and ([.affected_jobs[].name] | sort) == ($f.jobs | sort)))' >/dev/null 2>&1
}
until matched; do
  [ $((SECONDS - started)) -lt 240 ] || break
  kill -0 "$demo" 2>/dev/null || fail "the demo exited while its faults were running"
  sleep 5
done
incidents=$(api '/api/v1/incidents?state=all&limit=100')
jq -c '.items[] | {id, state, root: (.root_causes[0] | {kind, entity, fault_type, score}),
  jobs: [.affected_jobs[].name], alarms: .alarm_count}' <<<"$incidents"
matched || fail "not every fault became its expected incident (expected: $(jq -c . "$expect"))"
echo "every fault matched its incident after $((SECONDS - started)) s"
n=$(jq '.items | length' <<<"$incidents")
[ "$n" = "$(jq length "$expect")" ] || fail "$n incidents, expected exactly $(jq length "$expect")"

# The issue's "10 minutes unattended": the demo keeps running (traffic, telemetry, the repaired faults'
# incidents resolving) until run_for seconds after its faults started; then the incidents are read again.
run_for=${HSNS_DEMO_TEST_SECONDS:-600}
step "(b) unattended until $run_for s after the faults started"
while [ $((SECONDS - started)) -lt "$run_for" ]; do
  kill -0 "$demo" 2>/dev/null || fail "the demo exited $((SECONDS - started)) s after its faults started"
  api /api/v1/jobs >/dev/null || fail "the REST API stopped answering $((SECONDS - started)) s after the faults started"
  sleep 20
done
matched || fail "after $run_for s not every fault has its expected incident any more"
n=$(api '/api/v1/incidents?state=all&limit=100' | jq '.items | length')
[ "$n" = "$(jq length "$expect")" ] || fail "after $run_for s: $n incidents, expected exactly $(jq length "$expect")"
echo "after $((SECONDS - started)) s: the same $n incidents, no other"

step "(b) the dashboard: each fault's cells coloured live, within one report interval, and in the alarm view"
viewed=0
touch "$work/lab_view.stop"  # the faults had their time: what the page has not flagged by now is a failure
wait "$viewer" || viewed=$?
cat "$work/lab_view.log"
[ $viewed = 0 ] || fail "the dashboard did not show every fault in time (web/tests/lab_view.mjs)"

step "(c) no error in any log"
logs=("$state/aggregator.log" "$state"/h*/hsnsd.log "$state"/lldpd/*/lldpd.log "$state/demo/workers.log" "$log")
for f in "${logs[@]}"; do [ -f "$f" ] || fail "log $f is missing"; done
# hsns programs log "<program>: <level>: ...", lldpd "[<LEVEL>/<component>]"; curl and the shell say "error".
errors=$(grep -H -E -i ': (error|fatal|critical|emergency|alert):|^(error|fatal)\b|\[(ERR|CRIT|FATAL|EMERG|ALERT)|Sanitizer|runtime error:|curl: \([0-9]+\)|syntax error|command not found' \
  "${logs[@]}" || true)
[ -z "$errors" ] || fail "error lines in the logs:
$(head -n 20 <<<"$errors")"

step "(d) Ctrl-C: the demo stops and nothing is left behind"
kill -INT -- "-$demo"
rc=0
wait "$demo" || rc=$?
stopped=1
[ $rc = 130 ] || fail "the demo exited with status $rc after SIGINT (expected 130)"
grep -q "demo stopped" "$log" || fail "the demo did not report its teardown"
! grep -q "ignored SIGTERM" "$log" || fail "a process needed SIGKILL at teardown"
left=$(ip netns list | awk '{print $1}' | grep -E "^$prefix-" || true)
[ -z "$left" ] || fail "namespaces left behind: $left"
[ ! -e "/sys/fs/bpf/hsns-lab/$prefix" ] || fail "pins left in /sys/fs/bpf/hsns-lab/$prefix"
[ ! -e "$state" ] || fail "state directory $state left behind"
! grep -qF "$state" /proc/self/mountinfo || fail "mounts of $state left behind"
left=$(for p in /proc/[0-9]*; do
  tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -E -- "$state|--prefix $prefix|$prefix-mgmt|TCP-LISTEN:$port," || true
done)
[ -z "$left" ] || fail "processes left behind: $left"
! ss -ltn | grep -q "127.0.0.1:$port " || fail "something still listens on 127.0.0.1:$port"
[ "$(tc qdisc show | sort)" = "$qdiscs_before" ] || fail "the machine's qdiscs changed"
echo "the demo ran $((SECONDS - started)) s after its faults started; nothing left behind"
