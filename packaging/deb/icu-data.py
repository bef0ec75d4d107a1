#!/usr/bin/env python3
"""Writes ICU's common data package (icudtNNl.dat) with only the items a keep list names.

    icu-data.py KEEP IN.dat OUT.dat

KEEP (packaging/deb/icu-data.keep) holds one pattern a line, fnmatch's (`coll/*.res`), matched
against each item's name without the package's prefix (`zoneinfo64.res`, `coll/root.res`);
`#` starts a comment. Every pattern must match at least one item: a pattern that matches none
is a misspelling or an ICU that changed its data, and the package is refused rather than
shipped without what the pattern was meant to keep. Prints the kept and dropped sizes.

The format (ICU's ucmndata.h, "offset TOC"): the header as it is; at headerSize a count of
items, then for each the offsets of its name and its data from that point, the names, and the
items, each starting on a 16-byte boundary. icupkg does this too, but Debian 12's (ICU 72)
refuses the toolchain's package (ICU 76: "total length of item name strings too long").
"""
import fnmatch
import struct
import sys


def items(data):
    header_size = struct.unpack_from("<H", data, 0)[0]
    magic = data[2:4]
    if magic != b"\xda\x27":
        raise SystemExit(f"icu-data.py: not an ICU data package (magic {magic.hex()})")
    count = struct.unpack_from("<I", data, header_size)[0]
    toc = []
    for i in range(count):
        name_offset, data_offset = struct.unpack_from("<II", data, header_size + 4 + 8 * i)
        start = header_size + name_offset
        name = data[start : data.index(b"\0", start)].decode("ascii")
        toc.append((name, header_size + data_offset))
    ends = [offset for _, offset in toc[1:]] + [len(data)]
    return header_size, [(name, data[offset:end]) for (name, offset), end in zip(toc, ends)]


def package(header, entries):
    """The package of `entries` ((name, bytes) in ICU's sorted order) behind `header`."""
    names = b"".join(name.encode("ascii") + b"\0" for name, _ in entries)
    toc_size = 4 + 8 * len(entries)
    first = toc_size + len(names)
    first += -(len(header) + first) % 16
    out_toc, out_data, name_at, data_at = [], [], toc_size, first
    for name, body in entries:
        out_toc.append(struct.pack("<II", name_at, data_at))
        name_at += len(name) + 1
        padded = body + b"\0" * (-len(body) % 16)
        out_data.append(padded)
        data_at += len(padded)
    table = struct.pack("<I", len(entries)) + b"".join(out_toc) + names
    table += b"\xaa" * (first - len(table))  # pkgdata's padding
    return header + table + b"".join(out_data)


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__.strip().splitlines()[2].strip())
    keep_file, source, target = sys.argv[1:]
    patterns = []
    for line in open(keep_file, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            patterns.append(line)
    data = open(source, "rb").read()
    header_size, entries = items(data)
    prefix = entries[0][0].split("/", 1)[0] + "/"
    used = {pattern: 0 for pattern in patterns}
    kept = []
    for name, body in entries:
        if not name.startswith(prefix):
            raise SystemExit(f"icu-data.py: {source}: the item {name} is not under {prefix}")
        short = name[len(prefix) :]
        matched = [pattern for pattern in patterns if fnmatch.fnmatchcase(short, pattern)]
        for pattern in matched:
            used[pattern] += 1
        if matched:
            kept.append((name, body))
    unused = [pattern for pattern, count in used.items() if count == 0]
    if unused:
        raise SystemExit(f"icu-data.py: {keep_file}: no item of {source} matches {', '.join(unused)}")
    out = package(data[:header_size], kept)
    # What ICU reads back must be what was kept, byte for byte.
    if items(out)[1] != [(name, body + b"\0" * (-len(body) % 16)) for name, body in kept]:
        raise SystemExit("icu-data.py: the package written does not read back as the items kept")
    with open(target, "wb") as f:
        f.write(out)
    print(
        f"icu-data.py: kept {len(kept)} of {len(entries)} items, {len(out)} of {len(data)} bytes",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
