#!/bin/bash
# Runs inside the guest, chrooted into the host's userland (hardware/vm/init.sh starts it).
# 1. lineupctl version (and the API the build was meant to use);
# 2. lineupctl selftest --config vm.toml --pulses 0: the lines found by name and by chip
#    label + offset on the gpio-sim chip, and a test click on snd-dummy;
# 3. the scripted dog (dog.sh, block.dog) drives the sensor and button lines through gpio-sim's
#    sysfs `pull` attributes while gpiomon records every edge with its kernel timestamp;
#    every injected edge must be seen, in order, on its line;
# 4. [hook] lineupd --config vm.toml against the same dog, once the daemon's hardware mode exists.
# Prints one JSON object on a line starting "LINEUP-VM-RESULT " and exits non-zero on a mismatch.
set -uo pipefail
. /tmp/out/params.sh
out=/tmp/out
vm=$REPO/hardware/vm
bb=/tmp/bin/busybox
export CHATTER
sim=/sys/devices/platform/$SIM_DEV/$SIM_CHIP
say() { echo "guest: [$(cut -d' ' -f1 /proc/uptime)] $*"; }
failures=()
fail() { say "MISMATCH: $*"; failures+=("$*"); }
ctl() { LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPCTL" "$@"; }
json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }

kernel="$(uname -r) $(uname -v)"
say "kernel $kernel; run $RUN_NAME; lineupctl $LINEUPCTL"

# 1. Version and API.
version=$(ctl version 2>&1 | head -1)
say "lineupctl version: $version"
libgpiod=$(sed -nE 's/^libgpiod ([^ ]+) .*/\1/p' <<< "$version")
api=$(sed -nE 's/.*\((v[12]) API\).*/\1/p' <<< "$version")
[ -n "$libgpiod" ] || fail "lineupctl version did not name libgpiod: $version"
if [ -n "$EXPECT_API" ] && [ "$api" != "$EXPECT_API" ]; then
    fail "expected the $EXPECT_API API, lineupctl says: $version"
fi

# The chip as userland sees it (Debian's libgpiod 1.6 tools).
say "$(gpiodetect 2>&1 | tr '\n' ';')"
say "gpiofind GPIO17: $(gpiofind GPIO17 2>&1)"
chipdev=$(gpiofind GPIO17 | cut -d' ' -f1)

# 2. Selftest: lines by name and by label+offset, a test click on snd-dummy.
# Idle level of every line the lineup uses: pulled up (sensors and buttons are active-low).
for o in 17 27 22 5 6 23 24 25; do echo pull-up > "$sim/sim_gpio$o/pull"; done
ctl selftest --config "$vm/vm.toml" --pulses 0 > "$out/selftest.txt" 2>&1
st_rc=$?
sed 's/^/guest: selftest| /' "$out/selftest.txt"
[ "$st_rc" = 0 ] || fail "lineupctl selftest exited $st_rc"
lines_found=0
for want in "offset 17 (GPIO17)" "offset 27 (GPIO27)" "offset 22 (GPIO22)" "offset 5 (GPIO5)" \
            "offset 6 (GPIO6)" "offset 23 (GPIO23)" "offset 24 (GPIO24)" "offset 25 (GPIO25)"; do
    if grep -q "\[pinctrl-bcm2711\] $want" "$out/selftest.txt"; then
        lines_found=$((lines_found + 1))
    else
        fail "selftest did not find $want on the pinctrl-bcm2711 chip"
    fi
done
handed=$(sed -nE 's/.*test click played \(ALSA took it ([0-9]+) .*/\1/p' "$out/selftest.txt")
if grep -q 'test click played' "$out/selftest.txt"; then test_click=played
else test_click=failed; fail "selftest's test click on snd-dummy did not play"; fi
# Inputs read idle (pulled up, active-low): none may read ACTIVE.
if grep -q 'ACTIVE' "$out/selftest.txt"; then fail "an idle line reads ACTIVE"; fi

