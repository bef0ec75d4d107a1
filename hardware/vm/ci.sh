#!/usr/bin/env bash
# CI entry of the emulated-hardware tier (for .ci/run, after the unit tests):
# lineupctl and lineupd against Debian's libgpiod 1.6.3 (.build) and against libgpiod 2.x (PyPI
# gpiod sdist, .ci/libgpiod2.sh, kept in .build-v2/debug), then hardware/vm/run.sh for each.
# The v1 run's edges are watched by Debian's gpiomon (v1 uAPI), the v2 run's by edgewatch.c
# built against libgpiod 2.x (v2 uAPI). A third run (run.sh --systemd) boots systemd as PID 1 and
# installs the station's Debian package (packaging/deb/build.sh over the debug build, Debian's
# libgpiod 1.6.3) and runs lineupd.service and lineup-web.service. A fourth (powercut.sh) cuts the
# guest's power (SIGKILL of qemu) under a running v1 lineupd, POWERCUT_CUTS times (default 3).
#
#   hardware/vm/ci.sh            guests, prepare, then the four runs
#   hardware/vm/ci.sh guests     the guests' Debian packages and the gpio-sim module (no Swift:
#                                .ci/run has it done while it builds)
#   hardware/vm/ci.sh prepare    the builds: both libgpiod builds, the package, edgewatch
#                                (everything that takes SwiftPM's build lock)
#   hardware/vm/ci.sh snapshot   copies .build's lineupd and lineupctl (libgpiod 1.6.3) to
#                                .build-v1/debug, which the v1 and power-cut runs use: prepare
#                                puts v2 binaries in .build for a while, and a guest reads its
#                                binaries from the host while it runs
#   hardware/vm/ci.sh runs       the four runs only, from what those left. With VM_AFTER_PREPARE=1
#                                (.ci/run) they start before prepare ends: v1 and the power cut
#                                need only the snapshot, systemd and v2 wait for prepare's
#                                .build-vm/prepared (or fail at its .build-vm/prepare-failed)
#
# The runs go in VM_LANES lanes (default 2): each guest is one emulated CPU, one host thread;
# they share nothing but read-only inputs (each run has its own initramfs, chatter and output
# directory). Two lanes: v1, then systemd; power cut, then v2 (each lane starts with a run that
# needs only the build, and the longest run goes after the shortest: at 930d1f5 the runs took
# systemd 311 s, power cut 211 s, v1 158 s, v2 168 s, so 469 s and 379 s, where systemd then
# power cut took 522 s). Three (systemd; power cut, whose first boot idles about 100 s by design; v1, then
# v2) took CI's longest lane down by those 100 s, but a third guest beside the tests starved the
# page's password checks (a thread at nice 19 by design): three live-page tests' logins timed
# out together (CI-local run at ac12d09). Not the default until the tests allow for it.
# Prints one JSON object per run (also in .build-vm/results.jsonl) and its wall time.
# Exits non-zero on any mismatch; if qemu cannot run the guest it says so loudly and fails.
set -uo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-all}
case "$mode" in all | guests | snapshot | prepare | runs) ;; *) echo "hardware/vm/ci.sh: unknown mode $mode (all, guests, snapshot, prepare or runs)" >&2; exit 64 ;; esac
start=$SECONDS
say() { printf '\n== vm: %s (%ss)\n' "$*" "$((SECONDS - start))"; }
die() { printf '\n### EMULATED-HARDWARE TIER FAILED: %s\n' "$*" >&2; exit "${2:-1}"; }
mkdir -p .build-vm

# The libgpiod 2.x build's binaries are kept here, apart from .build's (see v2_build).
v2bin=.build-v2/debug
# The libgpiod 1.6.3 build's lineupd and lineupctl as the build left them (see snapshot).
v1bin=.build-v1/debug

snapshot() {
    rm -f .build-vm/prepared .build-vm/prepare-failed
    mkdir -p "$v1bin"
    local p
    for p in lineupd lineupctl; do
        cp .build/debug/"$p" "$v1bin/$p.new" && mv "$v1bin/$p.new" "$v1bin/$p" || die "cannot copy .build/debug/$p"
    done
    case "$("$v1bin/lineupctl" version | head -1)" in *"(v2 API)"*) die "the snapshot of .build uses libgpiod's v2 API" ;; esac
}

