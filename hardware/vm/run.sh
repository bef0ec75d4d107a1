#!/usr/bin/env bash
# The emulated-hardware tier: boots Debian 12's kernel under qemu (TCG, no KVM) with gpio-sim
# (built out of tree here) and snd-dummy, and runs a host-built lineupctl against a simulated
# Raspberry Pi 4 header chip ("pinctrl-bcm2711", lines GPIO0..GPIO27) from the host's own
# userland, mounted read-only over 9p. See hardware/vm/README.md.
#
#   hardware/vm/run.sh [--name v1] [--lineupctl PATH] [--ld-library-path DIR]
#                      [--expect-api v1|v2] [--edgewatch PATH] [--lineupd PATH]
#                      [--timeout SECONDS] [--no-install] [--systemd --deb PATH]
#
# --lineupd turns on the daemon phase (guest.sh run_daemon), for when lineupd --config exists.
# --systemd boots into systemd as PID 1 instead (an overlay of the host root) and runs lineupd
# as the real systemd/lineupd.service, checked by systemd-guest.sh (README, "The systemd phase"),
# installed from the station's Debian package given by --deb (packaging/deb/build.sh).
#
# Prints the run's JSON object as its last line; exits non-zero on any mismatch, and fails
# loudly (exit 2, "EMULATED-HARDWARE TIER DID NOT RUN") when qemu cannot run the guest at all.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=$root/.build-vm
name=v1
lineupctl=$root/.build/debug/lineupctl
ldpath=""
expect_api=""
edgewatch=""
lineupd=""
# Around qemu, for a guest that hangs. A run took 168 s beside the tests at the last stop and
# more than 300 s at 50368cd's (v2, still working: the Swift tests then took 643 s beside it).
timeout_s=480
install=1
systemd_mode=""
deb=""
while [ $# -gt 0 ]; do
    case "$1" in
        --name) name=$2; shift 2 ;;
        --lineupctl) lineupctl=$2; shift 2 ;;
        --ld-library-path) ldpath=$2; shift 2 ;;
        --expect-api) expect_api=$2; shift 2 ;;
        --edgewatch) edgewatch=$2; shift 2 ;;
        --lineupd) lineupd=$2; shift 2 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        --no-install) install=0; shift ;;
        --systemd) systemd_mode=1; shift ;;
        --deb) deb=$2; shift 2 ;;
        *) echo "run.sh: unknown argument $1" >&2; exit 64 ;;
    esac
