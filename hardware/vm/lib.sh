# Host-side steps shared by run.sh and powercut.sh (sourced; they define `log` and `loud_fail`).

# install_missing PKG...: installs the Debian packages not installed yet (none missing: no apt call).
install_missing() {
    local missing="" p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    log "installing:$missing"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    $sudo apt-get install -y -qq --no-install-recommends $missing >&2
}

# newest_kernel: the newest Debian 6.1 amd64 kernel that has its headers (its version).
newest_kernel() {
    local kver="" d k
    for d in $(ls -d /lib/modules/6.1.0-*-amd64 2>/dev/null | sort -V); do
        k=$(basename "$d")
        [ -f "/boot/vmlinuz-$k" ] && [ -d "$d/build" ] && kver=$k
    done
    [ -n "$kver" ] || loud_fail "no Debian 6.1 kernel with headers (linux-image-amd64, linux-headers-amd64)"
    echo "$kver"
}

# make_initramfs KVER DIR ARCHIVE GPIO_SIM_KO MODULE...: static busybox, /init, the modules
# (with their dependencies, in load order) and the gpio-sim module last, as a gzip'd cpio.
make_initramfs() {
    local kver=$1 ird=$2 archive=$3 ko=$4 m
    shift 4
    rm -rf "$ird"; mkdir -p "$ird/bin" "$ird/modules" "$ird/proc" "$ird/sys" "$ird/dev"
    cp /bin/busybox "$ird/bin/busybox"
    # ldd succeeds only on a dynamic executable; the initramfs has no libraries.
    if ldd /bin/busybox >/dev/null 2>&1; then loud_fail "/bin/busybox is not static (install busybox-static)"; fi
    install -m 755 "$here/init.sh" "$ird/init"
    : > "$ird/modules/order"
    for m in "$@"; do
        modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
    done | awk '!seen[$0]++' | while read -r path; do
        cp "$path" "$ird/modules/"
        basename "$path" >> "$ird/modules/order"
    done
    cp "$ko" "$ird/modules/"
    basename "$ko" >> "$ird/modules/order"
    (cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) > "$archive"
}
