#!/usr/bin/env bash
# Builds the station's Debian package, lineup_VERSION_ARCH.deb: lineupd, and lineup-net as
# lineupctl, lineup-web, lineup-sync and lineup-alerts, in /usr/bin, the Swift runtime they share
# in /usr/lib/lineup/swift, their systemd units (lineup-sync's with its timer), sysusers.d and
# tmpfiles.d, the example board configurations, manual pages and lineupctl's shell completions
# (docs/install.md).
#
#   packaging/deb/build.sh [--out DIR] [--bin-dir DIR] [--max-installed-size MB] [--no-manual]
#                          [--uncompressed]
#
# Without --bin-dir it builds lineupd and lineup-net with `swift build -c release`; --bin-dir DIR
# packages the binaries already in DIR instead (the debug build: the package's own test,
# Tests/LineupdTests/DebPackageTests.swift, and the emulated-hardware tier).
# Two binaries: lineupd, which has no network code, and lineup-net, one multi-call binary for
# lineupctl, lineup-web, lineup-sync and lineup-alerts (installed as four symbolic links to it;
# it runs the tool it is started as). Apart, those four carried the same SwiftNIO, TLS, GRDB and
# station modules four times over (issue 35).
# One Swift runtime for both: a board has no Swift toolchain, and a --static-swift-stdlib
# build carried the runtime, Foundation and ICU's data (34 MB of it alone) in each binary, five
# times over (issue 35: 312 MB installed). ICU's library is linked here from the toolchain's
# static archive with only the data the station uses (icu-data.keep: 4.4 MB of the 34). The
# toolchain's shared libraries that the binaries need (and what those need) are shipped once,
# stripped, in /usr/lib/lineup/swift; each binary's RUNPATH is set to $ORIGIN/../lib/lineup/swift
# and nothing else, so it loads that runtime and never a toolchain's (checked below with the
# dynamic loader, before anything is packaged).
# --max-installed-size MB refuses a package whose Installed-Size is larger, naming the biggest
# files; the release build (no --bin-dir) is held to 80 unless told. --no-manual leaves the
# manual pages out and --uncompressed skips xz (the same test: the generator is built apart, and
# xz takes a minute over debug binaries). VERSION is the one lineupctl --version reports; ARCH
# is dpkg's.
# Depends is what dpkg-shlibdeps finds the binaries and the runtime need (Debian 12: libgpiod2,
# libasound2, libsqlite3-0, libc6, libstdc++6, ...). Prints the package's path last.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/.build/deb
bin_dir=""
max_size=""
manual=1
compression=""
die() { echo "packaging/deb/build.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --bin-dir) bin_dir=$2; shift 2 ;;
        --max-installed-size) max_size=$2; shift 2
            [[ "$max_size" =~ ^[0-9]+$ ]] || die "--max-installed-size takes a whole number of MB, not '$max_size'" ;;
        --no-manual) manual=""; shift ;;
        --uncompressed) compression="-Znone"; shift ;;
        *) die "unknown argument $1 (see the comment at the top of this script)" ;;
    esac
done
# The release package a station installs is held to 80 MB unless told otherwise (issue 35).
[ -n "$bin_dir" ] || [ -n "$max_size" ] || max_size=80
for tool in dpkg-deb dpkg-shlibdeps readelf strip gzip patchelf ldd objcopy ar nm python3; do
    command -v "$tool" >/dev/null || die "$tool is missing: sudo apt install dpkg-dev binutils patchelf python3"
done
# The two binaries built; lineup-net's tools, the links to it, are the four others.
binaries="lineupd lineup-net"
net_tools="lineupctl lineup-web lineup-sync lineup-alerts"

cd "$root"
if [ -z "$bin_dir" ]; then
    for b in $binaries; do
        swift build -c release --product "$b" >&2 || die "swift build of $b failed"
    done
    bin_dir=$(swift build -c release --show-bin-path)
fi
for b in $binaries; do
    [ -x "$bin_dir/$b" ] || die "$bin_dir/$b is not built"
done

