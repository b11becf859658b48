# shellcheck shell=bash
# Sourced by the lab tests: tears a lab down with `lab down` (the caller's function running hsns-lab with
# the test's --prefix/--state) and checks that nothing of it is left: a process that needed SIGKILL, a
# namespace, bpffs pins, the state directory, a process naming the state directory (the switches' lldpd
# run with their files there) or a mount of it. Prints the teardown's output and every finding ("FAIL: ...");
# returns 1 if anything is left or `down` failed. Usage: lab_teardown_checked PREFIX STATE
lab_teardown_checked() {
  local prefix=$1 state=$2 rc=0 down_log leftovers
  down_log=$(lab down 2>&1) || { echo "$down_log" >&2; rc=1; }
  [ -n "$down_log" ] && echo "$down_log"
  if grep -q "ignored SIGTERM" <<<"$down_log"; then
    echo "FAIL: a process needed SIGKILL at teardown" >&2
    rc=1
  fi
  leftovers=$(ip netns list | awk '{print $1}' | grep -E "^$prefix-" || true)
  [ -z "$leftovers" ] || { echo "FAIL: namespaces left behind: $leftovers" >&2; rc=1; }
  [ ! -e "/sys/fs/bpf/hsns-lab/$prefix" ] || { echo "FAIL: pins left in /sys/fs/bpf/hsns-lab/$prefix" >&2; rc=1; }
  [ ! -e "$state" ] || { echo "FAIL: state directory $state left behind" >&2; rc=1; }
  leftovers=$(for p in /proc/[0-9]*; do tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -F "$state/" || true; done)
  [ -z "$leftovers" ] || { echo "FAIL: processes of the lab left behind: $leftovers" >&2; rc=1; }
  if grep -qF "$state" /proc/self/mountinfo; then echo "FAIL: mounts of $state left behind" >&2; rc=1; fi
  return $rc
}
