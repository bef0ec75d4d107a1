#!/usr/bin/env bash
# Builds gpio-sim (with the irq_sim it needs) as one out-of-tree module, gpio_sim_oot.ko,
# for Debian 12's kernel, from the linux-source-6.1 package: Debian's 6.1 kernel has neither
# CONFIG_GPIO_SIM nor CONFIG_IRQ_SIM. Nothing from the kernel tree is committed; the sources
# are extracted under .build-vm at test time and the module is cached there.
# Usage: build-module.sh KVER OUTDIR   (prints the .ko path on its last line)
set -euo pipefail
kver=$1
out=$2
ko=$out/gpio_sim_oot.ko
src=/usr/src/linux-source-6.1.tar.xz
[ -f "$src" ] || { echo "build-module: $src missing (apt-get install linux-source-6.1)" >&2; exit 1; }
[ -d "/lib/modules/$kver/build" ] || { echo "build-module: no headers for $kver" >&2; exit 1; }
stamp="$kver $(stat -c %Y "$src")"
if [ -f "$ko" ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$ko"; exit 0
fi
rm -rf "$out"; mkdir -p "$out"
tar xJf "$src" -C "$out" --strip-components=1 \
    linux-source-6.1/drivers/gpio/gpio-sim.c linux-source-6.1/drivers/gpio/gpiolib.h \
    linux-source-6.1/kernel/irq/irq_sim.c
mv "$out/drivers/gpio/gpio-sim.c" "$out/drivers/gpio/gpiolib.h" "$out/kernel/irq/irq_sim.c" "$out/"
rm -rf "$out/drivers" "$out/kernel"
# irq_to_desc() is not exported to modules in 6.1; generic_handle_irq() does the same here
# (the simulated domain's interrupts use handle_simple_irq as their flow handler).
grep -q 'handle_simple_irq(irq_to_desc(irqnum));' "$out/irq_sim.c" \
    || { echo "build-module: irq_sim.c no longer has the expected line; check the patch" >&2; exit 1; }
sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$out/irq_sim.c"
cat > "$out/Kbuild" <<'KB'
obj-m := gpio_sim_oot.o
gpio_sim_oot-y := gpio-sim.o irq_sim.o
KB
make -s -C "/lib/modules/$kver/build" M="$out" modules >&2
echo "$stamp" > "$out/stamp"
echo "$ko"
