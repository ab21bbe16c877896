#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# mkcpio.sh OUT.cpio SRC:DEST [SRC:DEST …] — a small newc cpio archive holding
# each host file SRC at guest path DEST (e.g. workload.sh:/workload.sh).
#
# Appended to initrd.cpio (cat initrd.cpio extra.cpio > all.cpio) it adds or
# replaces files in the guest's initramfs: the kernel unpacks concatenated
# archives in order.  Files keep their mode; everything is owned by root.
set -euo pipefail

if [ $# -lt 2 ]; then
        echo "usage: $0 OUT.cpio SRC:DEST [SRC:DEST …]" >&2
        exit 2
fi
out=$1
shift

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for pair in "$@"; do
        src=${pair%%:*} dest=${pair#*:}
        if [ "$src" = "$pair" ] || [ -z "$dest" ] || [ "${dest#/}" = "$dest" ]; then
                echo "$0: '$pair' is not SRC:/ABSOLUTE/DEST" >&2
                exit 2
        fi
        case "/$dest/" in */../*) echo "$0: '$dest' contains .." >&2; exit 2 ;; esac
        [ -f "$src" ] || { echo "$0: $src is not a file" >&2; exit 1; }
        mkdir -p "$stage$(dirname "$dest")"
        cp -p "$src" "$stage$dest"
done
out_abs=$(realpath -m "$out")
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
        cpio --quiet -o -H newc -R 0:0 >"$out_abs.tmp")
mv -f "$out_abs.tmp" "$out_abs"
