#!/usr/bin/env bash
# Builds libgpiod 2.x from the C sources in PyPI's `gpiod` sdist (its lib/ and include/),
# into PREFIX (default .build-gpiod2/prefix), with a pkg-config file, so the station can be
# compiled and tested against the v2 API on a Debian 12 machine that ships only 1.6.
# Nothing it builds is committed. Prints the prefix's pkgconfig directory on its last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/.build-gpiod2/prefix}
version=${GPIOD_SDIST_VERSION:-2.5.0}
work=$root/.build-gpiod2/src
if [ -f "$prefix/lib/pkgconfig/libgpiod.pc" ]; then
    echo "$prefix/lib/pkgconfig"
    exit 0
fi
mkdir -p "$work" "$prefix/lib/pkgconfig" "$prefix/include"
cd "$work"
python3 -m pip download --quiet --no-binary :all: --no-deps "gpiod==$version" -d . >&2
tar xzf "gpiod-$version.tar.gz"
src=$work/gpiod-$version
api=$(cat "$src/libgpiod-version.txt")
objs=()
for c in "$src"/lib/*.c; do
    o=$work/$(basename "$c" .c).o
    gcc -O2 -fPIC -fvisibility=hidden -D_GNU_SOURCE -DGPIOD_API_VERSION_STR="\"$api\"" \
        -I"$src/include" -I"$src/lib" -c "$c" -o "$o"
    objs+=("$o")
done
gcc -shared -Wl,-soname,libgpiod.so.3 -o "$prefix/lib/libgpiod.so.3" "${objs[@]}"
# Linked as -lgpiod_v2, a name the system's v1 libgpiod.so cannot shadow whatever -L order
# the other pkg-config packages bring; at run time the soname, libgpiod.so.3, is what is found.
ln -sf libgpiod.so.3 "$prefix/lib/libgpiod_v2.so"
cp "$src/include/gpiod.h" "$prefix/include/"
cat > "$prefix/lib/pkgconfig/libgpiod.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: libgpiod
Description: libgpiod $api built from PyPI gpiod $version for the v2 build of the station
Version: $api
Libs: -L\${libdir} -lgpiod_v2
Cflags: -I\${includedir}
PC
echo "built libgpiod $api in $prefix" >&2
echo "$prefix/lib/pkgconfig"
