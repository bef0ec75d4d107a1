#!/bin/busybox sh
# /init of the test initramfs (hardware/vm/run.sh packs it with busybox and the modules).
# Loads the modules, mounts the host's root read-only over 9p and the run's output directory
# read-write, creates the gpio-sim chip of a Pi 4 header, then runs hardware/vm/guest.sh in a
# chroot of the host's userland. Everything it says goes to the serial console (ttyS0).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
say() { echo "lineup-vm: [$(cut -d' ' -f1 /proc/uptime)] $*"; }
die() { say "FATAL: $*"; echo "LINEUP-VM-FATAL $*"; sync; poweroff -f; sleep 5; exit 1; }
echo
say "init up ($(uname -r))"

# Order resolved on the host by modprobe --show-depends; gpio_sim_oot.ko last.
for m in $(cat /modules/order); do
    insmod "/modules/$m" || die "insmod $m failed"
done
say "modules loaded: $(cat /modules/order | tr '\n' ' ')"

mkdir -p /host /out
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /host || die "9p mount of the host root failed"
mount -t 9p -o trans=virtio,version=9p2000.L,rw,msize=262144 out /out || die "9p mount of the output share failed"
mount -t configfs configfs /sys/kernel/config || die "configfs mount failed"
. /out/params.sh || die "no /out/params.sh"

# The simulated header chip: label and line names of a Raspberry Pi 4's pinctrl-bcm2711.
cfg=/sys/kernel/config/gpio-sim/lineup
mkdir "$cfg" || die "cannot create a gpio-sim device (is gpio_sim_oot loaded?)"
mkdir "$cfg/bank0"
echo "$SIM_LABEL" > "$cfg/bank0/label"
echo "$SIM_LINES" > "$cfg/bank0/num_lines"
i=0
while [ "$i" -lt "$SIM_LINES" ]; do
    mkdir "$cfg/bank0/line$i"
    echo "GPIO$i" > "$cfg/bank0/line$i/name"
    i=$((i + 1))
done
echo 1 > "$cfg/live" || die "gpio-sim refused to go live"
dev=$(cat "$cfg/dev_name")
chip=$(cat "$cfg/bank0/chip_name")
say "gpio-sim live: $dev/$chip label $SIM_LABEL, $SIM_LINES lines GPIO0..GPIO$((SIM_LINES - 1))"
[ -e "/sys/devices/platform/$dev/$chip/sim_gpio17/pull" ] || die "no sim_gpio17/pull attribute"
say "sound: $(cat /proc/asound/cards | head -1)"

# The systemd phase (run.sh --systemd): the host's root, read-only over 9p, under a tmpfs
# upper layer holding the test harness (systemd-stage.sh), becomes the root, and systemd runs
# as PID 1 into lineup-vm-test.target (kernel command line).
if [ -n "${SYSTEMD_MODE:-}" ]; then
    printf "SIM_DEV='%s'\nSIM_CHIP='%s'\n" "$dev" "$chip" > /out/sim.sh
    mkdir -p /layer /newroot
    mount -t tmpfs -o mode=0755 tmpfs /layer || die "tmpfs for the overlay failed"
    mkdir /layer/upper /layer/work
    cp -a /out/stage/. /layer/upper/ || die "cannot copy the staged layer"
    # The host root is a container's (docker's /.dockerenv): a whiteout hides the file, else
    # systemd believes it runs in a container and ignores the kernel command line, udev etc.
    [ ! -e /host/.dockerenv ] || mknod /layer/upper/.dockerenv c 0 0
    mount -t overlay overlay -o lowerdir=/host,upperdir=/layer/upper,workdir=/layer/work /newroot \
        || die "overlay mount of the host root failed"
    # A tmpfs /tmp, as many systems have: systemd-tmpfiles would otherwise empty the host's
    # /tmp at boot (whiteouts, over 9p: about a minute under TCG).
    mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp || die "tmpfs /tmp failed"
    # The output share stays reachable at a path systemd leaves alone (it mounts /run itself).
    mkdir -p /newroot/mnt/lineup-out
    mount --move /out /newroot/mnt/lineup-out || die "cannot move the output share"
    # configfs is mounted again by systemd; /dev, /proc and /sys move over as they are.
    umount /sys/kernel/config
    mount --move /dev /newroot/dev && mount --move /proc /newroot/proc && mount --move /sys /newroot/sys \
        || die "cannot move /dev, /proc, /sys into the new root"
    echo "lineup-vm: [$(cut -d' ' -f1 /newroot/proc/uptime)] switching to systemd ($SIM_LABEL is $dev/$chip)"
    exec switch_root -c /dev/console /newroot /lib/systemd/systemd
fi

# The chroot: the host's userland read-only, with this guest's kernel filesystems and a
# writable tmpfs /tmp (the database, the logs) and /run.
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t configfs configfs /host/sys/kernel/config
mount -t devtmpfs devtmpfs /host/dev
mkdir -p /host/dev/pts /host/dev/shm 2>/dev/null
mount -t devpts devpts /host/dev/pts 2>/dev/null
ln -sf /proc/self/fd /host/dev/fd
ln -sf /proc/self/fd/0 /host/dev/stdin
ln -sf /proc/self/fd/1 /host/dev/stdout
ln -sf /proc/self/fd/2 /host/dev/stderr
mount -t tmpfs tmpfs /host/dev/shm
# A checkout under /tmp or /run (CI's clone may be one) would be hidden by those tmpfs: hold
# it aside and bind it back at its own path on top of them.
held=""
case "$REPO" in /tmp/*|/run/*) mkdir -p /held; mount --bind "/host$REPO" /held && held=yes ;; esac
mount -t tmpfs tmpfs /host/tmp
mount -t tmpfs tmpfs /host/run
if [ -n "$held" ]; then mkdir -p "/host$REPO" && mount --bind /held "/host$REPO"; fi
mkdir -p /host/tmp/out /host/tmp/bin
mount --bind /out /host/tmp/out
cp /bin/busybox /host/tmp/bin/busybox

# The power-cut run (powercut.sh) names its own guest script; every other run uses guest.sh.
script=${GUEST_SCRIPT:-guest.sh}
say "running $REPO/hardware/vm/$script in the host-root chroot"
chroot /host /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8 \
    SIM_DEV="$dev" SIM_CHIP="$chip" /bin/bash "$REPO/hardware/vm/$script"
rc=$?
echo "$rc" > /out/guest.rc
say "$script exit $rc"
echo "LINEUP-VM-DONE rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
umount /host/tmp/out 2>/dev/null
sync
poweroff -f