# 3. The scripted dog, watched with kernel timestamps (CLOCK_MONOTONIC) by Debian's gpiomon
# (libgpiod 1.6, the kernel's v1 uAPI) or, when run.sh was given --edgewatch, by edgewatch
# (hardware/vm/edgewatch.c built against libgpiod 2.x: the v2 uAPI, with sequence numbers).
# Both write to the guest's tmpfs: a write to the 9p share costs milliseconds under emulation.
if [ -n "${EDGEWATCH:-}" ]; then
    seen_by="edgewatch (libgpiod $libgpiod, v2 uAPI)"
    "$EDGEWATCH" "/dev/$chipdev" 17 27 22 5 6 23 24 25 > /tmp/edges.txt 2> "$out/edges.err" &
else
    seen_by="gpiomon (Debian libgpiod $(gpiomon --version | sed -nE '1s/.*v([0-9][0-9.]*).*/\1/p') tools, v1 uAPI)"
    gpiomon -b -B pull-up -F '%o %e %s %n' "$chipdev" 17 27 22 5 6 23 24 25 > /tmp/edges.txt 2> "$out/edges.err" &
fi
mon=$!
for _ in $(seq 50); do
    if [ -n "${EDGEWATCH:-}" ]; then grep -q ready "$out/edges.err" && break; else sleep 0.5; break; fi
    sleep 0.2