version=$("$bin_dir/lineup-net" lineupctl --version) || die "$bin_dir/lineup-net lineupctl --version failed"
[[ "$version" =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || die "lineupctl --version says '$version', not a Debian version"
arch=$(dpkg --print-architecture)
maintainer="lineup station maintainers <maintainers@users.noreply.a-seed-3212565b.example>"
name=lineup_${version}_${arch}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Laid out where dpkg-shlibdeps looks for a package being built (debian/PACKAGE), so that it
# takes the runtime in usr/lib/lineup/swift for the package's own libraries.
pkg=$work/shlibs/debian/lineup
runtime_in_lib=lineup/swift
runtime=usr/lib/$runtime_in_lib
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/$runtime" "$pkg/usr/lib/systemd/system" "$pkg/usr/lib/sysusers.d" \
    "$pkg/usr/lib/tmpfiles.d" "$pkg/usr/share/doc/lineup/examples" \
    "$pkg/usr/share/bash-completion/completions" "$pkg/usr/share/zsh/vendor-completions" \
    "$pkg/usr/share/fish/vendor_completions.d"

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
# The toolchain's runtime directory: a library the binaries need is the Swift runtime's when it
# is there (libswiftCore, Foundation, ICU, libdispatch, ...), and is then shipped with them.
toolchain=$(swiftc -print-target-info 2>/dev/null | tr -d ' \n' | sed -n 's/.*"runtimeLibraryPaths":\["\([^"]*\)".*/\1/p')
[ -d "$toolchain" ] || die "cannot find the Swift toolchain's runtime directory (swiftc -print-target-info)"
declare -A shipped=()
# ICU's library with the data the station uses (icu-data.keep, and why there): the toolchain's
# lib_FoundationICU.so compiles all of ICU's data in (34 MB), and its static archive holds that
# data as one object. The archive's other objects, the same code, are linked here with the data
# icu-data.py kept, under the same symbol.
icu_library() { # icu_library OUT
    local static=$toolchain/../../swift_static/linux/lib_FoundationICU.a dir=$work/icu symbol
    local clang
    clang=$(dirname "$(readlink -f "$(command -v swiftc)")")/clang++
    [ -f "$static" ] || die "cannot find ICU's static archive beside the toolchain's runtime: $static"
    [ -x "$clang" ] || die "cannot find the toolchain's clang++ beside swiftc: $clang"
    mkdir -p "$dir" && (cd "$dir" && ar x "$static") || die "cannot unpack $static"
    [ -f "$dir/icu_packaged_data.cpp.o" ] || die "$static has no icu_packaged_data.cpp.o: a different ICU build"
    symbol=$(nm --defined-only "$dir/icu_packaged_data.cpp.o" | awk '$3 ~ /^icudt[0-9]+_dat$/ { print $3 }')
    [ -n "$symbol" ] || die "no icudtNN_dat in $static's icu_packaged_data.cpp.o"
    objcopy -O binary --only-section=.rodata "$dir/icu_packaged_data.cpp.o" "$work/icu-all.dat"
    rm "$dir/icu_packaged_data.cpp.o"
    python3 "$here/icu-data.py" "$here/icu-data.keep" "$work/icu-all.dat" "$work/icu-station.dat" >&2 \
        || die "cannot keep the station's part of ICU's data"
    printf '\t.section .rodata\n\t.globl %s\n\t.type %s, %%object\n\t.balign 16\n%s:\n\t.incbin "%s"\n\t.size %s, . - %s\n\t.section .note.GNU-stack,"",%%progbits\n' \
        "$symbol" "$symbol" "$symbol" "$work/icu-station.dat" "$symbol" "$symbol" > "$work/icu-data.S"
    "$clang" -c "$work/icu-data.S" -o "$work/icu-data.o" || die "cannot assemble ICU's data"
    "$clang" -shared -o "$1" -Wl,-soname,lib_FoundationICU.so "$dir"/*.o "$work/icu-data.o" -lstdc++ -lm \
        || die "cannot link lib_FoundationICU.so"
}
ship() { # ship FILE: the runtime libraries FILE needs, and theirs, into the package
    local lib
    for lib in $(needed "$1"); do
        [ -f "$toolchain/$lib" ] && [ -z "${shipped[$lib]:-}" ] || continue
        shipped[$lib]=1
        # Stripped as Debian ships libraries (their dynamic symbols stay): about a quarter off.
        if [ "$lib" = lib_FoundationICU.so ]; then
            icu_library "$work/$lib"
            strip --strip-unneeded -o "$pkg/$runtime/$lib" "$work/$lib"
        else
            strip --strip-unneeded -o "$pkg/$runtime/$lib" "$toolchain/$lib"
        fi
        chmod 0644 "$pkg/$runtime/$lib"
        ship "$toolchain/$lib"
    done
}
for b in $binaries; do
    install -m 0755 "$bin_dir/$b" "$pkg/usr/bin/$b"
    # As Debian ships binaries: without their symbols. The Swift runtime's backtracer is off
    # in every unit anyway.
    strip --strip-unneeded "$pkg/usr/bin/$b"
    ship "$bin_dir/$b"
    # The package's runtime and nothing else: not the toolchain's directory the build put
    # first, not the build directory.
    patchelf --set-rpath "\$ORIGIN/../lib/$runtime_in_lib" "$pkg/usr/bin/$b"
done
for tool in $net_tools; do
    ln -s lineup-net "$pkg/usr/bin/$tool"
done

# Where each binary and each shipped library finds its libraries, as the dynamic loader says
# (without LD_LIBRARY_PATH, which a board's services do not have): every one of the Swift
# runtime's from the package, every other one found on this machine.
for f in "$pkg"/usr/bin/* "$pkg/$runtime"/*; do
    resolved=$(env -u LD_LIBRARY_PATH ldd "$f" 2>&1) || die "ldd $f failed: $resolved"
    ! grep -q 'not found' <<< "$resolved" || die "${f#"$pkg"} needs libraries found nowhere: $(grep 'not found' <<< "$resolved" | tr -s ' \t\n' ' ')"
    while read -r lib _ path _; do
        [ -f "$toolchain/$lib" ] || continue
        [ "$(realpath "$path")" = "$(realpath "$pkg/$runtime/$lib")" ] \
            || die "${f#"$pkg"} loads $lib from $path, not from the package's /$runtime"
    done < <(grep '=>' <<< "$resolved")
done

# The units as systemd/ has them, with the binaries where the package puts them (systemd/
# keeps /usr/local/bin for a build installed by hand and for SystemdUnitTests).
for unit in lineupd.service lineup-web.service lineup-sync.service lineup-sync.timer lineup-alerts.service; do
    sed 's|/usr/local/bin/|/usr/bin/|g' "systemd/$unit" > "$pkg/usr/lib/systemd/system/$unit"
    chmod 0644 "$pkg/usr/lib/systemd/system/$unit"
    ! grep -q /usr/local "$pkg/usr/lib/systemd/system/$unit" || die "$unit still names /usr/local"
done
for conf in lineup.conf lineup-web.conf; do
    install -m 0644 "systemd/sysusers.d/$conf" "$pkg/usr/lib/sysusers.d/$conf"
    install -m 0644 "systemd/tmpfiles.d/$conf" "$pkg/usr/lib/tmpfiles.d/$conf"
done
# lineup-sync and lineup-alerts keep no files of their own: a user each, no directory.
install -m 0644 systemd/sysusers.d/lineup-sync.conf "$pkg/usr/lib/sysusers.d/lineup-sync.conf"
install -m 0644 systemd/sysusers.d/lineup-alerts.conf "$pkg/usr/lib/sysusers.d/lineup-alerts.conf"
install -m 0644 hardware/pi4-5-stations.toml hardware/pi5-5-stations.toml "$pkg/usr/share/doc/lineup/examples/"
install -m 0644 "$here/README.Debian" "$pkg/usr/share/doc/lineup/README.Debian"
# Debian wants a native package's changelog in its doc directory (lintian: no-changelog). The
# project keeps its history in git, so the entry says which commit the package was built from.
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo "an unknown commit")
changed=$(git log -1 --format=%cD 2>/dev/null || date -R)
printf 'lineup (%s) unstable; urgency=medium\n\n  * Built from %s of the lineup repository.\n\n -- %s  %s\n' \
    "$version" "$commit" "$maintainer" "$changed" | gzip -9n > "$pkg/usr/share/doc/lineup/changelog.gz"
chmod 0644 "$pkg/usr/share/doc/lineup/changelog.gz"

# bash sources its completions, so the generator's first line (#!/bin/bash) goes (lintian:
# bash-completion-with-hashbang).
# From the package's own lineupctl (the link to lineup-net, on the package's runtime).
"$pkg/usr/bin/lineupctl" --generate-completion-script bash | sed '1{/^#!/d}' \
    > "$pkg/usr/share/bash-completion/completions/lineupctl"
"$pkg/usr/bin/lineupctl" --generate-completion-script zsh > "$pkg/usr/share/zsh/vendor-completions/_lineupctl"
"$pkg/usr/bin/lineupctl" --generate-completion-script fish > "$pkg/usr/share/fish/vendor_completions.d/lineupctl.fish"
chmod 0644 "$pkg"/usr/share/*/*/lineupctl* "$pkg/usr/share/zsh/vendor-completions/_lineupctl"

if [ -n "$manual" ]; then
    # swift-argument-parser's generate-manual (the tool its GenerateManual plugin runs; the
    # plugin itself would build the whole package a second time, in release, to find the
    # binaries this script already has). One page per command, subcommands in the same page.
    swift build --product generate-manual >&2 2>/dev/null \
        || swift build --target generate-manual >&2 || die "cannot build swift-argument-parser's generate-manual"
    gen=$(swift build --show-bin-path)/generate-manual
    [ -x "$gen" ] || die "$gen was not built"
    mkdir -p "$pkg/usr/share/man/man1" "$work/man"
    date=$(git log -1 --format=%cs 2>/dev/null || date +%F)
    for b in lineupd $net_tools; do
        "$gen" "$pkg/usr/bin/$b" --output-directory "$work/man" --date "$date" --section 1 >&2 \
            || die "generate-manual failed for $b"
    done
    # The generator leaves the blank lines between a command's paragraphs as they are; mdoc
    # wants .Pp there (groff warned "Empty input line" on each: lintian's groff-message).
    for page in "$work"/man/*.1; do
        sed 's/^$/.Pp/' "$page" | gzip -9n > "$pkg/usr/share/man/man1/$(basename "$page").gz"
    done
    for b in lineupd $net_tools; do
        [ -s "$pkg/usr/share/man/man1/$b.1.gz" ] || die "no manual page for $b"
    done
fi

for script in postinst prerm postrm; do
    install -m 0755 "$here/$script" "$pkg/DEBIAN/$script"
done

# What dpkg -s will say the package installs (DEBIAN/ is not installed), checked before the
# slowest step.
installed_size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
if [ -n "$max_size" ] && [ "$installed_size" -gt $((max_size * 1024)) ]; then
    biggest=$(cd "$pkg" && find usr -type f -printf '%k %p\n' | sort -rn | head -8 | awk '{ printf "%s/%s %d KB", sep, $2, $1; sep = ", " }')
    die "the package would install $installed_size KB, over --max-installed-size $max_size MB ($((max_size * 1024)) KB); the biggest files: $biggest"
fi

# Depends, as Debian computes it: the packages whose shared libraries the binaries and the
# runtime load (the runtime's own are the package's).
printf 'Source: lineup\n\nPackage: lineup\nArchitecture: any\n' > "$work/shlibs/debian/control"
shlibs=$(cd "$work/shlibs" && dpkg-shlibdeps -O $(for f in "$pkg"/usr/bin/* "$pkg/$runtime"/*; do echo "-e${f#"$work/shlibs/"}"; done) 2>"$work/shlibdeps.err") \
    || { cat "$work/shlibdeps.err" >&2; die "dpkg-shlibdeps could not tell what the binaries need"; }
depends=$(sed -n 's/^shlibs:Depends=//p' <<< "$shlibs")
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependency at all"
for lib in libgpiod libasound2 libsqlite3; do
    grep -q "$lib" <<< "$depends" || die "Depends lacks $lib: '$depends'"
done

cat > "$pkg/DEBIAN/control" <<C
Package: lineup
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends, systemd
Section: misc
Priority: optional
Description: scent lineup station for training detection dogs
 lineupd runs the lineup: sensors on GPIO through libgpiod, the trainer's click
 through ALSA, every trial logged in SQLite. lineupctl controls it and reads the
 log; lineup-web serves the station's page to the trainer's phone; lineup-sync
 sends the log to a lab's PostgreSQL store, when the lab has one; lineup-alerts
 tells people by e-mail, webhook and a dead-man heartbeat when the station
 needs them.
 .
 The log, /var/lib/lineup/lineup.db, is the research record: removing or
 purging the package keeps it.
C

mkdir -p "$out"
# Written beside and renamed: a failed build leaves no half-written package under its name.
dpkg-deb --build --root-owner-group $compression "$pkg" "$work/$name.deb" >&2
mv "$work/$name.deb" "$out/$name.deb"
echo "$out/$name.deb"
