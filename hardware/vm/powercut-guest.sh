#!/bin/bash
# One boot of the power-cut run (hardware/vm/powercut.sh), inside the guest, chrooted into the
# host's userland by init.sh. The session log lives on an ext4 file system on the virtio disk
# /dev/vda, which outlives the guest; the host kills qemu (SIGKILL) at a random moment.
#   1. mount /dev/vda (ext4 replays its journal after a cut);
#   2. PRAGMA integrity_check on a copy of the log as the cut left it (database and WAL), so
#      that lineupd is still the first to open the log itself;
#   3. lineupd --simulate on the log, its stdout and stderr on the second serial port
#      (/dev/ttyS1, a file on the host): the header, one line per trial, printed after
#      writer.commitTrial has returned, and the session it found unfinished. The first boot
#      starts the block; every later one resumes it (`lineupd --simulate --resume`);
#   4. the cut boots wait there for the host's SIGKILL; the final boot runs the block to its
#      end, checks the log again, runs lineupctl verify-blinding and verify-scoring on the
#      block, and dumps what the host needs to compare (final.json).
# Lines for the host on the console start with "LINEUP-PC ".
set -uo pipefail
. /tmp/out/params.sh
out=/tmp/out
mnt=/tmp/pc
db=$mnt/lineup.db
say() { echo "guest: [$(cut -d' ' -f1 /proc/uptime)] $*"; }
tell() { echo "LINEUP-PC $*"; }

mkdir -p "$mnt"
if ! mount -t ext4 /dev/vda "$mnt"; then
    tell "fatal cannot mount /dev/vda"
    exit 1
fi
say "ext4 on /dev/vda mounted: $(dmesg | grep -a 'EXT4-fs (vda)' | tr '\n' ';')"

integrity() {
    python3 -c 'import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchall()
print(";".join(r[0] for r in rows)[:300])' "$1" 2>&1 | tr '\n' ' ' | sed 's/ *$//'
}
if [ -e "$db" ]; then
    rm -rf /tmp/snap && mkdir /tmp/snap
    cp "$db" /tmp/snap/ && { [ ! -e "$db-wal" ] || cp "$db-wal" /tmp/snap/; }
    # Kept on the host too (the boot's output share), to look at when a check fails.
    cp -r /tmp/snap "$out/cut-left"
    tell "integrity boot=$BOOT $(integrity /tmp/snap/lineup.db)"
    tell "files boot=$BOOT $(ls -l "$mnt" | awk 'NR > 1 { printf "%s=%s ", $9, $5 }')"
fi

# ttyS1 raw: no \n -> \r\n, no echo; qemu writes each byte to the host's file as it comes.
stty -F /dev/ttyS1 raw -echo 2>/dev/null
# The first boot starts its block late (guest uptime START_AFTER s): its commitments then carry
# monotonic times past those the later boots' trials start at, so verify-blinding must tell the
# boots apart to pass (docs/figures.md, "Across boots"), as on a board whose first session ran
# for hours before a power cut.
while [ "$(cut -d. -f1 /proc/uptime)" -lt "${START_AFTER:-0}" ]; do sleep 1; done
tell "lineupd boot=$BOOT seed=$BLOCK_SEED trials=$TRIALS resume=$RESUME boot_id=$(cat /proc/sys/kernel/random/boot_id)"
if [ "$RESUME" = 1 ]; then
    block=(--resume)
else
    block=(--trials "$TRIALS" --seed "$BLOCK_SEED")
fi
"$LINEUPD" --simulate "${block[@]}" --speed "$SPEED" --db "$db" \
    --device hw:CARD=Dummy,DEV=0 > /dev/ttyS1 2>&1
rc=$?
tell "lineupd exited boot=$BOOT rc=$rc"
if [ "$FINAL" != 1 ]; then
    # A cut boot's block is meant to outlive the cut: the host says so when it sees this.
    exit 1
fi

tell "integrity boot=$BOOT final $(integrity "$db")"
# The block verified as a researcher would, with lineupctl beside lineupd (its exit status and
# output go into final.json).
lineupctl=$(dirname "$LINEUPD")/lineupctl
session=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT id FROM session ORDER BY wall_ns LIMIT 1").fetchone()[0])' "$db")
"$lineupctl" verify-blinding "$session" --db "$db" > /tmp/blinding.txt 2>&1
echo $? > /tmp/blinding.rc
"$lineupctl" verify-scoring "$session" --db "$db" > /tmp/scoring.txt 2>&1
echo $? > /tmp/scoring.rc
python3 - "$db" > "$out/final.json" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
sessions = []
for sid, settings, boot in db.execute("SELECT id, settings, boot_id FROM session ORDER BY wall_ns"):
    ends = [{"how": h, "detail": d} for h, d in
            db.execute("SELECT how, detail FROM session_end WHERE session_id = ?", (sid,))]
    rows = [{"number": n, "outcome": o, "reason": r} for n, o, r in db.execute(
        "SELECT number, outcome, reason FROM trial WHERE session_id = ? AND corrects IS NULL ORDER BY number", (sid,))]
    resumes = [json.loads(d) for (d,) in db.execute(
        "SELECT detail FROM event WHERE session_id = ? AND trial_id IS NULL AND kind = 'note' "
        "AND detail LIKE '%\"resumed\":true%' ORDER BY seq", (sid,))]
    # Trials started at a monotonic time before the last commitment's (another boot's clock).
    committed = db.execute("SELECT max(mono_ns) FROM layout_commitment WHERE session_id = ?", (sid,)).fetchone()[0]
    earlier = [n for (n,) in db.execute(
        "SELECT number FROM trial WHERE session_id = ? AND corrects IS NULL AND started_mono_ns < ?", (sid, committed or 0))]
    sessions.append({"id": sid, "seed": json.loads(settings).get("seed"), "boot_id": boot, "ends": ends,
                     "trials": [r["number"] for r in rows], "rows": rows, "resumes": resumes,
                     "started_before_commitment_mono": earlier})
def verdict(name):
    return {"rc": int(open(f"/tmp/{name}.rc").read()), "output": open(f"/tmp/{name}.txt").read()[-2000:]}
print(json.dumps({"sessions": sessions, "verify_blinding": verdict("blinding"), "verify_scoring": verdict("scoring")}))
PY
tell "dumped rc=$?"
umount "$mnt" || tell "umount failed"
exit 0
