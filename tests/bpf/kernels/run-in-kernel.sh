#!/usr/bin/env bash
# run-in-kernel.sh: run one program as root inside a Debian kernel under qemu and exit with its exit code.
#
# Usage: run-in-kernel.sh --kernel-package NAME --cache DIR [OPTIONS] -- PROGRAM [ARGS...]
#
#   --kernel-package NAME  a Debian kernel image package apt knows, e.g. linux-image-6.1.0-57-amd64 or
#                          linux-image-6.1.0-57-amd64-unsigned; or "debian12": the package Debian 12's
#                          linux-image-amd64 metapackage depends on now (resolved with apt-cache)
#   --cache DIR            where the kernel package (.deb) and its vmlinuz are kept; a package already
#                          there with the size and SHA-256 apt expects is not downloaded again
#   --timeout SECONDS      wall-clock limit for the whole guest run, boot included (default 600)
#   --boot-timeout SECONDS limit from qemu's start to PROGRAM's start (default 120; a hung boot fails early)
#   --memory MIB           guest memory (default 2048)
#   --smp N                guest CPUs (default 2)
#   --accel auto|kvm|tcg   default: the environment's HSNS_QEMU_ACCEL, else auto: KVM when /dev/kvm can be
#                          opened for reading and writing and is hardware KVM (kvm_intel or kvm_amd), else
#                          TCG (much slower)
#   --add PATH             also put this host file (and, for a dynamic ELF, the libraries it needs) into the
#                          guest at the same absolute path; repeatable (e.g. a BPF object for bpftool)
#   --env NAME=VALUE       set this variable for PROGRAM in the guest; repeatable. ASAN_OPTIONS,
#                          UBSAN_OPTIONS, LSAN_OPTIONS and GTEST_* are passed on from this environment
#   --append ARGS          extra kernel command-line arguments (e.g. "loglevel=7" for all kernel messages)
#
# The guest has no llvm-symbolizer, so sanitizer stack traces show module+offset; for symbols add it (with
# libLLVM, about 190 MB more, a few seconds): --add "$(readlink -f "$(command -v llvm-symbolizer)")" and
# --env ASAN_SYMBOLIZER_PATH=<that path>.
#
# Contract:
#   - The kernel package is fetched with `apt-get download` (candidate version from this machine's apt lists)
#     and only unpacked (dpkg-deb) into the cache: no kernel is installed on this machine.
#   - The guest boots from an initramfs (cpio newc, gzip) holding busybox (Debian's busybox-static), PROGRAM
#     at its real absolute path, every shared library it needs (ldd, with the dynamic loader) and an /init
#     that mounts proc, sysfs, devtmpfs, bpffs at /sys/fs/bpf, debugfs and tracefs, lifts RLIMIT_MEMLOCK,
#     runs PROGRAM ARGS as root (uid 0, all capabilities) with stdin from /dev/null, prints an end marker with
#     its exit code and powers off. The guest has no network device.
#   - The guest's serial console is streamed to stdout (kernel messages at warning level and above, and
#     PROGRAM's output). The script's own lines go to stderr, among them the guest's `uname -r`, the boot
#     time (qemu start to PROGRAM start) and the run time (PROGRAM start to end marker).
#   - Exit status: PROGRAM's exit status as the guest saw it (128+N for a signal); 124 when the guest did not
#     finish within the timeout; 125 when the guest failed without reporting one (kernel panic, no end
#     marker, qemu error) or the harness could not set up the run; 2 for a usage error.
#
# Needs (Debian 12): qemu-system-x86 (--no-install-recommends is enough), busybox-static and cpio; all else
# it uses (apt, dpkg-deb, coreutils, gzip, findutils, grep, sed, awk, ldd) is in every Debian base system.
# Root is not needed, but KVM needs read-write access to /dev/kvm.
set -euo pipefail
shopt -s extglob

