#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""soak-verify.py TREE MANIFEST... — the host side of `make soak`: compares the
tree the guest left (TREE, the share's soak/ folder) with the models the guest
processes kept (bench/soak-guest.c's manifests): the set of names, each one's
type and mode, and for files the size, link count, CRC-32 of the data and the
user.soak xattr.  Prints a summary and the first differences; exit 1 on any."""
import os
import stat
import sys
import zlib


def host_lines(tree):
    lines = set()
    for root, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, tree)
            st = os.lstat(path)
            mode = format(stat.S_IMODE(st.st_mode), "o")
            if stat.S_ISDIR(st.st_mode):
                lines.add(f"D\t{rel}\t{mode}")
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    crc = zlib.crc32(f.read()) & 0xffffffff
                try:
                    xattr = os.getxattr(path, "user.soak", follow_symlinks=False).decode()
                except OSError:
                    xattr = "-"
                lines.add(f"F\t{rel}\t{mode}\t{st.st_size}\t{crc:08x}\t{st.st_nlink}\t{xattr}")
            else:
                lines.add(f"?\t{rel}\t{stat.filemode(st.st_mode)}")
    return lines


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    tree, manifests = sys.argv[1], sys.argv[2:]
    model = set()
    for m in manifests:
        with open(m) as f:
            model.update(line.rstrip("\n") for line in f if line.strip())
    host = host_lines(tree)
    files = sum(1 for line in model if line.startswith("F\t"))
    dirs = sum(1 for line in model if line.startswith("D\t"))
    data = sum(int(line.split("\t")[3]) for line in model if line.startswith("F\t"))
    print(f"soak-verify: model {files} files ({data} bytes), {dirs} directories; host {len(host)} entries")
    missing, extra = sorted(model - host), sorted(host - model)
    for line in missing[:10]:
        print(f"soak-verify: only in the model: {line}")
    for line in extra[:10]:
        print(f"soak-verify: only on the host:  {line}")
    if missing or extra:
        print(f"soak-verify: FAIL: {len(missing)} model entries not on the host, {len(extra)} host entries not in the model")
        return 1
    print("soak-verify: PASS: the host tree matches the model exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