done
sleep 0.5
kill -0 "$mon" 2>/dev/null || fail "the edge watcher did not start: $(cat "$out/edges.err")"
t0=$(cut -d' ' -f1 /proc/uptime)
$bb sh "$vm/dog.sh" "$sim" "$vm/block.dog" /tmp/injected.txt "$out/trials.txt" 2>&1 | sed 's/^/guest: /'
cp /tmp/injected.txt "$out/injected.txt"
t1=$(cut -d' ' -f1 /proc/uptime)
sleep 1
kill -INT "$mon"; wait "$mon" 2>/dev/null
cp /tmp/edges.txt "$out/edges.txt"
trials=$(wc -l < "$out/trials.txt")
injected=$(wc -l < "$out/injected.txt")
logged=$(wc -l < "$out/edges.txt")
say "dog: $trials trials in $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}') s; edges injected $injected, seen by $seen_by $logged"
# Per line: the sequence of edges seen must be the sequence injected (none lost, none extra,
# same order), with kernel timestamps strictly increasing. The edge type is compared too, but
# counted apart: the kernel reads the line's level in the interrupt thread to name the edge,
# so a bounce faster than that thread may be named after the next level.
# The dog's timing as the kernel saw it: each sniff or press, from its falling edge's timestamp
# to its rising edge's, against the duration block.dog meant. Emulation only ever stretches
# it; a pass (meant < hold_ms) stretched to hold_ms - hold_tolerance_ms would turn into an
# indication for the daemon, so that is a mismatch.
hold_ms=$(sed -nE 's/^hold_ms *= *([0-9]+).*/\1/p' "$vm/vm.toml")
tol_ms=$(sed -nE 's/^hold_tolerance_ms *= *([0-9]+).*/\1/p' "$vm/vm.toml")
debounce_ms=$(sed -nE 's/^debounce_ms *= *([0-9]+).*/\1/p' "$vm/vm.toml")
check=$(awk -v hold="$hold_ms" -v tol="$tol_ms" -v deb="$debounce_ms" '
    FNR == NR { n = ++ni[$2]; inj[$2, n] = ($3 == "rising" ? 1 : 0); want[$2, n] = $5; next }
    { n = ++ns[$1]; seen[$1, n] = $2
      ts = $3 * 1000000000 + $4          # gpiomon 1.6 prints %n without zero padding
      at[$1, n] = ts
      if (FNR > 1 && ts <= last) backwards++
      last = ts
      if (NF >= 5) { if (lastseq != "" && $5 != lastseq + 1) seqgaps++; lastseq = $5 } }
    END {
      for (o in ni) {
          if (ni[o] != ns[o]) { printf "line %s: %d injected, %d seen\n", o, ni[o], ns[o]; bad++; continue }
          for (i = 1; i <= ni[o]; i++) {
              if (inj[o, i] != seen[o, i]) types++
              if (want[o, i] ~ /^c/ && want[o, i - 1] ~ /^c/) {
                  gap = (at[o, i] - at[o, i - 1]) / 1e6; nb++
                  if (gap > maxbounce) maxbounce = gap
                  if (gap >= deb) slowbounce++
              } else if (want[o, i] != "" && want[o, i] !~ /^c/ && i > 1) {
                  got = (at[o, i] - at[o, i - 1]) / 1e6; over = got - want[o, i]
                  if (over > maxover) maxover = over
                  if (want[o, i] < hold - tol && got >= hold - tol) {
                      printf "line %s: a %d ms sniff lasted %.1f ms, an indication for the daemon\n", o, want[o, i], got; bad++ }
              }
          }
      }
      for (o in ns) if (!(o in ni)) { printf "line %s: edges seen, none injected\n", o; bad++ }
      printf "RESULT %d %d %d %d %.1f %.2f %d %d\n", bad + 0, types + 0, backwards + 0, seqgaps + 0, maxover + 0, maxbounce + 0, slowbounce + 0, nb + 0
    }' "$out/injected.txt" "$out/edges.txt")
grep -v '^RESULT' <<< "$check" | while read -r l; do [ -n "$l" ] && say "MISMATCH: $l"; done
read -r _ badlines typemis backwards seqgaps maxover maxbounce slowbounce nbounce <<< "$(grep '^RESULT' <<< "$check")"
say "dog timing: sniffs and presses lasted at most $maxover ms longer than block.dog meant; chatter: $nbounce bounce edges, the slowest $maxbounce ms after the one before, $slowbounce of them not shorter than the ${debounce_ms} ms debounce"
[ "$injected" -gt 0 ] || fail "the dog injected no edges"
[ "$injected" = "$logged" ] || fail "edges injected $injected, seen $logged"
[ "$badlines" = 0 ] || fail "$badlines lost or extra edges, or passes stretched into holds"
[ "$backwards" = 0 ] || fail "$backwards kernel timestamps out of order"
[ "$seqgaps" = 0 ] || fail "$seqgaps gaps in the kernel's event sequence numbers"
[ "$typemis" = 0 ] || say "note: $typemis edges named rising/falling after a later level (bounces)"

# 3b. snd-dummy's ALSA trigger timestamps through the daemon's click path, while the hardware
# mode does not exist: `lineupd --simulate` (simulated dog and edges, NOT the GPIO path) with
# its click on snd-dummy. Its figures are reported apart (sim_daemon_*), never as the
# click_latency_* of the GPIO path. Runs when a lineupd sits next to lineupctl.
sim_clicks=null; sim_p50=null; sim_p99=null; sim_state="not run: no lineupd next to lineupctl"
simd=$(dirname "$LINEUPCTL")/lineupd
if [ -x "$simd" ]; then
    rm -f /tmp/sim.db*
    LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" timeout 120 "$simd" --simulate --trials 6 --speed 20 \
        --seed 7 --db /tmp/sim.db --device hw:CARD=Dummy,DEV=0 > "$out/simulate.txt" 2>&1
    sim_rc=$?
    if [ "$sim_rc" != 0 ]; then
        sim_state="failed ($sim_rc)"; fail "lineupd --simulate on snd-dummy exited $sim_rc"
    else
        simvals=$(python3 - <<'PY'
import sqlite3
db = sqlite3.connect("/tmp/sim.db")
rows = db.execute("SELECT click_edge_ns, click_trigger_ns FROM event WHERE kind = 'click'").fetchall()
lat = sorted((t - e) / 1000 for e, t in rows if e is not None and t is not None)
pct = lambda p: "null" if not lat else str(round(lat[max(0, min(len(lat) - 1, int(round(p / 100 * len(lat) + 0.5)) - 1))]))
print(len(rows), len(lat), pct(50), pct(99))
PY
)
        read -r sim_clicks sim_with sim_p50 sim_p99 <<< "${simvals:-0 0 null null}"
        sim_state="ran"
        say "lineupd --simulate on snd-dummy: $sim_clicks clicks, $sim_with with edge and trigger timestamps; edge->trigger p50 $sim_p50 us, p99 $sim_p99 us"
        [ "${sim_clicks:-0}" -gt 0 ] || fail "lineupd --simulate on snd-dummy logged no click"
        [ "${sim_with:-0}" = "${sim_clicks:-x}" ] || fail "clicks on snd-dummy without an ALSA trigger timestamp"
    fi
fi

# 4. The daemon. HOOK: lineupd's hardware mode (lineupd --config FILE reading the GPIO lines)
# is not written yet, so by default this phase is reported as not run and the click latency is
# null. run.sh --lineupd PATH turns it on: the daemon holds the lines (no edge watcher can then),
# the same block.dog is replayed, and check-log.py checks the daemon's log:
#   - every injected edge is in the log with its kernel timestamp (edges_logged);
#   - each trial's outcome in the log equals block.dog's intended one ($out/trials.txt), with an
#     automated program whose layouts put the target where block.dog says;
#   - each click's onset: the edge's kernel timestamp to the snd-dummy stream's ALSA trigger
#     timestamp (both CLOCK_MONOTONIC), p50 and p99 in µs.
# What remains once the daemon exists: how it is given block.dog's layouts (the program, a
# seed or a fixed layout), a readiness signal better than "holds its lines", and confirming
# check-log.py's reading of the log (written against the simulated daemon's log).
daemon="not run: no --lineupd given"
outputs=null
feeder_log=null
click_p50=null; click_p99=null; outcomes_checked=false
run_daemon() {
    local db=/tmp/lineup.db
    for o in 17 27 22 5 6 23 24 25; do echo pull-up > "$sim/sim_gpio$o/pull"; done
    local sock=/tmp/lineup-control.sock
    LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPD" --config "$vm/vm.toml" --db "$db" \
        --device hw:CARD=Dummy,DEV=0 --socket "$sock" --programs "$vm" > "$out/lineupd.txt" 2>&1 &
    local pid=$!
    # Ready when its control socket answers (it binds the socket after the lines, the sound
    # card and the log are open), at most 60 s: a Swift program's start under TCG, its
    # libraries read over 9p, takes seconds.
    for _ in $(seq 120); do
        kill -0 "$pid" 2>/dev/null || break
        [ -S "$sock" ] && LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPCTL" status --socket "$sock" \
            > /dev/null 2>&1 && break
        sleep 0.5
    done
    if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid"; local rc=$?
        sed 's/^/guest: lineupd| /' "$out/lineupd.txt"
        fail "lineupd --config exited ($rc) before the block started: $(head -1 "$out/lineupd.txt")"
        daemon="exited at start ($rc): $(head -1 "$out/lineupd.txt")"
        return
    fi
    # block.dog's layouts as the session's planned layouts: the target where the block puts
    # it, controls elsewhere; a "blank" trial has no target.
    local layouts=() target kinds s
    while read -r word n tgt _; do
        [ "$word" = trial ] || continue
        kinds=""
        for s in A B C D E; do
            if [ "$s" = "$tgt" ]; then kinds+="target,"; else kinds+="control,"; fi
        done
        layouts+=(--layout "${kinds%,}")
    done < "$vm/block.dog"
    if ! LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPCTL" session start --socket "$sock" --dog vm-dog --new-dog \
        --program vm-program --step block/1 --mode automated --unlabelled "${layouts[@]}" > "$out/session.txt" 2>&1; then
        sed 's/^/guest: lineupctl| /' "$out/session.txt"
        fail "lineupctl session start was refused: $(head -1 "$out/session.txt")"
        daemon="session not started"
        kill -TERM "$pid"; wait "$pid"
        return
    fi
    say "$(head -1 "$out/session.txt")"
    # After each trial: wait until the daemon has scored it (at most 30 s), then its 1 s interval.
    cat > /tmp/dog-end.sh <<EOS
for i in \$(seq 150); do
    d=\$(LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPCTL" status --socket "$sock" --json 2>/dev/null | sed -nE 's/.*"trials_done" *: *([0-9]+).*/\\1/p')
    [ "\${d:-0}" -ge "\$1" ] && break
    sleep 0.2
done
sleep 1.3
EOS
    # The outputs lineupd drives, read as gpio-sim shows them: station A's valve (GPIO12, open
    # while the dog searches), the buzzer (GPIO18, a 250 ms pulse per click) and the feeder
    # (GPIO19, a 250 ms pulse 100 ms after each click). Sampled every
    # 50 ms with bash builtins only (no process per sample: under TCG a fork costs the dog's
    # timing); each must be seen high and then low again.
    rm -f /tmp/outputs-stop /tmp/outputs.txt /tmp/outputs-tick
    mkfifo /tmp/outputs-tick
    (
        exec 9<> /tmp/outputs-tick
        valve=0; valve_closed=0; buzz=0; buzz_off=0; feed=0; feed_off=0
        while [ ! -e /tmp/outputs-stop ]; do
            read -r v < "$sim/sim_gpio12/value"; read -r b < "$sim/sim_gpio18/value"
            read -r f < "$sim/sim_gpio19/value"
            [ "$v" = 1 ] && valve=1; [ "$valve" = 1 ] && [ "$v" = 0 ] && valve_closed=1
            [ "$b" = 1 ] && buzz=1; [ "$buzz" = 1 ] && [ "$b" = 0 ] && buzz_off=1
            [ "$f" = 1 ] && feed=1; [ "$feed" = 1 ] && [ "$f" = 0 ] && feed_off=1
            read -r -t 0.05 -u 9 _ || true
        done
        echo "$valve $valve_closed $buzz $buzz_off $feed $feed_off" > /tmp/outputs.txt
    ) &
    local sampler=$!
    DOG_END="$bb sh /tmp/dog-end.sh" $bb sh "$vm/dog.sh" "$sim" "$vm/block.dog" /tmp/injected-daemon.txt "$out/trials.txt" 2>&1 | sed 's/^/guest: /'
    cp /tmp/injected-daemon.txt "$out/"
    # The last trial ends on its indication or its search time; then the session ends.
    local n=${#layouts[@]} done=0
    n=$((n / 2))
    for _ in $(seq 60); do
        done=$(LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPCTL" status --socket "$sock" --json 2>/dev/null \
            | sed -nE 's/.*"trials_done" *: *([0-9]+).*/\1/p')
        [ "${done:-0}" -ge "$n" ] && break
        sleep 0.5
    done
    touch /tmp/outputs-stop; wait "$sampler"
    read -r valve_seen valve_closed buzzer_seen buzzer_off feeder_seen feeder_off < /tmp/outputs.txt
    outputs="{\"valve_a_opened\":$([ "$valve_seen" = 1 ] && echo true || echo false),\"valve_a_closed\":$([ "$valve_closed" = 1 ] && echo true || echo false),\"buzzer_on\":$([ "$buzzer_seen" = 1 ] && echo true || echo false),\"buzzer_off\":$([ "$buzzer_off" = 1 ] && echo true || echo false),\"feeder_on\":$([ "$feeder_seen" = 1 ] && echo true || echo false),\"feeder_off\":$([ "$feeder_off" = 1 ] && echo true || echo false)}"
    say "outputs on gpio-sim: $outputs"
    [ "$valve_seen" = 1 ] && [ "$valve_closed" = 1 ] || fail "station A's output (GPIO12) was not seen opening and closing: $outputs"
    [ "$buzzer_seen" = 1 ] && [ "$buzzer_off" = 1 ] || fail "the buzzer (GPIO18) was not seen pulsing: $outputs"
    [ "$feeder_seen" = 1 ] && [ "$feeder_off" = 1 ] || fail "the feeder (GPIO19) was not seen pulsing: $outputs"
    LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPCTL" session end --socket "$sock" \
        --suggestions "scripted block in the emulated-hardware tier" > /dev/null 2>&1 \
        || fail "lineupctl session end failed"
    if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid"; local rc=$?
        sed 's/^/guest: lineupd| /' "$out/lineupd.txt"
        fail "lineupd exited ($rc) during the block"
        daemon="exited during the block ($rc)"
        return
    fi
    kill -TERM "$pid"; wait "$pid"
    sed 's/^/guest: lineupd| /' "$out/lineupd.txt"
    daemon="ran"
    # The log against the dog: check-log.py (written against the simulated daemon's log,
    # which uses the same records; to be confirmed when the hardware mode exists).
    local res
    res=$(python3 "$vm/check-log.py" "$db" "$out/injected-daemon.txt" "$out/trials.txt")
    local rc=$?
    echo "$res" > "$out/check-log.json"
    say "daemon log: $res"
    logged=$(sed -nE 's/.*"edges_logged": ([0-9]+).*/\1/p' <<< "$res")
    seen_by="lineupd's log ($db)"
    click_p50=$(sed -nE 's/.*"click_latency_p50_us": ([0-9]+|null).*/\1/p' <<< "$res")
    click_p99=$(sed -nE 's/.*"click_latency_p99_us": ([0-9]+|null).*/\1/p' <<< "$res")
    outcomes_checked=true
    [ "$rc" = 0 ] || fail "lineupd's log does not match the dog: $res"
    # The feeder's pulses in the log: one after each click, at vm.toml's delay and width.
    feeder_log=$(python3 "$vm/check-feeder.py" "$db" 100 250)
    rc=$?
    say "feeder in the log: $feeder_log"
    [ "$rc" = 0 ] || fail "the feeder's pulses in lineupd's log do not match its clicks: $feeder_log"
    # Every trial rescored from the log's edges and presses by the second implementation.
    local scoring
    scoring=$(LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPCTL" verify-scoring --db "$db" 2>&1)
    rc=$?
    say "verify-scoring: $(tail -1 <<< "$scoring")"
    [ "$rc" = 0 ] || { sed 's/^/guest: verify-scoring| /' <<< "$scoring"; fail "lineupctl verify-scoring disagrees with lineupd's log"; }
}
[ -z "${LINEUPD:-}" ] || run_daemon
# Sensor faults on the kernel's GPIO path (issue 13), on a daemon of their own so the block's
# log stays the dog's: station A held active when a trial would start (a fallen lid: its line
# pulled low) must refuse the start and be flagged; released, the start goes ahead; a storm on
# B during the search must be the chatter fault. The storm's bounces must fall between the
# debounce window and twice it (the engine's chatter gap): with vm.toml's 5 ms that is 5 to
# 10 ms, a margin qemu's timing under a loaded host overran (bounces stretched to 11.5 ms were
# read as sniffs). This daemon runs on a copy of vm.toml with a 20 ms debounce, so bounces
# 30 ms apart have 10 ms of slack either side.
sensor_faults=null
run_faults() {
    local db=/tmp/lineup-faults.db sock=/tmp/lineup-faults.sock config=/tmp/vm-faults.toml
    for o in 17 27 22 5 6 23 24 25; do echo pull-up > "$sim/sim_gpio$o/pull"; done
    sed 's/^debounce_ms = 5$/debounce_ms = 20/' "$vm/vm.toml" > "$config"
    grep -q '^debounce_ms = 20$' "$config" || { fail "vm.toml has no 'debounce_ms = 5' line to widen"; return; }
    LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPD" --config "$config" --db "$db" \
        --device hw:CARD=Dummy,DEV=0 --socket "$sock" --programs "$vm" > "$out/lineupd-faults.txt" 2>&1 &
    local pid=$!
    lctl() { LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPCTL" "$@" --socket "$sock"; }
    for _ in $(seq 120); do
        kill -0 "$pid" 2>/dev/null || break
        [ -S "$sock" ] && lctl status > /dev/null 2>&1 && break
        sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null || { fail "lineupd (faults) exited at start"; return; }
    echo pull-down > "$sim/sim_gpio17/pull"
    sleep 0.3
    lctl session start --dog vm-dog --new-dog --program vm-program --step block/1 --mode automated --unlabelled --trials 1 \
        > /dev/null 2>&1 || fail "the fault session was refused"
    sleep 0.5
    lctl ready > /dev/null 2>&1
    local refused=false chattered=false st
    for _ in $(seq 20); do
        st=$(lctl status --json 2>/dev/null)
        grep -q '"active-at-start"' <<< "$st" && { refused=true; break; }
        sleep 0.25
    done
    echo pull-up > "$sim/sim_gpio17/pull"
    sleep 0.5
    lctl ready > /dev/null 2>&1
    sleep 0.5
    "$CHATTER" "$sim/sim_gpio27/pull" 40 30000 > /dev/null
    for _ in $(seq 20); do
        st=$(lctl status --json 2>/dev/null)
        grep -q '"chatter" *: *[1-9]' <<< "$st" && { chattered=true; break; }
        sleep 0.25
    done
    lctl session end > /dev/null 2>&1 || fail "the fault session did not end"
    kill -TERM "$pid"; wait "$pid"
    sed 's/^/guest: lineupd-faults| /' "$out/lineupd-faults.txt"
    sensor_faults="{\"active_at_start_refused\":$refused,\"chatter_flagged\":$chattered}"
    say "sensor faults on gpio-sim: $sensor_faults"
    [ "$refused" = true ] || fail "station A held active did not refuse the start: $(tr -d '\n' <<< "$st" | head -c 300)"
    [ "$chattered" = true ] || fail "a storm on B was not flagged as chatter: $(tr -d '\n' <<< "$st" | head -c 300)"
}
[ -z "${LINEUPD:-}" ] || run_faults
# Bursts through the kernel's GPIO path (issue 18): libgpiod v2's kernel buffer holds exactly
# 64 events, one read's batch; a hot loop that read on after a full batch blocked in read()
# until the next edge. On a daemon of its own: the nose arrives at the target (a 2 s hold,
# vm-program's burst/1), the daemon is stopped (SIGSTOP) so that a burst of exactly 64, then
# 128, edges on the ready button (which means nothing during a search) waits for it all at
# once, and is let go; the nose stays until 0.6 s after the hold is due. The hold must be
# clicked at its deadline: the click's timestamp (the hot loop's clock when the deadline ran)
# minus the arrival edge's kernel timestamp minus the hold, within BURST_TOLERANCE_MS. A loop
# blocked in read() would click at the nose's release, 600 ms late, or not at all.
burst=null
BURST_TOLERANCE_MS=${BURST_TOLERANCE_MS:-100}
run_burst() {
    local db=/tmp/lineup-burst.db sock=/tmp/lineup-burst.sock
    for o in 17 27 22 5 6 23 24 25; do echo pull-up > "$sim/sim_gpio$o/pull"; done
    LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPD" --config "$vm/vm.toml" --db "$db" \
        --device hw:CARD=Dummy,DEV=0 --socket "$sock" --programs "$vm" > "$out/lineupd-burst.txt" 2>&1 &
    local pid=$!
    bctl() { LD_LIBRARY_PATH="$LINEUPCTL_LD_LIBRARY_PATH" "$LINEUPCTL" "$@" --socket "$sock"; }
    for _ in $(seq 120); do
        kill -0 "$pid" 2>/dev/null || break
        [ -S "$sock" ] && bctl status > /dev/null 2>&1 && break
        sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null || { fail "lineupd (bursts) exited at start: $(head -1 "$out/lineupd-burst.txt")"; return; }
    # Trial 1: target A (GPIO17), a burst of 64; trial 2: target C (GPIO22), a burst of 128.
    if ! bctl session start --dog vm-dog --new-dog --program vm-program --step burst/1 --mode automated --unlabelled \
        --layout target,control,control,control,control --layout control,control,target,control,control \
        > "$out/session-burst.txt" 2>&1; then
        fail "the burst session was refused: $(head -1 "$out/session-burst.txt")"
        kill -TERM "$pid"; wait "$pid"
        return
    fi
    local plan=() n=0 target edges station d
    for spec in "17 64 1" "22 128 3"; do
        read -r target edges station <<< "$spec"
        n=$((n + 1))
        echo pull-down > "$sim/sim_gpio25/pull"; $bb usleep 50000; echo pull-up > "$sim/sim_gpio25/pull"
        $bb usleep 300000
        echo pull-down > "$sim/sim_gpio$target/pull"  # the nose arrives: the hold begins
        $bb usleep 150000                                 # the daemon has read that edge
        kill -STOP "$pid"
        "$CHATTER" "$sim/sim_gpio25/pull" $((edges / 2)) 1000 > "$out/burst-$n.txt" \
            || fail "chatter could not make the burst of $edges"
        kill -CONT "$pid"
        say "burst of $edges edges on the ready button while the nose holds station $station"
        # The nose stays 2.6 s from its arrival: 0.6 s past the hold's deadline.
        $bb usleep 2450000
        echo pull-up > "$sim/sim_gpio$target/pull"
        for _ in $(seq 100); do
            d=$(bctl status --json 2>/dev/null | sed -nE 's/.*"trials_done" *: *([0-9]+).*/\1/p')
            [ "${d:-0}" -ge "$n" ] && break
            sleep 0.2
        done
        sleep 1.3
        plan+=("$n:$station:$edges")
    done
    bctl status --json > "$out/status-burst.json" 2>&1
    bctl session end > /dev/null 2>&1 || fail "the burst session did not end"
    kill -TERM "$pid"; wait "$pid"
    sed 's/^/guest: lineupd-burst| /' "$out/lineupd-burst.txt"
    local dropped res rc
    dropped=$(sed -nE 's/.*"dropped_edges" *: *([0-9]+).*/\1/p' "$out/status-burst.json")
    res=$(python3 "$vm/check-burst.py" "$db" "$BURST_TOLERANCE_MS" "${dropped:-null}" "${plan[@]}")
    rc=$?
    burst=${res:-null}
    say "bursts on gpio-sim: $burst"
    [ "$rc" = 0 ] || fail "a hold held through a burst was not clicked at its deadline: $burst"
}
[ -z "${LINEUPD:-}" ] || run_burst

status=ok
[ ${#failures[@]} = 0 ] || status=mismatch
result="{\"run\":$(json_str "$RUN_NAME"),\"libgpiod\":$(json_str "$libgpiod"),\"api\":$(json_str "$api"),\"kernel\":$(json_str "$kernel")"
result+=",\"trials\":$trials,\"edges_injected\":$injected,\"edges_logged\":$logged,\"edges_seen_by\":$(json_str "$seen_by")"
result+=",\"edge_type_renamed\":$typemis,\"dog_max_stretch_ms\":$maxover,\"chatter_bounces\":$nbounce,\"chatter_max_bounce_ms\":$maxbounce,\"chatter_bounces_over_debounce\":$slowbounce,\"lines_found\":$lines_found,\"test_click\":\"$test_click\",\"test_click_handed_us\":${handed:-null}"
result+=",\"click_latency_p50_us\":$click_p50,\"click_latency_p99_us\":$click_p99,\"sim_daemon\":$(json_str "$sim_state"),\"sim_daemon_clicks\":$sim_clicks,\"sim_daemon_click_latency_p50_us\":$sim_p50,\"sim_daemon_click_latency_p99_us\":$sim_p99,\"outcomes_checked\":$outcomes_checked,\"outputs\":$outputs,\"feeder\":$feeder_log,\"sensor_faults\":$sensor_faults,\"bursts\":$burst,\"daemon\":$(json_str "$daemon")"
result+=",\"status\":\"$status\""
[ ${#failures[@]} = 0 ] || result+=",\"failures\":$(json_str "$(IFS=';'; echo "${failures[*]}")")"
result+="}"
echo "$result" > "$out/result.json"
echo "LINEUP-VM-RESULT $result"
[ ${#failures[@]} = 0 ]