# Until prepare has left what systemd's and v2's runs need (only with VM_AFTER_PREPARE).
await_prepared() {
    [ -n "${VM_AFTER_PREPARE:-}" ] || return 0
    local t=$SECONDS
    until [ -e .build-vm/prepared ]; do
        [ ! -e .build-vm/prepare-failed ] || die "hardware/vm/ci.sh prepare failed"
        [ $((SECONDS - t)) -lt 1800 ] || die "hardware/vm/ci.sh prepare did not end within 30 minutes"
        sleep 2
    done
}

# lineupd and lineupctl against libgpiod 2.x, in .build itself: only the targets whose flags
# pkg-config's answer changes are compiled again (the shim, StationIO and what links them), not
# every dependency as a scratch path of their own would. The binaries are copied to .build-v2/debug
# and .build is built back against 1.6.3 at once, so no one ever finds a v2 binary in .build.
v2_build() {
    local pc=$1 p
    mkdir -p "$v2bin"
    for p in lineupd lineupctl; do
        PKG_CONFIG_PATH="$pc" swift build --product "$p" 2>&1 | tail -1
        [ "${PIPESTATUS[0]}" = 0 ] || return 1
        cp .build/debug/"$p" "$v2bin/$p.new" && mv "$v2bin/$p.new" "$v2bin/$p" || return 1
    done
    for p in lineupd lineupctl; do
        swift build --product "$p" 2>&1 | tail -1
        [ "${PIPESTATUS[0]}" = 0 ] || return 1
    done
}

prepare() {
    say "lineupctl and lineupd with Debian's libgpiod 1.6.3"
    swift build --product lineupctl 2>&1 | tail -1 || die "swift build failed"
    swift build --product lineupd 2>&1 | tail -1 || die "swift build failed"
    say "lineupctl and lineupd with libgpiod 2.x"
    pc=$(.ci/libgpiod2.sh | tail -1) || die "libgpiod 2.x build failed"
    v2_build "$pc" || die "swift build (v2) failed"
    v2=$(LD_LIBRARY_PATH="$(dirname "$pc")" "$v2bin/lineupctl" version | head -1)
    echo "$v2"
    case "$v2" in *"(v2 API)"*) ;; *) die "the v2 build does not use libgpiod's v2 API: $v2" ;; esac
    v1=$(.build/debug/lineupctl version | head -1)
    case "$v1" in *"(v2 API)"*) die "the 1.6.3 build uses libgpiod's v2 API: $v1" ;; esac

    # The package of the debug build already built (the Swift runtime from this toolchain, which
    # the guest shares): a release build of the whole package costs more than 15 minutes on this
    # 2-core machine, so CI does not yet run the release package (docs/install.md's path).
    say "the station's Debian package (of the debug build)"
    rm -f .build-vm/lineup_*.deb
    # Uncompressed: xz over the debug binaries took 139 s of CI's serial time; dpkg installs
    # a package whose data.tar is uncompressed as it installs any other.
    # At most 170 MB: the debug package is 156,652 KB (docs/install.md); its release build, which
    # CI does not make, is held to 80 MB. Five binaries again, or ICU's whole data, or a second
    # runtime, goes over and fails here, naming the biggest files.
    packaging/deb/build.sh --out .build-vm --bin-dir .build/debug --uncompressed --max-installed-size 170 | tail -1 \
        || die "packaging/deb/build.sh failed"

    say "edgewatch (hardware/vm/edgewatch.c) against libgpiod 2.x"
    v2lib=$(dirname "$pc")
    v2inc=$(dirname "$v2lib")/include
    gcc -O2 -Wall -Wextra -Werror -I"$v2inc" hardware/vm/edgewatch.c -L"$v2lib" -lgpiod_v2 \
        -Wl,-rpath,"$v2lib" -o .build-vm/edgewatch-v2 || die "edgewatch build failed"

}

# The Debian packages and the gpio-sim module once, before runs that go at once would each want
# them.
guests() {
    say "the guests' packages and the gpio-sim module"
    (
        log() { printf 'vm %s\n' "$*" >&2; }
        loud_fail() { die "$*" 2; }
        here=$PWD/hardware/vm
        # shellcheck source=hardware/vm/lib.sh
        . hardware/vm/lib.sh
        install_missing qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1 busybox-static \
            gpiod gcc make kmod cpio e2fsprogs systemd udev passwd util-linux sqlite3 curl
        kver=$(newest_kernel)
        hardware/vm/build-module.sh "$kver" "$PWD/.build-vm/module-$kver" | tail -1
    ) || die "the guests' packages or the gpio-sim module failed"
}

