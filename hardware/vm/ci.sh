#!/usr/bin/env bash
# CI entry of the emulated-hardware tier (for .ci/run, after the unit tests):
# builds lineupctl against Debian's libgpiod 1.6.3 and against libgpiod 2.x (PyPI gpiod sdist,
# .ci/libgpiod2.sh, second scratch path .build-v2), then runs hardware/vm/run.sh for each.
# The v1 run's edges are watched by Debian's gpiomon (v1 uAPI), the v2 run's by edgewatch.c
# built against libgpiod 2.x (v2 uAPI). A third run (run.sh --systemd) boots systemd as PID 1 and
# installs the station's Debian package (packaging/deb/build.sh over the debug build, Debian's
# libgpiod 1.6.3) and runs lineupd.service and lineup-web.service. A fourth (powercut.sh) cuts the
# guest's power (SIGKILL of qemu) under a running v1 lineupd, POWERCUT_CUTS times (default 3).
# Prints one JSON object per run (also in .build-vm/results.jsonl) and its wall time.
# Exits non-zero on any mismatch; if qemu cannot run the guest it says so loudly and fails.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
say() { printf '\n== vm: %s (%ss)\n' "$*" "$((SECONDS - start))"; }
die() { printf '\n### EMULATED-HARDWARE TIER FAILED: %s\n' "$*" >&2; exit "${2:-1}"; }
mkdir -p .build-vm
results=.build-vm/results.jsonl
: > "$results"

say "lineupctl and lineupd with Debian's libgpiod 1.6.3"
swift build --product lineupctl 2>&1 | tail -1 || die "swift build failed"
swift build --product lineupd 2>&1 | tail -1 || die "swift build failed"
say "lineupctl and lineupd with libgpiod 2.x"
pc=$(.ci/libgpiod2.sh | tail -1) || die "libgpiod 2.x build failed"
PKG_CONFIG_PATH="$pc" swift build --scratch-path .build-v2 --product lineupctl 2>&1 | tail -1 \
    || die "swift build (v2) failed"
PKG_CONFIG_PATH="$pc" swift build --scratch-path .build-v2 --product lineupd 2>&1 | tail -1 \
    || die "swift build (v2) failed"

# The package of the debug build already built (the Swift runtime from this toolchain, which
# the guest shares): a release build of the whole package costs more than 15 minutes on this
# 2-core machine, so CI does not yet run the release package (docs/install.md's path).
say "the station's Debian package (of the debug build)"
deb=$(packaging/deb/build.sh --out .build-vm --bin-dir .build/debug --dynamic-swift-runtime | tail -1) \
    || die "packaging/deb/build.sh failed"
echo "$deb"

say "edgewatch (hardware/vm/edgewatch.c) against libgpiod 2.x"
v2lib=$(dirname "$pc")
v2inc=$(dirname "$v2lib")/include
gcc -O2 -Wall -Wextra -Werror -I"$v2inc" hardware/vm/edgewatch.c -L"$v2lib" -lgpiod_v2 \
    -Wl,-rpath,"$v2lib" -o .build-vm/edgewatch-v2 || die "edgewatch build failed"

rc=0
run() {  # run NAME SCRIPT ARGS...: the script prints its JSON object last
    local name=$1 script=$2; shift 2
    say "run $name"
    local t=$SECONDS
    "$script" "$@" > ".build-vm/run-$name.out"
    local r=$?
    local line
    line=$(tail -1 ".build-vm/run-$name.out")
    case "$line" in "{"*) echo "$line" >> "$results"; echo "$line" ;; esac
    echo "run $name: exit $r in $((SECONDS - t)) s"
    if [ "$r" = 2 ]; then rc=2; elif [ "$r" != 0 ] && [ "$rc" = 0 ]; then rc=1; fi
}
run v1 hardware/vm/run.sh --name v1 --expect-api v1 --lineupd .build/debug/lineupd
run v2 hardware/vm/run.sh --name v2 --expect-api v2 --no-install --lineupctl .build-v2/debug/lineupctl \
    --ld-library-path "$v2lib" --edgewatch .build-vm/edgewatch-v2 --lineupd .build-v2/debug/lineupd
# The package under systemd 252, libgpiod 1.6.3 build only (README, "The systemd phase").
run systemd hardware/vm/run.sh --name systemd --systemd --deb "$deb"
# Power cuts under the v1 lineupd, the log on ext4 on a virtio disk (README, "Power cut").
run powercut hardware/vm/powercut.sh --lineupd .build/debug/lineupd

say "done"
echo "emulated-hardware tier wall time: $((SECONDS - start)) s"
case "$rc" in
    0) echo "emulated-hardware tier: all four runs passed" ;;
    2) die "qemu could not run the guest (see the banner above); this tier did NOT run" 2 ;;
    *) die "a run reported a mismatch (.build-vm/runs/*/ has the logs)" 1 ;;
esac