readonly me=run-in-kernel
readonly exit_timeout=124 exit_failure=125 exit_usage=2

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}
die() {
  printf '%s: error: %s\n' "$me" "$*" >&2
  exit "$exit_failure"
}
usage_error() {
  printf '%s: %s (see --help)\n' "$me" "$*" >&2
  exit "$exit_usage"
}
note() { printf '%s: %s\n' "$me" "$*" >&2; }

# Whatever this run leaves behind goes on exit, however it exits: temporary folders, a running qemu.
temporary=() qemu_pid=''
# shellcheck disable=SC2317 # run by the trap
cleanup() {
  [[ -z $qemu_pid ]] || kill -TERM "$qemu_pid" 2>/dev/null || true
  ((${#temporary[@]} == 0)) || rm -rf -- "${temporary[@]}"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

kernel_package='' cache_dir='' append=''
timeout_s=600 boot_timeout_s=120 memory_mib=2048 smp=2 accel=${HSNS_QEMU_ACCEL:-auto}
extra_files=() guest_env=()
while (($#)); do
  case $1 in
    --kernel-package | --cache | --timeout | --boot-timeout | --memory | --smp | --accel | --add | --env | --append)
      (($# >= 2)) || usage_error "$1 needs a value"
      case $1 in
        --kernel-package) kernel_package=$2 ;;
        --cache) cache_dir=$2 ;;
        --timeout) timeout_s=$2 ;;
        --boot-timeout) boot_timeout_s=$2 ;;
        --memory) memory_mib=$2 ;;
        --smp) smp=$2 ;;
        --accel) accel=$2 ;;
        --add) extra_files+=("$2") ;;
        --env) guest_env+=("$2") ;;
        --append) append+=" $2" ;;
      esac
      shift 2
      ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) usage_error "unknown argument: $1" ;;
  esac