done
log() { printf 'vm[%s] %s\n' "$name" "$*" >&2; }
loud_fail() {
    printf '\n%s\n' "################################################################" >&2
    printf '### EMULATED-HARDWARE TIER DID NOT RUN (%s): %s\n' "$name" "$*" >&2
    printf '%s\n\n' "################################################################" >&2
    exit 2
}
# shellcheck source=hardware/vm/lib.sh
. "$here/lib.sh"
[ -x "$lineupctl" ] || { echo "run.sh: $lineupctl is not built" >&2; exit 1; }
case "$lineupctl" in /*) ;; *) lineupctl=$PWD/$lineupctl ;; esac
case "$edgewatch" in ""|/*) ;; *) edgewatch=$PWD/$edgewatch ;; esac
case "$lineupd" in ""|/*) ;; *) lineupd=$PWD/$lineupd ;; esac
if [ -n "$systemd_mode" ]; then
    # The package installs the daemon the unit runs: it is required, and the name says which
    # phase ran.
    [ -n "$deb" ] && [ -f "$deb" ] || { echo "run.sh: --systemd needs --deb PATH (packaging/deb/build.sh)" >&2; exit 1; }
    [ "$name" != v1 ] || name=systemd
    # apt's install, remove and purge of the package under TCG: more than the other runs.
    [ "$timeout_s" != 480 ] || timeout_s=900
fi

# 1. Debian packages (only when something is missing, so a warm run makes no apt call).
pkgs="qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1 busybox-static gpiod gcc make kmod cpio"
# The systemd phase boots the host's own systemd, udev and passwd tools; sqlite3 checks the log.
# curl asks lineup-web for its login page.
[ -z "$systemd_mode" ] || pkgs="$pkgs systemd udev passwd util-linux sqlite3 curl"
# shellcheck disable=SC2086
[ "$install" != 1 ] || install_missing $pkgs
command -v qemu-system-x86_64 >/dev/null || loud_fail "qemu-system-x86_64 is not installed"

# 2. The kernel: the newest Debian 6.1 amd64 image with its headers.
kver=$(newest_kernel) || exit 2
kernel=/boot/vmlinuz-$kver

# 3. gpio-sim out of tree (cached per kernel).
ko=$("$here/build-module.sh" "$kver" "$cache/module-$kver" | tail -1)

# The run's own files: ci.sh runs several at once, so none is shared with another run.
work=$cache/run-$name
mkdir -p "$work"
# The dog's bouncing contact (chatter.c), exact where a shell under emulation is not.
gcc -O2 -Wall -Wextra -Werror "$here/chatter.c" -o "$work/chatter"

# 4. The initramfs: static busybox, /init, the modules in load order.
t0=$(date +%s.%N)
mods="configfs 9p 9pnet_virtio virtio_pci snd-dummy"
# The systemd phase's root is an overlay: the host root (9p) under a tmpfs.
[ -z "$systemd_mode" ] || mods="$mods overlay"
# shellcheck disable=SC2086
make_initramfs "$kver" "$work/initramfs-$kver" "$work/initramfs-$kver.cpio.gz" "$ko" $mods

# 5. The run's output directory, shared read-write with the guest.
out=$cache/runs/$name
rm -rf "$out"; mkdir -p "$out"
cat > "$out/params.sh" <<P
REPO='$root'
RUN_NAME='$name'
LINEUPCTL='$lineupctl'
LINEUPCTL_LD_LIBRARY_PATH='$ldpath'
EXPECT_API='$expect_api'
EDGEWATCH='$edgewatch'
CHATTER='$work/chatter'
LINEUPD='$lineupd'
SIM_LABEL='pinctrl-bcm2711'
SIM_LINES=28
SYSTEMD_MODE='$systemd_mode'
P
append="console=ttyS0 panic=-1 loglevel=4 rdinit=/init no_timer_check"
if [ -n "$systemd_mode" ]; then
    cp "$deb" "$out/"
    "$here/systemd-stage.sh" "$out/stage" "$out/$(basename "$deb")" "$work/chatter"
    # systemd boots straight into the test target; its own status lines would only clutter
    # the console, which carries the result line.
    append="$append systemd.unit=lineup-vm-test.target systemd.show_status=error systemd.firstboot=no"
fi

# 6. Boot. 2 GiB: the systemd phase installs the station's debug package into a tmpfs (half the
# guest's memory), and with lineup-sync in it 1 GiB left lineupd's log 103 MB free, under its
# 200 MB warning. TCG only: no -enable-kvm (KVM hangs on this kind of machine, and CI must not
# depend on it). The whole run is bounded by timeout(1).
log "booting $kernel under qemu (TCG), timeout ${timeout_s}s"
set +e
timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 \
    -machine pc -accel tcg -cpu max -m 2048 -smp 1 \
    -nographic -no-reboot -monitor none -nic none \
    -kernel "$kernel" -initrd "$work/initramfs-$kver.cpio.gz" \
    -append "$append" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$out",mount_tag=out,security_model=none,multidevs=remap \
    < /dev/null > "$out/console.log" 2> "$out/qemu.stderr"
qrc=$?
set -e
t1=$(date +%s.%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
tr -d '\r' < "$out/console.log" > "$out/console.txt"
grep -a '^lineup-vm:\|^guest:' "$out/console.txt" >&2 || true
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
    tail -30 "$out/console.txt" >&2
    loud_fail "qemu did not finish within ${timeout_s}s (console: $out/console.txt)"
fi
if grep -aq '^LINEUP-VM-FATAL' "$out/console.txt"; then
    loud_fail "guest setup failed: $(grep -a '^LINEUP-VM-FATAL' "$out/console.txt" | head -1)"
fi
grep -aq '^LINEUP-VM-DONE' "$out/console.txt" || {
    tail -30 "$out/console.txt" >&2; cat "$out/qemu.stderr" >&2
    loud_fail "the guest never reached the end of its script (qemu exit $qrc, console: $out/console.txt)"
}
boot=$(grep -ao 'lineup-vm: \[[0-9.]*\] init up' "$out/console.txt" | head -1 | sed 's/.*\[\([0-9.]*\)\].*/\1/')
up=$(sed -n 's/^LINEUP-VM-DONE rc=[0-9]* uptime=\([0-9.]*\).*/\1/p' "$out/console.txt" | head -1)
grc=$(sed -n 's/^LINEUP-VM-DONE rc=\([0-9]*\).*/\1/p' "$out/console.txt" | head -1)
result=$(grep -a '^LINEUP-VM-RESULT ' "$out/console.txt" | tail -1 | sed 's/^LINEUP-VM-RESULT //')
if [ -z "$result" ]; then
    tail -5 "$out/console.txt" >&2
    log "FAILED: guest.sh ended (exit $grc) without its result line: a bug in the guest script? (console: $out/console.txt)"
    exit 1
fi
log "kernel up at ${boot}s guest time; guest done at ${up}s; host wall ${wall}s (initramfs+boot+run)"
result="${result%\}},\"boot_s\":${boot:-null},\"guest_s\":${up:-null},\"wall_s\":$wall}"
echo "$result" > "$out/result.json"
echo "$result"
[ "$grc" = 0 ] || { log "FAILED: guest checks exit $grc (details: $out/)"; exit 1; }
