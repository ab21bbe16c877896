#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# winfsp-names-check.sh — daemon/win-names.c against WinFsp's own name mapping.
#
# Local only: WinFsp's code is not in this tree.  Give a WinFsp source tree
# (git clone https://github.com/winfsp/winfsp) as $SLUICE_WINFSP_SOURCE; the
# script extracts FspPosixInvalidPathChars and the two Ex mapping functions
# from its src/shared/ku/posix.c (src/dll/posix.c in older trees) into a
# temporary folder, compiles them with tests/unit/winfsp-shim.h and
# winfsp-names-check.c, and runs the check over this source tree's names,
# awkward ones and random ones.  Exit 77 (skipped) without the variable.
set -eu

if [ -z "${SLUICE_WINFSP_SOURCE:-}" ]; then
        echo "skipped: set SLUICE_WINFSP_SOURCE to a WinFsp source tree"
        exit 77
fi
src=${SLUICE_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
posix=$SLUICE_WINFSP_SOURCE/src/shared/ku/posix.c
[ -f "$posix" ] || posix=$SLUICE_WINFSP_SOURCE/src/dll/posix.c
if [ ! -f "$posix" ]; then
        echo "no posix.c under $SLUICE_WINFSP_SOURCE/src" >&2
        exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
        echo '#include "winfsp-shim.h"'
        # from the table to the end of FspPosixMapPosixToWindowsPathEx
        awk '/^static UINT32 FspPosixInvalidPathChars/ { on = 1 }
             on && /^FSP_API VOID FspPosixDeletePath/ { exit }
             on { print }' "$posix"
} > "$tmp/winfsp-extract.c"
grep -q 'FspPosixMapPosixToWindowsPathEx(const char' "$tmp/winfsp-extract.c" || {
        echo "the mapping functions were not found in $posix" >&2
        exit 1
}
# WinFsp's code as it is (Windows idioms warn on Linux); ours warning-free
${CC:-cc} -std=gnu11 -O1 -w -I"$src/tests/unit" -c -o "$tmp/winfsp-extract.o" "$tmp/winfsp-extract.c"
${CC:-cc} -std=gnu11 -O1 -Wall -Wextra -Werror -I"$src/tests/unit" -I"$src/daemon" -o "$tmp/check" \
        "$src/tests/unit/winfsp-names-check.c" "$src/daemon/win-names.c" "$tmp/winfsp-extract.o"
"$tmp/check" "$src"
