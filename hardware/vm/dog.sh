#!/bin/sh
# The scripted dog: plays a block file (default block.dog) on gpio-sim lines by writing their
# sysfs `pull` attributes, and logs every edge it injects. Runs under busybox sh (usleep).
#
#   dog.sh SIMDIR BLOCKFILE INJECTED_LOG TRIALS_LOG
#
# SIMDIR is /sys/devices/platform/gpio-sim.N/gpiochipM. With CHATTER set to the chatter.c
# binary, bounces are made by it (exact intervals); without, by this shell and usleep. Line map (vm.toml, active-low with
# pull-up: the nose / a press pulls the line down): stations A..E = GPIO17 27 22 5 6,
# clicker GPIO23, error GPIO24, ready GPIO25. Each injected edge is logged as
#   SEQ OFFSET falling|rising TRIAL
# in injection order; the trials as "N TARGET OUTCOME".
sim=$1
block=$2
inj=$3
trials=$4
: > "$inj"
: > "$trials"
seq=0
trial=0

# offset_of NAME: sets o (no subshell: a fork costs milliseconds under emulation).
offset_of() {
    case "$1" in
        A) o=17 ;; B) o=27 ;; C) o=22 ;; D) o=5 ;; E) o=6 ;;
        clicker) o=23 ;; error) o=24 ;; ready) o=25 ;;
        *) echo "dog: unknown station or button $1" >&2; exit 2 ;;
    esac
}

# Every line starts idle (pulled up): the caller sets that before anyone watches.
# drive OFFSET down|up [MS]: one edge (the dog only ever changes a line's level).
drive() {
    if [ "$2" = down ]; then
        echo pull-down > "$sim/sim_gpio$1/pull"; edge=falling
    else
        echo pull-up > "$sim/sim_gpio$1/pull"; edge=rising
    fi
    seq=$((seq + 1))
    echo "$seq $1 $edge $trial ${3:-}" >> "$inj"
}

ms() { usleep $(($1 * 1000)); }

while read -r verb a b c rest; do
    case "$verb" in
        ''|'#'*) continue ;;
        trial) trial=$a; echo "$a $b $c" >> "$trials" ;;
        press|sniff) offset_of "$a"; drive "$o" down; ms "$b"; drive "$o" up "$b" ;;
        chatter)
            offset_of "$a"; n=0
            if [ -n "${CHATTER:-}" ]; then
                # chatter.c: the bounces at their meant interval, which a shell cannot keep
                "$CHATTER" "$sim/sim_gpio$o/pull" "$b" "$c" > /dev/null || exit 1
                while [ "$n" -lt "$b" ]; do
                    seq=$((seq + 1)); echo "$seq $o falling $trial c$c" >> "$inj"
                    seq=$((seq + 1)); echo "$seq $o rising $trial c$c" >> "$inj"
                    n=$((n + 1))
                done
            fi
            while [ "$n" -lt "$b" ]; do
                drive "$o" down "c$c"; usleep "$c"; drive "$o" up "c$c"; usleep "$c"; n=$((n + 1))
            done ;;
        gap) ms "$a" ;;
        # The trial is over: with DOG_END set (the daemon phase), wait as a handler would for
        # the station to score it and for the interval, before the next trial's ready press.
        end) [ -z "${DOG_END:-}" ] || sh -c "$DOG_END $trial" ;;
        *) echo "dog: unknown step '$verb'" >&2; exit 2 ;;
    esac
done < "$block"
echo "dog: $trial trials, $seq edges injected" >&2
