#!/bin/bash
# One boot of the power-cut run (hardware/vm/powercut.sh), inside the guest, chrooted into the
# host's userland by init.sh. The session log lives on an ext4 file system on the virtio disk
# /dev/vda, which outlives the guest; the host kills qemu (SIGKILL) at a random moment.
#   1. mount /dev/vda (ext4 replays its journal after a cut);
#   2. PRAGMA integrity_check on a copy of the log as the cut left it (database and WAL), so
#      that lineupd is still the first to open the log itself;
#   3. lineupd --simulate on the log, its stdout and stderr on the second serial port
#      (/dev/ttyS1, a file on the host): the header, one line per trial, printed after
#      writer.commitTrial has returned, and the sessions it found unfinished;
#   4. the cut boots wait there for the host's SIGKILL; the final boot runs a short block to its
#      end, checks the log again and dumps what the host needs to compare (final.json).
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
tell "lineupd boot=$BOOT seed=$BLOCK_SEED trials=$TRIALS"
"$LINEUPD" --simulate --trials "$TRIALS" --seed "$BLOCK_SEED" --speed "$SPEED" --db "$db" \
    --device hw:CARD=Dummy,DEV=0 > /dev/ttyS1 2>&1
rc=$?
tell "lineupd exited boot=$BOOT rc=$rc"
if [ "$FINAL" != 1 ]; then
    # A cut boot's block is meant to outlive the cut: the host says so when it sees this.
    exit 1
fi

tell "integrity boot=$BOOT final $(integrity "$db")"
python3 - "$db" > "$out/final.json" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
sessions = []
for sid, settings in db.execute("SELECT id, settings FROM session ORDER BY wall_ns"):
    ends = [{"how": h, "detail": d} for h, d in
            db.execute("SELECT how, detail FROM session_end WHERE session_id = ?", (sid,))]
    trials = [n for (n,) in db.execute("SELECT number FROM trial WHERE session_id = ? ORDER BY number", (sid,))]
    sessions.append({"id": sid, "seed": json.loads(settings).get("seed"), "ends": ends, "trials": trials})
print(json.dumps({"sessions": sessions}))
PY
tell "dumped rc=$?"
umount "$mnt" || tell "umount failed"
exit 0