rc=0
run() { # run NAME SCRIPT ARGS...: the script prints its JSON object last; prints its summary
    local name=$1 script=$2; shift 2
    local t=$SECONDS
    "$script" "$@" > ".build-vm/run-$name.out" 2> ".build-vm/run-$name.err"
    local r=$?
    echo "$r" > ".build-vm/run-$name.rc"
    echo "run $name: exit $r in $((SECONDS - t)) s (from $((t - start)) s to $((SECONDS - start)) s)" \
        > ".build-vm/run-$name.time"
}

runs() {
    for f in "$v1bin/lineupd" "$v1bin/lineupctl"; do
        [ -x "$f" ] || die "$f is not there: run hardware/vm/ci.sh snapshot first"
    done
    results=.build-vm/results.jsonl
    : > "$results"
    rm -f .build-vm/run-*.out .build-vm/run-*.err .build-vm/run-*.rc .build-vm/run-*.time
    lanes=${VM_LANES:-2}
    say "runs: systemd, power cut, v1, v2 ($lanes at a time)"
    # What systemd's and v2's runs need, once prepare has left it.
    prepared() {
        await_prepared
        pc=$(.ci/libgpiod2.sh | tail -1) || die "libgpiod 2.x build failed"
        v2lib=$(dirname "$pc")
        deb=$(ls .build-vm/lineup_*.deb 2>/dev/null | tail -1)
        [ -n "$deb" ] || die "no package in .build-vm: run hardware/vm/ci.sh prepare first"
        for f in "$v2bin/lineupd" "$v2bin/lineupctl" .build-vm/edgewatch-v2; do
            [ -x "$f" ] || die "$f is not built: run hardware/vm/ci.sh prepare first"
        done
    }
    one() {
        case "$1" in
            # The package under systemd 252, libgpiod 1.6.3 build only (README, "The systemd phase").
            systemd) prepared && run systemd hardware/vm/run.sh --name systemd --systemd --deb "$deb" ;;
            # Power cuts under the v1 lineupd, the log on ext4 on a virtio disk (README, "Power cut").
            powercut) run powercut hardware/vm/powercut.sh --lineupd "$v1bin/lineupd" ;;
            v1) run v1 hardware/vm/run.sh --name v1 --expect-api v1 --lineupctl "$v1bin/lineupctl" \
                --lineupd "$v1bin/lineupd" ;;
            v2) prepared && run v2 hardware/vm/run.sh --name v2 --expect-api v2 --no-install \
                --lineupctl "$v2bin/lineupctl" --ld-library-path "$v2lib" --edgewatch .build-vm/edgewatch-v2 \
                --lineupd "$v2bin/lineupd" ;;
        esac
    }
    if [ "$lanes" -ge 3 ]; then
        (one v1; one systemd) &
        local lane=$!
        (one powercut) &
        local lane2=$!
        one v2
        wait "$lane" "$lane2"
    elif [ "$lanes" -ge 2 ]; then
        (one v1; one systemd) &
        local lane=$!
        one powercut; one v2
        wait "$lane"
    else
        one v1; one powercut; one systemd; one v2
    fi
    local name r line
    for name in systemd powercut v1 v2; do
        say "run $name"
        cat ".build-vm/run-$name.err"
        line=$(tail -1 ".build-vm/run-$name.out")
        case "$line" in "{"*) echo "$line" >> "$results"; echo "$line" ;; esac
        cat ".build-vm/run-$name.time"
        r=$(cat ".build-vm/run-$name.rc")
        if [ "$r" = 2 ]; then rc=2; elif [ "$r" != 0 ] && [ "$rc" = 0 ]; then rc=1; fi
    done
}

case "$mode" in
    guests) guests; say "guests ready"; exit 0 ;;
    snapshot) snapshot; say "snapshot of the 1.6.3 build in $v1bin"; exit 0 ;;
    prepare)
        rm -f .build-vm/prepared
        (prepare) || { touch .build-vm/prepare-failed; exit 1; }
        touch .build-vm/prepared
        say "prepared"; exit 0 ;;
    all) guests; snapshot; prepare ;;
esac
runs

say "done"
echo "emulated-hardware tier wall time: $((SECONDS - start)) s"
case "$rc" in
    0) echo "emulated-hardware tier: all four runs passed" ;;
    2) die "qemu could not run the guest (see the banner above); this tier did NOT run" 2 ;;
    *) die "a run reported a mismatch (.build-vm/runs/*/ has the logs)" 1 ;;
esac
