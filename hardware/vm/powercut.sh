#!/usr/bin/env bash
# The power-cut run of the emulated-hardware tier (issues 13 and 36): the session log on an ext4
# file system on a virtio disk image, qemu killed (SIGKILL, the guest's power cut) at a random
# moment of a running `lineupd --simulate` block (double-blind, its layouts committed), the guest
# booted again on the same image, where `lineupd --simulate --resume` goes on with the block,
# several times; then a last boot resumes it, runs it to its end and dumps the log. Checked:
# every trial lineupd announced (its trial line, printed after writer.commitTrial returned)
# before a cut is in the log; PRAGMA integrity_check is ok after every cut; each reboot names the
# block kept to be resumed and resumes it; the block ends with every trial logged once, each
# trial cut short logged aborted `interrupted:` (never announced, never scored); one resume
# logged per reboot, each in a boot of its own; lineupctl verify-blinding and verify-scoring
# pass on the block. See hardware/vm/README.md, "Power cut".
#
#   hardware/vm/powercut.sh [--lineupd PATH] [--cuts N] [--seed S] [--no-install]
#   env: POWERCUT_CUTS (default 3; 30 or more for a nightly run), POWERCUT_SEED (random when
#        unset; printed), POWERCUT_MAX_DELAY (seconds after the block's start, default 10),
#        POWERCUT_TIMEOUT (seconds for one boot to start its block, default 180),
#        POWERCUT_TRIALS (the block's trials, default 10 per cut + 5: more than the cut boots
#        run, about 3.4 each), POWERCUT_FIRST_START (the guest uptime, s, at which the first boot
#        starts the block, default 90 + the largest delay: its commitments' monotonic times then
#        lie past the later boots' trials, so verify-blinding must tell the boots apart)
#
# Prints one JSON object as its last line; exit 0 all checks passed, 1 a check failed, 2 the
# tier did not run (no qemu, no kernel, a boot that never started its block).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=$root/.build-vm
lineupd=$root/.build/debug/lineupd
cuts=${POWERCUT_CUTS:-3}
trials=${POWERCUT_TRIALS:-}
seed=${POWERCUT_SEED:-}
max_delay=${POWERCUT_MAX_DELAY:-10}
boot_timeout=${POWERCUT_TIMEOUT:-180}
install=1
while [ $# -gt 0 ]; do
    case "$1" in
        --lineupd) lineupd=$2; shift 2 ;;
        --cuts) cuts=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --no-install) install=0; shift ;;
        *) echo "powercut.sh: unknown argument $1" >&2; exit 64 ;;
    esac
