#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# extract-vmlinux.sh BZIMAGE OUT — writes the uncompressed kernel ELF found
# inside an x86 bzImage to OUT.
#
# Why: QEMU boots an ELF vmlinux through its PVH entry point, which skips the
# real-mode setup and the in-guest decompression (~2.3 s under TCG).
#
# How: the bzImage carries the kernel as one compressed stream somewhere after
# the setup code.  For every compression the kernel supports, look for that
# format's magic bytes, decompress from each candidate offset (trailing bytes
# after the stream make the decompressor complain; that is expected and
# ignored) and keep the first result that is an ELF file.
set -euo pipefail

if [ $# -ne 2 ]; then
        echo "usage: $0 BZIMAGE OUT" >&2
        exit 2
fi
image=$1 out=$2
[ -r "$image" ] || { echo "$0: cannot read $image" >&2; exit 1; }

tmp=$(mktemp "${out}.XXXXXX")
trap 'rm -f "$tmp"' EXIT

is_elf() {
        [ -s "$1" ] && [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]
}

# try MAGIC(grep -P escaped) TOOL ARGS… — tries every offset where MAGIC occurs
try() {
        local magic=$1 offset
        shift
        command -v "$1" >/dev/null 2>&1 || return 1
        for offset in $(LC_ALL=C grep -obUaP "$magic" "$image" | cut -d: -f1); do
                tail -c "+$((offset + 1))" "$image" | "$@" >"$tmp" 2>/dev/null || true
                if is_elf "$tmp"; then
                        return 0
                fi
        done
        return 1
}

# Debian's 6.1 kernels are xz-compressed (CONFIG_KERNEL_XZ); the others cover
# kernels built with a different CONFIG_KERNEL_* choice.
if try '\xfd7zXZ\x00' xz -dc ||
   try '\x28\xb5\x2f\xfd' zstd -dc ||
   try '\x1f\x8b\x08' gzip -dc ||
   try 'BZh' bzip2 -dc ||
   try '\x5d\x00\x00\x00' xz -dc --format=lzma ||
   try '\x89\x4c\x5a' lzop -dc ||
   try '\x02\x21\x4c\x18' lz4 -dc; then
        chmod 0644 "$tmp"
        mv -f "$tmp" "$out"
        exit 0
fi

# Already an ELF (some distributions install vmlinux itself).
if is_elf "$image"; then
        cp "$image" "$out"
        exit 0
fi
echo "$0: no compressed kernel found in $image (is xz-utils/zstd/gzip installed?)" >&2
exit 1
