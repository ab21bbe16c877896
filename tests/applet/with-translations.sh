#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# with-translations.sh COMMAND…: runs COMMAND with the build tree's message
# catalogues (po/LANG/LC_MESSAGES/sluice.mo) at the place the binaries look
# for them, LOCALEDIR (compiled in; nothing is installed), in a private mount
# namespace: a read-only overlay of a staging folder on LOCALEDIR, or on its
# nearest existing parent, so everything already there stays visible and the
# machine's own tree is untouched.  Needs root (unshare -m); skips otherwise.
#   SLUICE_PO_BUILD_DIR  the build tree's po/
#   SLUICE_LOCALEDIR     LOCALEDIR as compiled in (meson's prefix/localedir)
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
: "${SLUICE_PO_BUILD_DIR:?}" "${SLUICE_LOCALEDIR:?}"

if [ -z "${SLUICE_IN_LOCALE_NS:-}" ]; then
        need_root "to show the build's translations at $SLUICE_LOCALEDIR"
        need_tools unshare
        SLUICE_IN_LOCALE_NS=1 exec unshare --mount --propagation private "$0" "$@"
fi

stage=$(mktemp -d /tmp/sluice-locale.XXXXXX)
base=
trap '[ -z "$base" ] || umount "$base" 2>/dev/null; rm -rf "$stage"' EXIT
dir=$SLUICE_LOCALEDIR
while [ ! -d "$dir" ]; do dir=$(dirname "$dir"); done
rel=${SLUICE_LOCALEDIR#"$dir"}
n=0
for mo in "$SLUICE_PO_BUILD_DIR"/*/LC_MESSAGES/sluice.mo; do
        [ -f "$mo" ] || continue
        lang=$(basename "$(dirname "$(dirname "$mo")")")
        mkdir -p "$stage$rel/$lang/LC_MESSAGES"
        cp "$mo" "$stage$rel/$lang/LC_MESSAGES/"
        n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no sluice.mo under $SLUICE_PO_BUILD_DIR (translations not built)"
chmod -R a+rX "$stage"
mount -t overlay sluice-locale -o "lowerdir=$stage:$dir" "$dir" ||
        skip "cannot mount an overlay on $dir"
base=$dir
"$@"
