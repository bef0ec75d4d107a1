#!/bin/bash
# The systemd phase's checks (run.sh --systemd), run inside the guest by lineup-vm-test.service
# with systemd as PID 1. Installs the station's Debian package (packaging/deb/build.sh) as
# docs/install.md says, starts lineupd.service against the gpio-sim chip and snd-dummy, and
# checks what the unit promises: READY=1, user lineup with no capabilities, SCHED_FIFO and
# locked memory, the socket's group, a member's and an outsider's lineupctl, a scripted
# session logged through the sandbox, reload, a clean stop, the log intact. lineup-web.service
# runs beside it and serves its login page on loopback. Last, the package is removed and
# purged: units and binaries gone, the log kept.
# Prints "LINEUP-VM-RESULT {json}" and "LINEUP-VM-DONE rc=N uptime=S" on the console.
# No `set -e`: every check runs and is reported, a failed one does not stop the others.
set -uo pipefail
lib=/usr/local/lib/lineup-vm
out=/mnt/lineup-out
. "$out/params.sh"
. "$out/sim.sh"
sim=/sys/devices/platform/$SIM_DEV/$SIM_CHIP
bb=/bin/busybox
sock=/run/lineup/control.sock
db=/var/lib/lineup/lineup.db
say() { echo "guest: [$(cut -d' ' -f1 /proc/uptime)] $*"; }
failures=()
fail() { say "MISMATCH: $*"; failures+=("$*"); }
json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
# As a user of the station, with that user's groups (no PAM, no login shell needed).
as() { local u=$1; shift; setpriv --reuid "$u" --regid "$u" --init-groups --reset-env "$@"; }
prop() { systemctl show -P "$2" "$1"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
# thread_sched /proc/PID/task/TID: sets comm, prio (field 40 of stat) and policy (field 41).
# The name is in parentheses and may hold spaces, so the fields are counted after it.
thread_sched() {
    local s rest
    s=$(cat "$1/stat" 2>/dev/null) || { policy=""; return; }
    comm=${s#*(}; comm=${comm%)*}; comm=${comm// /_}
    rest=${s##*) }
    read -r -a f <<< "$rest"
    prio=${f[37]}; policy=${f[38]}
}

say "systemd $(systemctl --version | head -1 | cut -d' ' -f2-3) is PID 1 ($(cat /proc/1/comm)); kernel $(uname -r)"
# systemd-analyze time needs the boot finished, and this test is part of it: PID 1's own figures.
boot_userspace_s=$(awk -v u="$(systemctl show -P UserspaceTimestampMonotonic)" 'BEGIN { printf "%.2f", u / 1e6 }')
test_started_s=$(awk -v u="$(systemctl show -P ExecMainStartTimestampMonotonic lineup-vm-test.service)" 'BEGIN { printf "%.2f", u / 1e6 }')
say "boot: systemd started at ${boot_userspace_s}s, this test at ${test_started_s}s"

# 1. The station's Debian package, as docs/install.md installs it (packaging/deb/build.sh).
# Without /etc/lineup/station.toml yet, the package's rule is to start nothing.
deb=$(ls "$out"/lineup_*.deb)
# man-db's trigger would update the manual index over 9p under TCG, for the
# package's three pages: its postinst does nothing without this file (removed from the overlay only).
rm -f /var/lib/man-db/auto-update
say "installing $(basename "$deb")"
# dpkg itself, as apt would call it once the dependencies are there (they are: this is the
# build host's own root). apt-get reading the host's package lists took 170 s under TCG.
dpkg -i "$deb" > "$out/dpkg-install.txt" 2>&1
install_rc=$?
sed 's/^/guest: dpkg| /' "$out/dpkg-install.txt"
deb_install=ok
[ "$install_rc" = 0 ] || { deb_install="failed ($install_rc)"; fail "dpkg -i $(basename "$deb") exited $install_rc"; }
for f in /usr/bin/lineupd /usr/bin/lineupctl /usr/bin/lineup-web /usr/lib/systemd/system/lineupd.service \
    /usr/lib/systemd/system/lineup-web.service; do
    [ -e "$f" ] || fail "the package did not install $f"
done
not_started="$(systemctl is-active lineupd.service)/$(systemctl is-enabled lineupd.service 2>&1)"
say "after the install, before station.toml: lineupd $not_started"
[ "$not_started" = inactive/disabled ] || fail "lineupd is $not_started right after the install, with no station.toml"
install -m 0640 -g lineup "$lib/vm.toml" /etc/lineup/station.toml || fail "cannot install station.toml with group lineup"
# The VM's program, where the daemon looks by default ($CONFIGURATION_DIRECTORY/programs).
install -d -m 0750 -g lineup /etc/lineup/programs
install -m 0640 -g lineup "$lib/vm-program.toml" /etc/lineup/programs/
# A trainer in the lineup group (README: usermod -aG lineup "$USER"), and a user who is not.
useradd --no-create-home --shell /usr/sbin/nologin trainer && usermod -aG lineup trainer
useradd --no-create-home --shell /usr/sbin/nologin outsider
say "users: $(id lineup); $(id trainer); $(id outsider)"
say "devices: $(stat -c '%n %a %U:%G' /dev/gpiochip0 /dev/snd/pcmC0D0p /dev/snd/controlC0 | tr '\n' ';')"
[ "$(stat -c %G /dev/gpiochip0)" = gpio ] || fail "/dev/gpiochip0 is not group gpio (udev rule)"
systemctl daemon-reload
verify=$(systemd-analyze verify /usr/lib/systemd/system/lineupd.service /usr/lib/systemd/system/lineup-web.service 2>&1)
[ -z "$verify" ] || { say "systemd-analyze verify:"; sed 's/^/guest: verify| /' <<< "$verify"; fail "systemd-analyze verify of the units is not clean"; }

# Idle level of every line the lineup uses: pulled up (sensors and buttons are active-low).
for o in 17 27 22 5 6 23 24 25; do echo pull-up > "$sim/sim_gpio$o/pull"; done

# 2. Start: Type=notify, so systemctl start returns when the daemon has sent READY=1.
t0=$(uptime_s)
systemctl start lineupd.service
start_rc=$?
t1=$(uptime_s)
main=$(prop lineupd MainPID)
state="$(prop lineupd ActiveState)/$(prop lineupd SubState)"
nrestarts=$(prop lineupd NRestarts)
exit_us=$(prop lineupd InactiveExitTimestampMonotonic)
ready_us=$(prop lineupd ActiveEnterTimestampMonotonic)
ready_s=$(awk -v r="$ready_us" 'BEGIN { printf "%.2f", r / 1e6 }')
start_to_ready_s=$(awk -v a="$exit_us" -v r="$ready_us" 'BEGIN { printf "%.2f", (r - a) / 1e6 }')
say "systemctl start lineupd: exit $start_rc in $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}') s; $state, MainPID $main, NRestarts $nrestarts; READY=1 at ${ready_s}s after boot, ${start_to_ready_s}s after the start; status: $(prop lineupd StatusText)"
[ "$start_rc" = 0 ] || fail "systemctl start lineupd exited $start_rc"
[ "$state" = active/running ] || fail "lineupd is $state, not active/running"
[ "$nrestarts" = 0 ] || fail "lineupd restarted $nrestarts times"
[ "${main:-0}" -gt 0 ] || fail "no MainPID"
if [ "$start_rc" != 0 ] || [ "${main:-0}" = 0 ]; then
    journalctl -b -u lineupd --no-pager -o short-monotonic | sed 's/^/guest: journal| /'
fi

# 3. The process: user lineup, groups, no capability, seccomp, no new privileges, the umask,
# its own network namespace, a read-only root; SCHED_FIFO on the hot thread; memory locked.
user=""; capeff=""; vmlck_kb=null; fifo_threads=0; fifo_names=""; swift_runtime=""
if [ "${main:-0}" -gt 0 ] && [ -d "/proc/$main" ]; then
    st=/proc/$main/status
    user=$(stat -c %U "/proc/$main")
    capeff=$(awk '/^CapEff:/ { print $2 }' "$st")
    capprm=$(awk '/^CapPrm:/ { print $2 }' "$st")
    capbnd=$(awk '/^CapBnd:/ { print $2 }' "$st")
    vmlck_kb=$(awk '/^VmLck:/ { print $2 }' "$st")
    seccomp=$(awk '/^Seccomp:/ { print $2 }' "$st")
    nnp=$(awk '/^NoNewPrivs:/ { print $2 }' "$st")
    umask_=$(awk '/^Umask:/ { print $2 }' "$st")
    groups=$(for g in $(awk '/^Groups:/ { $1 = ""; print }' "$st"); do getent group "$g" | cut -d: -f1; done | sort | tr '\n' ' ')
    say "process $main: user $user, groups $groups, CapEff $capeff CapPrm $capprm CapBnd $capbnd, Seccomp $seccomp, NoNewPrivs $nnp, Umask $umask_, VmLck $vmlck_kb kB"
    [ "$user" = lineup ] || fail "lineupd runs as $user, not lineup"
    for g in lineup gpio audio; do grep -qw "$g" <<< "$groups" || fail "lineupd is not in group $g"; done
    [ "$capeff" = 0000000000000000 ] && [ "$capprm" = 0000000000000000 ] && [ "$capbnd" = 0000000000000000 ] \
        || fail "lineupd has capabilities (CapEff $capeff, CapPrm $capprm, CapBnd $capbnd)"
    [ "$seccomp" = 2 ] || fail "lineupd has no seccomp filter (Seccomp $seccomp)"
    [ "$nnp" = 1 ] || fail "NoNewPrivs is $nnp"
    [ "$umask_" = 0027 ] || fail "lineupd's umask is $umask_, not 0027"
    [ "${vmlck_kb:-0}" -gt 0 ] || fail "lineupd has no locked memory (VmLck $vmlck_kb kB)"
    [ "$(readlink "/proc/$main/ns/net")" != "$(readlink /proc/1/ns/net)" ] || fail "lineupd shares PID 1's network namespace"
    # The root as the service sees it: read-only (ProtectSystem=strict).
    rootopts=$(awk '$5 == "/" { print $6 }' "/proc/$main/mountinfo" | tail -1)
    case ",$rootopts," in *,ro,*) ;; *) fail "lineupd's / is not read-only ($rootopts)" ;; esac
    # Threads: policy (1 = SCHED_FIFO) and RT priority of each.
    for t in /proc/"$main"/task/*; do
        thread_sched "$t"
        if [ "$policy" = 1 ]; then fifo_threads=$((fifo_threads + 1)); fifo_names+="${comm}(${prio}) "; fi
    done
    say "threads: $(ls /proc/$main/task | wc -l), SCHED_FIFO: $fifo_threads ${fifo_names}"
    [ "$fifo_threads" -ge 1 ] || fail "no thread of lineupd runs SCHED_FIFO"
    # The Swift runtime the package ships (packaging/deb/build.sh), loaded through the
    # sandbox: not the toolchain's, which this guest's root (the host's) also has.
    swift_runtime=$(grep -oE '/[^ ]*/(libswiftCore|libFoundation|lib_FoundationICU)\.so' "/proc/$main/maps" | xargs -r -n1 dirname | sort -u | tr '\n' ' ')
    say "Swift runtime mapped from: ${swift_runtime:-nowhere}"
    [ "$swift_runtime" = "/usr/lib/lineup/swift " ] || fail "lineupd maps the Swift runtime from ${swift_runtime:-nowhere}, not /usr/lib/lineup/swift"
fi

# 3b. The station's page beside it: its first account made as the package's README.Debian
# says, then lineup-web.service started; both units active, the login page on loopback.
web_state=not-run; web_login=false
echo "vm-tier-admin-password" | as lineup-web /usr/bin/lineupctl web user add vm-admin --role admin \
    --users /var/lib/lineup-web/users.db --password-stdin > "$out/web-user.txt" 2>&1 \
    || fail "the first account of the page was refused: $(head -1 "$out/web-user.txt")"
systemctl start lineup-web.service || fail "systemctl start lineup-web exited $?"
login_code=""
for _ in $(seq 300); do
    login_code=$(curl -s -o "$out/web-login.html" -w '%{http_code}' --max-time 2 http://127.0.0.1:8080/login)
    [ "$login_code" = 200 ] && break
    sleep 0.1
done
web_state="$(systemctl is-active lineupd.service)/$(systemctl is-active lineup-web.service)"
say "lineupd/lineup-web: $web_state; GET http://127.0.0.1:8080/login: ${login_code:-no answer}"
[ "$web_state" = active/active ] || fail "lineupd/lineup-web are $web_state, not active/active"
if [ "$login_code" = 200 ] && grep -q 'id="login"' "$out/web-login.html"; then web_login=true
else
    fail "lineup-web did not serve its login page on loopback (HTTP ${login_code:-none})"
    journalctl -b -u lineup-web --no-pager -o short-monotonic | sed 's/^/guest: web-journal| /'
fi

# 3c. Logged in through the sandbox: the page's status comes from lineupd over the control
# socket (the unit's supplementary group), and the session is kept in the state directory, so
# it outlives a restart of lineup-web.
jar="$out/web-cookies.txt"
web_api=$(curl -s -c "$jar" -o "$out/web-me.json" -w '%{http_code}' --max-time 5 \
    -H 'Origin: http://127.0.0.1:8080' -H 'Content-Type: application/json' \
    --data '{"name":"vm-admin","password":"vm-tier-admin-password"}' http://127.0.0.1:8080/api/login)
status_code=$(curl -s -b "$jar" -o "$out/web-status.json" -w '%{http_code}' --max-time 5 http://127.0.0.1:8080/api/status)
systemctl restart lineup-web.service || fail "systemctl restart lineup-web exited $?"
me_code=""
for _ in $(seq 300); do
    me_code=$(curl -s -b "$jar" -o /dev/null -w '%{http_code}' --max-time 2 http://127.0.0.1:8080/api/me)
    [ "$me_code" = 200 ] && break
    sleep 0.1
done
say "page login: HTTP $web_api; /api/status: HTTP $status_code ($(head -c 80 "$out/web-status.json")); /api/me after a restart of lineup-web: HTTP ${me_code:-none}"
[ "$web_api" = 200 ] || fail "logging in to the page through the unit failed (HTTP $web_api)"
[ "$status_code" = 200 ] && grep -q '"state"' "$out/web-status.json" \
    || fail "the page could not read lineupd's status through the unit (HTTP $status_code)"
[ "$me_code" = 200 ] || fail "the page's session did not outlive a restart of lineup-web (HTTP ${me_code:-none})"

# 4. The control socket and the log, as a trainer (group lineup) and as an outsider.
sockmode=$(stat -c '%a %U:%G' "$sock" 2>/dev/null)
rundir=$(stat -c '%a %U:%G' /run/lineup 2>/dev/null)
statedir=$(stat -c '%a %U:%G' /var/lib/lineup 2>/dev/null)
say "socket $sock: $sockmode; /run/lineup $rundir; /var/lib/lineup $statedir; /etc/lineup $(stat -c '%a %U:%G' /etc/lineup)"
[ "$sockmode" = "660 lineup:lineup" ] || fail "control socket is $sockmode, not 660 lineup:lineup"
as outsider /usr/bin/lineupctl status > "$out/outsider-status.txt" 2>&1
outsider_rc=$?
say "outsider: lineupctl status exit $outsider_rc: $(head -1 "$out/outsider-status.txt")"
outsider_refused=false
if [ "$outsider_rc" != 0 ] && grep -q 'not allowed' "$out/outsider-status.txt"; then outsider_refused=true
else fail "an outsider's lineupctl status was not refused with 'not allowed'"; fi
as trainer /usr/bin/lineupctl status > "$out/trainer-status.txt" 2>&1
trainer_rc=$?
say "trainer: lineupctl status exit $trainer_rc: $(head -1 "$out/trainer-status.txt")"
member_status=false
[ "$trainer_rc" = 0 ] && member_status=true || fail "a member's lineupctl status failed: $(head -1 "$out/trainer-status.txt")"

# 5. A session through the socket: the scripted dog (block.dog) on the gpio-sim lines, the
# trainer starting and ending it.
layouts=()
while read -r word n tgt _; do
    [ "$word" = trial ] || continue
    kinds=""
    for s in A B C D E; do if [ "$s" = "$tgt" ]; then kinds+="target,"; else kinds+="control,"; fi; done
    layouts+=(--layout "${kinds%,}")
done < "$lib/block.dog"
trials=0; injected=0; logged=null; click_p50=null; click_p99=null; outcomes_checked=false; session=not-run
if as trainer /usr/bin/lineupctl session start --dog vm-dog --new-dog --program vm-program --step block/1 \
    --mode automated --unlabelled "${layouts[@]}" > "$out/session.txt" 2>&1; then
    session=ran
    say "trainer: $(head -1 "$out/session.txt")"
    # After each trial: wait until the station has scored it, then its 1 s interval.
    cat > /run/dog-end.sh <<'EOS'
for i in $(seq 150); do
    d=$(/usr/bin/lineupctl status --json 2>/dev/null | sed -nE 's/.*"trials_done" *: *([0-9]+).*/\1/p')
    [ "${d:-0}" -ge "$1" ] && break
    sleep 0.2
done
sleep 1.3
EOS
    CHATTER=$lib/chatter DOG_END="$bb sh /run/dog-end.sh" $bb sh "$lib/dog.sh" "$sim" "$lib/block.dog" \
        /run/injected.txt "$out/trials.txt" 2>&1 | sed 's/^/guest: /'
    cp /run/injected.txt "$out/injected-systemd.txt"
    trials=$(wc -l < "$out/trials.txt")
    injected=$(wc -l < "$out/injected-systemd.txt")
    for _ in $(seq 60); do
        d=$(/usr/bin/lineupctl status --json 2>/dev/null | sed -nE 's/.*"trials_done" *: *([0-9]+).*/\1/p')
        [ "${d:-0}" -ge "$trials" ] && break
        sleep 0.5
    done
    as trainer /usr/bin/lineupctl session end --suggestions "systemd phase of the emulated-hardware tier" \
        > /dev/null 2>&1 || fail "lineupctl session end failed"
else
    session="refused: $(head -1 "$out/session.txt")"
    fail "lineupctl session start was refused: $(head -1 "$out/session.txt")"
fi

# The log, read by the trainer (group lineup may read, never write).
as trainer /usr/bin/lineupctl sessions --db "$db" > "$out/trainer-sessions.txt" 2>&1
sessions_rc=$?
say "trainer: lineupctl sessions exit $sessions_rc: $(tail -1 "$out/trainer-sessions.txt")"
member_sessions=false
[ "$sessions_rc" = 0 ] && grep -q vm-dog "$out/trainer-sessions.txt" && member_sessions=true \
    || fail "a member cannot list the sessions: $(head -1 "$out/trainer-sessions.txt")"
dbmode=$(stat -c '%a %U:%G' "$db")
say "log $db: $dbmode; $(ls -l /var/lib/lineup | tail -n +2 | awk '{ print $1, $3":"$4, $NF }' | tr '\n' ';')"
member_can_write=false
if as trainer test -w "$db"; then member_can_write=true; fail "a member may write the log ($dbmode)"; fi
if as trainer sqlite3 "$db" "CREATE TABLE lineup_vm_probe(x); DROP TABLE lineup_vm_probe;" > /dev/null 2>&1; then
    member_can_write=true; fail "a member wrote into the log with sqlite3"
fi

# 6. Reload between sessions (ExecReload=SIGHUP): the same process, ready again, real-time again.
t0=$(uptime_s)
systemctl reload lineupd.service
reload_rc=$?
t1=$(uptime_s)
# systemd 252 takes the reload as done when ExecReload's kill returns, not at the daemon's
# READY=1 (Type=notify-reload, systemd 253, would wait): recorded, and waited for here.
early=$(journalctl -b -u lineupd -o cat --no-pager | grep -c 'reloaded /etc/lineup/station.toml')
for _ in $(seq 100); do
    journalctl -b -u lineupd -o cat --no-pager | grep -q 'reloaded /etc/lineup/station.toml' \
        && /usr/bin/lineupctl status > /dev/null 2>&1 && break
    sleep 0.1
done
t2=$(uptime_s)
reload_returned_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
reload_ready_s=$(awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%.2f", b - a }')
reload_returned_early=false; [ "$early" = 0 ] && reload_returned_early=true
say "reload: systemctl returned after ${reload_returned_s}s (before the daemon was back: $reload_returned_early), station answering again after ${reload_ready_s}s"
state2="$(prop lineupd ActiveState)/$(prop lineupd SubState)"
main2=$(prop lineupd MainPID)
fifo2=0
for t in /proc/"$main2"/task/*; do
    thread_sched "$t"
    [ "$policy" = 1 ] && fifo2=$((fifo2 + 1))
done
reloaded=$(journalctl -b -u lineupd -o cat --no-pager | grep -c 'reloaded /etc/lineup/station.toml')
say "systemctl reload lineupd: exit $reload_rc; $state2, MainPID $main2, SCHED_FIFO threads $fifo2, 'reloaded' in the journal $reloaded time(s)"
reload=ok
nrestarts2=$(prop lineupd NRestarts)
if [ "$reload_rc" != 0 ] || [ "$state2" != active/running ] || [ "$main2" != "$main" ] || [ "$reloaded" != 1 ] \
    || [ "$nrestarts2" != 0 ]; then
    reload="failed"; fail "reload: exit $reload_rc, $state2, MainPID $main -> $main2, reloaded $reloaded, NRestarts $nrestarts2"
fi
[ "$fifo2" -ge 1 ] || fail "after the reload no thread runs SCHED_FIFO"
[ "$(stat -c '%a %U:%G' "$sock" 2>/dev/null)" = "660 lineup:lineup" ] || fail "after the reload the socket is $(stat -c '%a %U:%G' "$sock" 2>&1)"

# 7. The watchdog: the daemon's WATCHDOG=1 pings move the unit's watchdog timestamp.
wd_usec=$(prop lineupd WatchdogUSec)
w1=$(prop lineupd WatchdogTimestampMonotonic)
sleep 6
w2=$(prop lineupd WatchdogTimestampMonotonic)
say "watchdog: WatchdogUSec $wd_usec; last ping at ${w1}us then ${w2}us"
watchdog=pinging
[ "${w2:-0}" -gt "${w1:-0}" ] || { watchdog="no ping"; fail "no WATCHDOG=1 ping within 6 s"; }

# 7b. A station that stops answering mid-session (SIGSTOP stands in for a hung hot loop): the
# pings stop, WatchdogSec= has systemd kill it, Restart=on-failure starts it again, and the new
# daemon keeps the session it never ended to be resumed; ended by the trainer, it is logged
# interrupted.
wd_restart=not-run; interrupted_logged=false; wd_back_s=null
if as trainer /usr/bin/lineupctl session start --dog hung-dog --new-dog --program vm-program --step block/1 \
    --mode automated --unlabelled --layout control,target,control,control,control > "$out/hung-session.txt" 2>&1; then
    hung_main=$(prop lineupd MainPID)
    t0=$(uptime_s)
    kill -STOP "$hung_main"
    for _ in $(seq 400); do
        m=$(prop lineupd MainPID)
        if [ "$(prop lineupd NRestarts)" -ge 1 ] && [ "${m:-0}" -gt 0 ] && [ "$m" != "$hung_main" ] \
            && [ "$(prop lineupd ActiveState)" = active ]; then break; fi
        sleep 0.1
    done
    t1=$(uptime_s)
    wd_back_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    m=$(prop lineupd MainPID)
    say "watchdog: stopped $hung_main mid-session; NRestarts $(prop lineupd NRestarts), MainPID $m, $(prop lineupd ActiveState)/$(prop lineupd SubState) after ${wd_back_s}s"
    if [ "$(prop lineupd NRestarts)" -ge 1 ] && [ "$m" != "$hung_main" ] && [ "$(prop lineupd ActiveState)" = active ]; then
        wd_restart=ok
    else
        wd_restart=failed; fail "the watchdog did not restart a lineupd that stopped answering"
    fi
    journalctl -b -u lineupd -o cat --no-pager \
        | grep -Eq 'was not ended: (lineupd stopped without ending it|kept to be resumed)' \
        || fail "the restarted lineupd did not say which session it found unfinished"
    # Kept to be resumed (docs/daemon.md): the trainer ends it instead, and it is logged
    # interrupted.
    as trainer /usr/bin/lineupctl session end > "$out/hung-end.txt" 2>&1 \
        || say "session end after the restart: $(head -1 "$out/hung-end.txt")"
    if as trainer /usr/bin/lineupctl sessions --db "$db" 2>&1 | grep hung-dog | grep -q INTERRUPTED; then
        interrupted_logged=true
    else
        fail "the session cut short by the watchdog is not logged as interrupted"
    fi
    main=$m
else
    wd_restart="refused: $(head -1 "$out/hung-session.txt")"
    fail "the watchdog check's session was refused: $(head -1 "$out/hung-session.txt")"
fi

# 8. Stop: SIGTERM, exit 0 within TimeoutStopSec; the log intact.
t0=$(uptime_s)
systemctl stop lineupd.service
stop_rc=$?
t1=$(uptime_s)
stop_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
result=$(prop lineupd Result); code=$(prop lineupd ExecMainCode); status=$(prop lineupd ExecMainStatus)
say "systemctl stop lineupd: exit $stop_rc in ${stop_s}s; Result $result, ExecMainCode $code, ExecMainStatus $status"
[ "$stop_rc" = 0 ] && [ "$result" = success ] && [ "$status" = 0 ] || fail "stop: exit $stop_rc, Result $result, status $status"
awk -v s="$stop_s" 'BEGIN { exit !(s < 10) }' || fail "stopping took ${stop_s}s (TimeoutStopSec=10s)"
integrity=$(sqlite3 "file:$db?mode=ro" 'PRAGMA integrity_check' 2>&1 | head -1)
say "PRAGMA integrity_check: $integrity"
[ "$integrity" = ok ] || fail "the log fails integrity_check: $integrity"
if [ "$session" = ran ]; then
    res=$(python3 "$lib/check-log.py" "$db" "$out/injected-systemd.txt" "$out/trials.txt")
    rc=$?
    echo "$res" > "$out/check-log.json"
    say "log against the dog: $res"
    logged=$(sed -nE 's/.*"edges_logged": ([0-9]+).*/\1/p' <<< "$res")
    click_p50=$(sed -nE 's/.*"click_latency_p50_us": ([0-9]+|null).*/\1/p' <<< "$res")
    click_p99=$(sed -nE 's/.*"click_latency_p99_us": ([0-9]+|null).*/\1/p' <<< "$res")
    outcomes_checked=true
    [ "$rc" = 0 ] || fail "lineupd's log does not match the dog: $res"
fi

# 9. The unit's journal: anything but systemd's and the daemon's routine lines is a finding.
journalctl -b -u lineupd --no-pager -o short-monotonic > "$out/lineupd-journal.txt"
journalctl -b --no-pager -o short-monotonic > "$out/journal.txt"
sed 's/^/guest: journal| /' "$out/lineupd-journal.txt"
# Under the journal lineupd's logger writes `<priority>[component] message` (docs/daemon.md).
routine='Starting |Started |Reloading |Reloaded |Stopping |Stopped |Deactivated successfully|Consumed .* CPU time|lineupd: station ready: |lineupd: reloaded |lineupd: stopped by SIGTERM|lineupd: session |\[log\] session [0-9a-f]+ .* was not ended: |lineupd: [^ ]+ (passed step|graduated phase) |lineupd\[[0-9]+\]: trial [0-9]+/[0-9]+ |^-- '
# Step 7b's watchdog kill and restart, as systemd tells it.
routine+='|Watchdog timeout|Killing process [0-9]+ \(lineupd\) with signal|State .stop-watchdog. timed out|Main process exited, code=(killed|dumped)|Failed with result .watchdog.|Scheduled restart job'
# SystemCallFilter=~@privileged refuses chown: the daemon skips the socket's chown when the
# group is already lineup. The line it would log is counted apart as well as being a finding.
known='could not give /run/lineup/control.sock to group .lineup. \(Operation not permitted\)'
known_chown=$(grep -cE "$known" "$out/lineupd-journal.txt")
unexpected=$(grep -vE "$routine" "$out/lineupd-journal.txt" | grep -v '^-- ' || true)
journal_findings=$(grep -c . <<< "$unexpected")
[ -n "$unexpected" ] || journal_findings=0
[ "$journal_findings" = 0 ] || fail "lineupd's journal has $journal_findings unexpected line(s): $(head -1 <<< "$unexpected" | cut -c1-200)"
# systemd's own complaints about the unit file (parsed at daemon-reload).
unitwarn=$(grep -E 'lineupd\.service:[0-9]+:' "$out/journal.txt" || true)
[ -z "$unitwarn" ] || fail "systemd warns about lineupd.service: $(head -1 <<< "$unitwarn" | cut -c1-200)"

# 10. Removal: both services stopped and disabled, units and binaries gone, the log kept (the
# research record); purged, the page's accounts gone and the log still kept.
# Enabled first, as on a station in use, so the removal has links to take away.
systemctl enable --quiet lineupd.service lineup-web.service
dpkg -r lineup > "$out/dpkg-remove.txt" 2>&1 || fail "dpkg -r lineup exited $?"
sed 's/^/guest: dpkg| /' "$out/dpkg-remove.txt"
removed=clean; left=""
for f in /usr/bin/lineupd /usr/bin/lineupctl /usr/bin/lineup-web /usr/lib/lineup /usr/lib/systemd/system/lineupd.service \
    /usr/lib/systemd/system/lineup-web.service /etc/systemd/system/multi-user.target.wants/lineupd.service \
    /etc/systemd/system/multi-user.target.wants/lineup-web.service; do
    [ ! -e "$f" ] && [ ! -L "$f" ] || left+="$f "
done
for u in lineupd lineup-web; do
    [ "$(prop $u.service LoadState)" = not-found ] || left+="$u.service:$(prop $u.service LoadState)/$(prop $u.service ActiveState) "
done
[ -z "$left" ] || { removed="left: $left"; fail "dpkg -r left $left"; }
log_kept=false
[ -s "$db" ] && [ "$(sqlite3 "file:$db?mode=ro" 'PRAGMA integrity_check' 2>&1 | head -1)" = ok ] && log_kept=true \
    || fail "the log $db is not kept intact after dpkg -r"
dpkg -P lineup > "$out/dpkg-purge.txt" 2>&1 || fail "dpkg -P lineup exited $?"
sed 's/^/guest: dpkg| /' "$out/dpkg-purge.txt"
purged=$(dpkg-query -W -f '${db:Status-Status}' lineup 2>/dev/null)
log_kept_purged=false
[ -s "$db" ] && log_kept_purged=true || fail "dpkg -P deleted the log $db"
[ ! -e /var/lib/lineup-web ] || fail "dpkg -P left the page's accounts in /var/lib/lineup-web"
case "$purged" in ""|not-installed) ;; *) fail "after dpkg -P dpkg says lineup is $purged" ;; esac
say "removed: $removed; log kept: $log_kept; purged (dpkg: ${purged:-not known}), log kept: $log_kept_purged"

st=ok
[ ${#failures[@]} = 0 ] || st=mismatch
r="{\"run\":$(json_str "$RUN_NAME"),\"systemd\":$(json_str "$(systemctl --version | head -1)"),\"kernel\":$(json_str "$(uname -r)")"
r+=",\"unit\":\"lineupd.service\",\"state\":$(json_str "$state"),\"nrestarts\":${nrestarts:-null},\"systemd_started_s\":$boot_userspace_s,\"test_started_s\":$test_started_s,\"ready_s\":$ready_s,\"start_to_ready_s\":$start_to_ready_s"
r+=",\"swift_runtime\":$(json_str "${swift_runtime% }"),\"user\":$(json_str "$user"),\"capeff\":$(json_str "$capeff"),\"sched_fifo_threads\":$fifo_threads,\"vmlck_kb\":${vmlck_kb:-null}"
r+=",\"socket\":$(json_str "$sockmode"),\"outsider_refused\":$outsider_refused,\"member_status\":$member_status,\"member_sessions\":$member_sessions,\"member_can_write_log\":$member_can_write"
r+=",\"session\":$(json_str "$session"),\"trials\":$trials,\"edges_injected\":$injected,\"edges_logged\":${logged:-null},\"outcomes_checked\":$outcomes_checked"
r+=",\"click_latency_p50_us\":${click_p50:-null},\"click_latency_p99_us\":${click_p99:-null}"
r+=",\"reload\":\"$reload\",\"reload_returned_s\":$reload_returned_s,\"reload_ready_s\":$reload_ready_s,\"reload_returned_early\":$reload_returned_early,\"watchdog\":$(json_str "$watchdog"),\"watchdog_restart\":$(json_str "$wd_restart"),\"watchdog_back_s\":$wd_back_s,\"interrupted_logged\":$interrupted_logged,\"stop_s\":$stop_s,\"stop_result\":$(json_str "$result/$status"),\"integrity\":$(json_str "$integrity"),\"journal_findings\":$journal_findings,\"journal_chown_refused\":$known_chown"
r+=",\"deb_install\":$(json_str "$deb_install"),\"not_started_without_config\":$(json_str "$not_started"),\"web\":$(json_str "$web_state"),\"web_login_page\":$web_login"
r+=",\"deb_removed\":$(json_str "$removed"),\"log_kept_after_remove\":$log_kept,\"log_kept_after_purge\":$log_kept_purged"
r+=",\"status\":\"$st\""
[ ${#failures[@]} = 0 ] || r+=",\"failures\":$(json_str "$(IFS=';'; echo "${failures[*]}")")"
r+="}"
echo "$r" > "$out/result-guest.json"
echo "LINEUP-VM-RESULT $r"
rc=0; [ ${#failures[@]} = 0 ] || rc=1
echo "$rc" > "$out/guest.rc"
echo "LINEUP-VM-DONE rc=$rc uptime=$(uptime_s)"
sync
exit 0