done
(($# >= 1)) || usage_error "no PROGRAM after --"
[[ -n $kernel_package ]] || usage_error "--kernel-package is required"
[[ -n $cache_dir ]] || usage_error "--cache is required"
for number in "$timeout_s" "$boot_timeout_s" "$memory_mib" "$smp"; do
  [[ $number =~ ^[1-9][0-9]*$ ]] || usage_error "not a positive integer: $number"
done
[[ $accel =~ ^(auto|kvm|tcg)$ ]] || usage_error "--accel (or HSNS_QEMU_ACCEL) must be auto, kvm or tcg, not '$accel'"
for assignment in "${guest_env[@]}"; do
  [[ $assignment =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || usage_error "--env wants NAME=VALUE, not '$assignment'"
done
program=$(command -v -- "$1") || usage_error "PROGRAM not found: $1"
program=$(realpath -- "$program")
shift
program_args=("$@")

for tool in qemu-system-x86_64 busybox cpio gzip apt-get apt-cache dpkg-deb ldd sha256sum timeout; do
  command -v "$tool" >/dev/null || die "$tool not found (Debian packages: qemu-system-x86 busybox-static cpio)"
done

# ---- the kernel ----------------------------------------------------------------------------------------
if [[ $kernel_package == debian12 ]]; then
  # The metapackage's candidate version names the current ABI package, e.g. linux-image-6.1.0-57-amd64.
  kernel_package=$(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[^ ]*\).*/\1/p' | head -n1)
  [[ $kernel_package =~ ^linux-image-6\.1\.0-[0-9]+-amd64(-unsigned)?$ ]] ||
    die "debian12: linux-image-amd64 does not depend on a Debian 12 (6.1) kernel here ('$kernel_package');" \
      "is apt on bookworm, and has 'apt-get update' run?"
  note "debian12 is $kernel_package"
fi
[[ $kernel_package =~ ^[a-z0-9][a-z0-9.+-]*$ ]] || usage_error "not a package name: $kernel_package"

mkdir -p -- "$cache_dir"
cache_dir=$(realpath -- "$cache_dir")
# What apt would download: 'URI' FILE SIZE SHA256:HASH (from the local lists; nothing is fetched).
uri_line=$(apt-get download --print-uris "$kernel_package" 2>&1) ||
  die "apt does not know $kernel_package (has 'apt-get update' run?): $uri_line"
read -r _ deb_name deb_size deb_hash <<<"$(grep -m1 "^'.*\.deb' " <<<"$uri_line")"
[[ -n $deb_name && $deb_hash == SHA256:* ]] || die "unexpected answer from apt-get download --print-uris: $uri_line"
deb_hash=${deb_hash#SHA256:}
deb=$cache_dir/$deb_name

deb_is_good() {
  [[ -f $deb && $(stat -c %s -- "$deb") == "$deb_size" ]] &&
    sha256sum -- "$deb" | { read -r hash _ && [[ $hash == "$deb_hash" ]]; }
}
if deb_is_good; then
  note "kernel package cached: $deb"
else
  note "downloading $deb_name"
  download_dir=$(mktemp -d -- "$cache_dir/.download.XXXXXX")
  temporary+=("$download_dir")
  apt_options=()
  # As root, apt hands the download to its _apt user, which cannot write here, and then downloads as root
  # anyway with a warning: ask for that directly.
  ((EUID != 0)) || apt_options=(-o APT::Sandbox::User=root)
  (cd -- "$download_dir" && apt-get download -q "${apt_options[@]}" "$kernel_package") >&2 ||
    die "apt-get download $kernel_package failed"
  mv -f -- "$download_dir/$deb_name" "$deb"
  deb_is_good || die "$deb does not have the size and SHA-256 apt expects"
fi

# Unpack the package once, beside it (dpkg-deb -x: files only, no maintainer scripts), keep boot/ (vmlinuz,
# config, System.map) and drop the modules: the guest needs none.
kernel_dir=$cache_dir/${deb_name%.deb}
if ! compgen -G "$kernel_dir/boot/vmlinuz-*" >/dev/null; then
  unpack_dir=$(mktemp -d -- "$cache_dir/.unpack.XXXXXX")
  temporary+=("$unpack_dir")
  dpkg-deb -x "$deb" "$unpack_dir/root" || die "dpkg-deb -x $deb failed"
  mkdir -p -- "$unpack_dir/kernel"
  mv -- "$unpack_dir/root/boot" "$unpack_dir/kernel/boot" 2>/dev/null || true
  compgen -G "$unpack_dir/kernel/boot/vmlinuz-*" >/dev/null ||
    die "$deb_name has no boot/vmlinuz-*: not a kernel image package"
  rm -rf -- "$kernel_dir"
  mv -- "$unpack_dir/kernel" "$kernel_dir"
fi
vmlinuz=$(compgen -G "$kernel_dir/boot/vmlinuz-*" | head -n1)
note "kernel: $vmlinuz"

# ---- the initramfs -------------------------------------------------------------------------------------
work=$(mktemp -d -t run-in-kernel.XXXXXX)
temporary+=("$work")
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,root,etc}
chmod 1777 "$root/tmp"

# Copies a host file to the same path in the guest (following symlinks to the file's contents).
put() {
  local source=$1 target=$root$1
  [[ -e $target ]] && return 0
  mkdir -p -- "$(dirname -- "$target")"
  cp -L -- "$source" "$target"
}
# Copies a host file and, when it is a dynamic ELF object, every library ldd resolves for it and the loader.
put_with_libraries() {
  local file=$1 ldd_out line lib
  put "$file"
  # ldd's exit status is 1 for a static or non-ELF file ("not a dynamic executable"): nothing to add then.
  ldd_out=$(LC_ALL=C ldd -- "$file" 2>&1) || return 0
  while IFS= read -r line; do
    case $line in
      *'=> not found'*) die "$file needs ${line%% *} and ldd does not find it" ;;
      *'=> /'*) lib=${line#*=> }; lib=${lib% (0x*}; put "$lib" ;;
      [[:space:]]/*) lib=${line#"${line%%/*}"}; lib=${lib% (0x*}; put "$lib" ;;
    esac
  done <<<"$ldd_out"
}

busybox=$(command -v busybox)
put_with_libraries "$program"
for file in "${extra_files[@]}"; do
  [[ -f $file ]] || die "--add: no such file: $file"
  put_with_libraries "$(realpath -- "$file")"
done
cp -L -- "$busybox" "$root/bin/busybox"
if LC_ALL=C ldd "$busybox" 2>/dev/null | grep -qF '=>'; then
  note "warning: $busybox is dynamically linked (busybox-static is expected); copying its libraries"
  put_with_libraries "$busybox"
fi
# The kernel opens /dev/console for init before anything is mounted; without the node (only root can make
# it) init starts without stdio and fixes that itself once devtmpfs is up.
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true

# Single-quotes a word for the guest's POSIX shell.
shell_quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

marker=HSNS-RUN-IN-KERNEL-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
command_line=$(shell_quote "$program")
for arg in "${program_args[@]}"; do command_line+=" $(shell_quote "$arg")"; done
exports=''
while IFS= read -r name; do
  exports+="export $name=$(shell_quote "${!name}")"$'\n'
done < <(compgen -v | grep -E '^(ASAN_OPTIONS|UBSAN_OPTIONS|LSAN_OPTIONS|GTEST_[A-Z_]+)$' || true)
for assignment in "${guest_env[@]}"; do
  exports+="export ${assignment%%=*}=$(shell_quote "${assignment#*=}")"$'\n'
done

cat >"$root/init" <<EOF
#!/bin/busybox sh
# Generated by run-in-kernel.sh: mount the kernel's file systems, run the program, report, power off.
/bin/busybox mkdir -p /dev /proc /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t bpf bpf /sys/fs/bpf
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm
ulimit -l unlimited 2>/dev/null || echo "run-in-kernel: could not lift RLIMIT_MEMLOCK"
$exports
cd /root
echo
echo "$marker START kernel=\$(uname -r) uptime=\$(cut -d' ' -f1 /proc/uptime) version=\$(uname -v)"
$command_line </dev/null
rc=\$?
echo
echo "$marker EXIT \$rc uptime=\$(cut -d' ' -f1 /proc/uptime)"
poweroff -f
sleep 5
EOF
chmod 755 "$root/init"

initrd=$work/initrd.gz
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null --create --format=newc --owner=0:0 --quiet) |
  gzip -1 >"$initrd"
note "initramfs: $(du -h "$initrd" | cut -f1) ($program with $(find "$root" -name '*.so*' -type f | wc -l) libraries)"

# ---- the guest -----------------------------------------------------------------------------------------
if [[ $accel == auto ]]; then
  accel=tcg
  if ! { : <>/dev/kvm; } 2>/dev/null; then
    note "/dev/kvm cannot be opened for reading and writing: using TCG (slow)"
  elif [[ ! -e /sys/module/kvm_intel && ! -e /sys/module/kvm_amd ]]; then
    # e.g. kvm_pvm (KVM without hardware virtualization), which runs only kernels built as PVM guests:
    # Debian's kernel hangs right after decompression there.
    note "/dev/kvm is not hardware KVM (no kvm_intel or kvm_amd, but $(cd /sys/module && echo kvm*)): using TCG (slow)"
  else
    accel=kvm
  fi
fi
if [[ $accel == kvm ]]; then
  accel_args=(-enable-kvm -cpu host)
else
  accel_args=(-accel tcg -cpu max)
fi
qemu=(qemu-system-x86_64 "${accel_args[@]}" -machine pc -m "$memory_mib" -smp "$smp"
  -nodefaults -no-user-config -nographic -serial stdio -monitor none -nic none -no-reboot
  -kernel "$vmlinuz" -initrd "$initrd"
  -append "console=ttyS0 rdinit=/init panic=-1 quiet$append")
note "booting $(basename "$vmlinuz") with ${accel^^} (${memory_mib} MiB, $smp CPUs," \
  "timeout ${timeout_s} s, ${boot_timeout_s} s to boot)"

guest_kernel='' guest_version='' guest_rc='' panic='' stopped=''
t_boot=$EPOCHREALTIME t_start='' t_end=''
# Handles one line of the guest's console: show it and pick out the markers and a panic.
console_line() {
  local line=${1//$'\r'/} fields
  # SeaBIOS resets and clears the terminal (ESC c, CSI sequences): keep them off the caller's terminal.
  line=${line//$'\e'c/}
  line=${line//$'\e'\[*([0-9;?])[A-Za-z]/}
  printf '%s\n' "$line"
  case $line in
    *"$marker START "*)
      t_start=$EPOCHREALTIME
      fields=${line#*"$marker START "}
      guest_kernel=${fields#kernel=}; guest_kernel=${guest_kernel%% *}
      guest_version=${fields#*version=}
      ;;
    *"$marker EXIT "*)
      t_end=$EPOCHREALTIME
      guest_rc=${line#*"$marker EXIT "}; guest_rc=${guest_rc%% *}
      ;;
    *'Kernel panic - not syncing'*) panic=$line ;;
  esac
}
# True when at least $2 whole seconds have passed since the $EPOCHREALTIME value $1.
elapsed() { ((${EPOCHREALTIME%.*} - ${1%.*} >= $2)); }

# qemu runs under `timeout` as well, a backstop should this script be killed before it stops qemu itself.
exec {console}< <(exec timeout --kill-after=10 "$((timeout_s + 30))" "${qemu[@]}" </dev/null 2>&1)
qemu_pid=$!
pending='' chunk=''
while :; do
  status=0
  IFS= read -r -t 1 -u "$console" chunk || status=$?
  if ((status == 0)); then
    console_line "$pending$chunk"
    pending=''
    continue
  fi
  if ((status <= 128)); then # end of the output: qemu has stopped
    [[ -z $pending$chunk ]] || console_line "$pending$chunk"
    break
  fi
  pending+=$chunk # a read that timed out keeps what it had of a line
  if [[ -z $stopped && -z $t_start ]] && elapsed "$t_boot" "$boot_timeout_s"; then
    stopped="the guest did not start PROGRAM within ${boot_timeout_s} s of qemu's start"
  elif [[ -z $stopped ]] && elapsed "$t_boot" "$timeout_s"; then
    stopped="the guest did not finish within ${timeout_s} s"
  elif [[ -z $stopped && -n $t_end ]] && elapsed "$t_end" 30; then
    stopped="the guest did not power off within 30 s of PROGRAM's exit"
  else
    continue
  fi
  kill -TERM "$qemu_pid" 2>/dev/null || true
done
exec {console}<&-
qemu_status=0
wait "$qemu_pid" || qemu_status=$?
qemu_pid=''
t_done=$EPOCHREALTIME

seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f s", b - a }'; }
note "guest kernel: ${guest_kernel:-unknown}${guest_version:+ ($guest_version)}"
if [[ -n $t_start ]]; then
  note "boot: $(seconds "$t_boot" "$t_start") (qemu start to PROGRAM start, ${accel^^})"
  [[ -z $t_end ]] || note "run: $(seconds "$t_start" "$t_end") (PROGRAM start to exit)"
fi
if [[ -n $guest_rc ]]; then
  [[ $guest_rc =~ ^[0-9]+$ ]] || die "garbled exit status in the guest's end marker: $guest_rc"
  note "$(basename "$program") exited with status $guest_rc (total $(seconds "$t_boot" "$t_done"))"
  exit "$guest_rc"
fi
if [[ -n $stopped ]] || ((qemu_status == 124)); then
  note "error: timeout: ${stopped:-qemu ran past its backstop limit}${t_start:+ (PROGRAM was running)}"
  exit "$exit_timeout"
fi
[[ -z $panic ]] || die "the guest kernel panicked: $panic"
die "the guest stopped without reporting PROGRAM's exit status (qemu exit status $qemu_status)"
