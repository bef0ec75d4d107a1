#!/usr/bin/env bash
# Builds the upper layer of the systemd phase's root (run.sh --systemd): what init.sh lays over
# the host's root before switching to systemd. It holds only the test harness; the station's
# Debian package (packaging/deb/build.sh), on the output share, is installed by
# systemd-guest.sh inside the guest with dpkg.
#
#   systemd-stage.sh STAGEDIR DEB CHATTER
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stage=$1
deb=$2
chatter=$3

rm -rf "$stage"
lib=$stage/usr/local/lib/lineup-vm
sys=$stage/etc/systemd/system
mkdir -p "$lib" "$sys/lineup-vm-test.target.wants" "$stage/etc/udev/rules.d"

# Copied, not run from the checkout: a checkout under /home, /root, /tmp or /run would be
# hidden by the unit's ProtectHome= or by systemd's own tmpfs on /run.
# The package stays on the output share (run.sh puts it there): a copy in this tmpfs layer
# took the space the daemon's free-space warning counts (171 MB free, a journal finding).
[ -f "$deb" ] || { echo "systemd-stage.sh: no package $deb" >&2; exit 1; }
install -m 0755 "$chatter" "$lib/"
install -m 0644 "$here/vm.toml" "$here/vm-program.toml" "$here/block.dog" "$lib/"
install -m 0755 "$here/dog.sh" "$here/check-log.py" "$here/systemd-guest.sh" "$lib/"

# The test: a target that pulls in one oneshot service, which powers the machine off whatever
# its result (run.sh reads the result from the console and the output share).
cat > "$sys/lineup-vm-test.target" <<'U'
[Unit]
Description=Emulated-hardware tier: lineupd under systemd
Requires=basic.target
After=basic.target
AllowIsolate=yes
U
cat > "$sys/lineup-vm-test.service" <<'U'
[Unit]
Description=Emulated-hardware tier: install the .deb, check lineupd.service and lineup-web.service
After=basic.target systemd-udev-trigger.service
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
ExecStart=/bin/bash /usr/local/lib/lineup-vm/systemd-guest.sh
# Raw lines on the serial console: run.sh looks for LINEUP-VM-RESULT at the start of a line.
StandardInput=null
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/console
TTYReset=no
TTYVHangup=no
# The package is installed, removed and purged with dpkg as well: about a minute more.
TimeoutStartSec=780
U
ln -s ../lineup-vm-test.service "$sys/lineup-vm-test.target.wants/lineup-vm-test.service"

# Units of the host's userland that cannot work or do not matter in this guest: masked, so
# the boot under TCG stays short and its journal free of unrelated failures.
for u in systemd-timesyncd.service systemd-pstore.service apt-daily.timer apt-daily-upgrade.timer \
    dpkg-db-backup.timer e2scrub_all.timer fstrim.timer man-db.timer systemd-tmpfiles-clean.timer \
    systemd-networkd-wait-online.service systemd-udev-settle.service getty.target \
    systemd-journal-flush.service systemd-random-seed.service; do
    ln -s /dev/null "$sys/$u"
done

# Raspberry Pi OS has a group gpio and gives it the GPIO chips (raspberrypi-sys-mods' udev
# rules); Debian has neither. Both here, made at boot before udev starts, as on a Pi, so the
# unit's SupplementaryGroups=gpio is what opens the chip.
mkdir -p "$stage/etc/sysusers.d"
echo 'g gpio - -' > "$stage/etc/sysusers.d/lineup-vm-pi-os.conf"
cat > "$stage/etc/udev/rules.d/60-lineup-vm-gpio.rules" <<'R'
SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"
R