done
case "$lineupd" in /*) ;; *) lineupd=$PWD/$lineupd ;; esac
[ -x "$lineupd" ] || { echo "powercut.sh: $lineupd is not built (swift build --product lineupd)" >&2; exit 1; }
[ "$cuts" -ge 1 ] 2>/dev/null || { echo "powercut.sh: --cuts must be at least 1" >&2; exit 64; }
[ -n "$seed" ] || seed=$(( (RANDOM << 15 | RANDOM) % 1000000 + 1 ))
[ -n "$trials" ] || trials=$((10 * cuts + 5))
# The first boot starts its block at this guest uptime (s), later than any later boot's trials
# start (boots take 10-70 s here, the cut at most POWERCUT_MAX_DELAY after): see powercut-guest.sh.
first_start=${POWERCUT_FIRST_START:-$((90 + ${max_delay%.*}))}
log() { printf 'vm[powercut] %s\n' "$*" >&2; }
loud_fail() {
    printf '\n%s\n' "################################################################" >&2
    printf '### EMULATED-HARDWARE TIER DID NOT RUN (powercut): %s\n' "$*" >&2
    printf '%s\n\n' "################################################################" >&2
    exit 2
}
# shellcheck source=hardware/vm/lib.sh
. "$here/lib.sh"
start_s=$(date +%s.%N)
log "seed $seed, $cuts cuts, each 0-${max_delay} s into the block (POWERCUT_SEED=$seed reproduces the delays and blocks)"

# 1. Packages, as run.sh (mkfs.ext4 is e2fsprogs, priority required: on every Debian system).
pkgs="qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1 busybox-static gcc make kmod cpio e2fsprogs"
# shellcheck disable=SC2086
[ "$install" != 1 ] || install_missing $pkgs
command -v qemu-system-x86_64 >/dev/null || loud_fail "qemu-system-x86_64 is not installed"
command -v mkfs.ext4 >/dev/null || loud_fail "mkfs.ext4 is not installed (e2fsprogs)"

# 2. Kernel, gpio-sim module (init.sh makes the chip every boot), initramfs: as run.sh, plus
# the virtio disk and ext4.
kver=$(newest_kernel) || exit 2
ko=$("$here/build-module.sh" "$kver" "$cache/module-$kver" | tail -1)
initrd=$cache/initramfs-powercut-$kver.cpio.gz
make_initramfs "$kver" "$cache/initramfs-powercut-$kver" "$initrd" "$ko" \
    configfs 9p 9pnet_virtio virtio_pci snd-dummy virtio_blk ext4

# 3. The disk: a sparse raw image, ext4 made on the host. cache=none (O_DIRECT on the host):
# the guest sees a disk with a volatile write cache and must flush it, as on a board's card.
out=$cache/runs/powercut
rm -rf "$out"; mkdir -p "$out"
img=$out/disk.img
truncate -s 64M "$img"
mkfs.ext4 -q -F -L lineup-log "$img"

# The plan, from the seed alone: per cut, the delay after the block's start; the first boot's
# block seed starts the block (the later boots resume it: their seeds are unused).
python3 - "$seed" "$cuts" "$max_delay" > "$out/plan.txt" <<'PY'
import random, sys
seed, cuts, max_delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
r = random.Random(seed)
blocks = r.sample(range(1, 999_999), cuts + 1)
for k in range(cuts + 1):
    delay = round(r.uniform(0, max_delay), 3) if k < cuts else 0
    print(k + 1, blocks[k], delay)
PY

boot() {  # boot K BLOCK_SEED FINAL: start qemu in the background on the image
    local k=$1 dir=$out/boot-$1
    mkdir -p "$dir"
    cat > "$dir/params.sh" <<P
REPO='$root'
RUN_NAME='powercut-$k'
GUEST_SCRIPT='powercut-guest.sh'
LINEUPD='$lineupd'
SIM_LABEL='pinctrl-bcm2711'
SIM_LINES=28
SYSTEMD_MODE=''
BOOT=$k
BLOCK_SEED=$2
FINAL=$3
TRIALS=$trials
RESUME=$([ "$k" = 1 ] && echo 0 || echo 1)
START_AFTER=$([ "$k" = 1 ] && echo "$first_start" || echo 0)
SPEED=20
P
    : > "$dir/announce.log"
    qemu-system-x86_64 \
        -machine pc -accel tcg -cpu max -m 1024 -smp 1 \
        -display none -no-reboot -monitor none -nic none \
        -kernel "/boot/vmlinuz-$kver" -initrd "$initrd" \
        -append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init no_timer_check" \
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs local,path="$dir",mount_tag=out,security_model=none,multidevs=remap \
        -drive file="$img",format=raw,if=virtio,cache=none \
        -serial file:"$dir/console.log" -serial file:"$dir/announce.log" \
        < /dev/null 2> "$dir/qemu.stderr" &
    qpid=$!
}

# 4. The cuts.
while read -r k block delay; do
    [ "$k" -le "$cuts" ] || break
    dir=$out/boot-$k
    boot "$k" "$block" 0
    t0=$SECONDS
    # The block has started once lineupd's header is out: its session is on disk by then.
    until grep -aq '^lineupd: simulated station' "$dir/announce.log"; do
        if grep -aqs '^LINEUP-PC lineupd exited' "$dir/console.log" || [ $((SECONDS - t0)) -ge $((boot_timeout + (k == 1 ? first_start : 0))) ]; then
            kill -9 "$qpid" 2>/dev/null || true; wait "$qpid" 2>/dev/null || true
            tail -20 "$dir/console.log" | tr -d '\r' >&2; cat "$dir/announce.log" >&2
            loud_fail "boot $k never started its block (lineupd ended, or ${boot_timeout}s passed; console: $dir/console.log)"
        fi
        sleep 0.1
    done
    started=$((SECONDS - t0))
    sleep "$delay"
    kill -9 "$qpid" || loud_fail "qemu of boot $k ended before its cut (console: $dir/console.log)"
    wait "$qpid" 2>/dev/null || true
    log "boot $k: block $block started ${started} s after qemu, cut ${delay} s into it, $(grep -ac '^trial ' "$dir/announce.log") trial(s) announced"
done < "$out/plan.txt"

# 5. The last boot: lineupd starts once more, resumes the block and runs it to its end (the
# trials left, a few seconds each at most under TCG), the log is checked, verified and dumped.
read -r k block _ < <(tail -1 "$out/plan.txt")
dir=$out/boot-$k
boot "$k" "$block" 1
t0=$SECONDS
while kill -0 "$qpid" 2>/dev/null && [ $((SECONDS - t0)) -lt $((boot_timeout + 120 + 3 * trials)) ]; do sleep 0.5; done
if kill -0 "$qpid" 2>/dev/null; then
    kill -9 "$qpid"; wait "$qpid" 2>/dev/null || true
    loud_fail "the last boot did not finish (console: $dir/console.log)"
fi
wait "$qpid" 2>/dev/null || true
[ -s "$dir/final.json" ] || { tail -20 "$dir/console.log" | tr -d '\r' >&2; loud_fail "the last boot dumped no log (console: $dir/console.log)"; }
log "last boot: $(grep -ac '^trial ' "$dir/announce.log") trial(s), $((SECONDS - t0)) s"
# The guest unmounted the file system cleanly: it must check clean with no repair.
fsck=$(e2fsck -fn "$img" > "$out/e2fsck.txt" 2>&1 && echo clean || echo "e2fsck exit $?")

# 6. The verdict: one block across every boot; every announced trial in the log, integrity ok
# after each cut and at the end, each reboot naming the block kept to be resumed and resuming
# it, every trial logged once, the ones cut short aborted and never announced, one resume per
# reboot in a boot of its own, verify-blinding and verify-scoring passed.
end_s=$(date +%s.%N)
python3 - "$out" "$cuts" "$seed" "$start_s" "$end_s" "$fsck" "$trials" <<'PY'
import json, re, sys
out, cuts, seed, t0, t1, fsck, trials = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6], int(sys.argv[7])
plan = [line.split() for line in open(f"{out}/plan.txt")]
final = json.load(open(f"{out}/boot-{cuts + 1}/final.json"))
block = plan[0][1]
session = next((s for s in final["sessions"] if s["seed"] == block), None)
logged = set(session["trials"]) if session else set()
announced, missing, integrity, problems, resumed = 0, [], [], [], 0
found = 0
announced_numbers = set()
for k in range(1, cuts + 2):
    text = open(f"{out}/boot-{k}/announce.log", "rb").read().decode("utf-8", "replace").replace("\r", "")
    console = open(f"{out}/boot-{k}/console.log", "rb").read().decode("utf-8", "replace").replace("\r", "")
    # A commit that failed is printed too (its trial kept in memory, said once on stderr):
    # after such a line the boot's trial lines are no longer announcements of durable trials.
    if "is not on disk yet" in text or "committing trial" in text:
        problems.append(f"boot {k}: lineupd could not commit a trial")
    for line in console.splitlines():
        m = re.match(r"LINEUP-PC integrity boot=(\d+) (final )?(.*)$", line)
        if m:
            integrity.append(m.group(3).strip())
    if k > 1 and not any(re.match(rf"LINEUP-PC integrity boot={k} (?!final)", l) for l in console.splitlines()):
        integrity.append("not checked")
        problems.append(f"boot {k}: no integrity check of the log the cut left")
    numbers = [int(m.group(1)) for m in re.finditer(r"^trial +(\d+)/\d+ ", text, re.M)]
    if "LINEUP-PC fatal" in console:
        problems.append(f"boot {k}: " + re.search(r"LINEUP-PC fatal.*", console).group(0))
    if k > 1 and session:
        # Named at the start as kept to be resumed (lineupd names its first 8 characters), then resumed.
        named = re.search(rf"session {session['id'][:8].lower()}\S* \(.*\) was not ended: kept to be resumed", text.lower())
        header = re.search(r"^lineupd: simulated station, .* resumed after trial (\d+)", text, re.M)
        if named and header:
            resumed += 1
        else:
            problems.append(f"boot {k}: the block was named kept to be resumed: {bool(named)}, resumed: {bool(header)}")
    if k <= cuts:
        # A cut boot's lineupd runs until the cut: ending before it is a failure of its own.
        if "LINEUP-PC lineupd exited" in console:
            problems.append(f"boot {k}: " + re.search(r"LINEUP-PC lineupd exited.*", console).group(0)
                            + " before its cut (the block run out? raise POWERCUT_TRIALS)")
        announced += len(numbers)
        announced_numbers.update(numbers)
        for n in numbers:
            if n in logged:
                found += 1
            else:
                missing.append(f"boot {k} trial {n}")
if session is None:
    problems.append(f"no session of block {block} in the log")
else:
    ends = [e["how"] for e in session["ends"]]
    if ends != ["ended"]:
        problems.append(f"the block's session ended {ends}, not once as ended")
    if session["trials"] != list(range(1, trials + 1)):
        problems.append(f"the block's trials are logged as {session['trials']}, not 1-{trials} once each")
    cut_short = [r for r in session["rows"] if (r["reason"] or "").startswith("interrupted:")]
    for r in cut_short:
        if r["outcome"] != "aborted" or r["number"] in announced_numbers:
            problems.append(f"trial {r['number']}, cut short, is logged {r['outcome']} (announced: {r['number'] in announced_numbers})")
    if len(cut_short) > cuts:
        problems.append(f"{len(cut_short)} trials logged interrupted, more than the {cuts} cuts")
    # The run proves the boot rule only if some trial started, by another boot's clock, before
    # the commitments' monotonic time (the first boot starts late so that they do).
    if not session.get("started_before_commitment_mono"):
        problems.append("no trial started at a monotonic time before its commitment's: the boots were not told apart "
                        "by this run (raise POWERCUT_FIRST_START)")
    boots = [r.get("boot_id") for r in session["resumes"]]
    if len(boots) != cuts or None in boots or len(set(boots + [session["boot_id"]])) != cuts + 1:
        problems.append(f"resumes logged in boots {boots} (the session's {session['boot_id']}): one per reboot, each its own")
if len(final["sessions"]) != 1:
    problems.append(f"{len(final['sessions'])} sessions in the log: one block, booted {cuts + 1} times")
for name in ("verify_blinding", "verify_scoring"):
    if final[name]["rc"] != 0:
        problems.append(f"lineupctl {name.replace('_', '-')} exit {final[name]['rc']}: {final[name]['output'].strip()[-600:]}")
bad_integrity = [i for i in integrity if i != "ok"]
if fsck != "clean":
    problems.append(f"e2fsck -fn after the last boot: {fsck}")
result = {"cuts": cuts, "trials": trials, "trials_announced": announced, "trials_found": found, "missing": missing,
          "integrity": integrity, "resumed": resumed, "seed": seed, "seconds": round(t1 - t0, 1),
          "trials_logged": len(session["trials"]) if session else 0,
          "interrupted_trials": [r["number"] for r in session["rows"] if (r["reason"] or "").startswith("interrupted:")] if session else [],
          "started_before_commitment_mono": session.get("started_before_commitment_mono", []) if session else [],
          "verify_blinding": final["verify_blinding"]["rc"], "verify_scoring": final["verify_scoring"]["rc"], "fsck": fsck}
ok = not missing and not bad_integrity and resumed == cuts and not problems and len(integrity) == cuts + 1
if problems:
    result["problems"] = problems
result["status"] = "ok" if ok else "mismatch"
json.dump(result, open(f"{out}/result.json", "w"))
print(json.dumps(result, separators=(",", ":")))
sys.exit(0 if ok else 1)
PY
