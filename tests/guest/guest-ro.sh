#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest-ro.sh — sluice-fs --readonly: a Linux guest tries every kind of change
# (workload-ro.sh), each must fail with EROFS, and the host tree must be
# exactly as before (listing, modes, sizes, mtimes, contents, xattrs).
#
# $SLUICE_GUEST_BACKEND=9p runs the same workload against QEMU's read-only 9p
# export (how the workload itself was validated).  Exit 77 when QEMU or the
# guest kernel is missing.
. "$(dirname "$0")/guest-lib.sh"
guest_tmp share ro -d
echo original >"$share/file.txt"
mkdir "$share/emptydir" "$share/dir"
echo inner >"$share/dir/inner"
ln -s file.txt "$share/link"
if command -v setfattr >/dev/null; then
        setfattr -n user.x -v kept "$share/file.txt"
fi
if [ "$(id -u)" = 0 ] && [ -n "${SLUICE_TEST_USER:-}" ] && [ "$backend" = sluice ]; then
        chown -R "$SLUICE_TEST_USER:" "$share"
fi
# Set the times well in the past so that any change would show.
find "$share" -mindepth 1 -exec touch -h -d '2020-02-02 02:02:02' {} +
touch -d '2020-02-02 02:02:02' "$share"

snapshot() { # everything but atimes (reads may update those)
        (cd "$share" && find . -printf '%p %y %m %U %G %s %T@ %l\n' | LC_ALL=C sort &&
         find . -type f -exec sha256sum {} + | LC_ALL=C sort &&
         if command -v getfattr >/dev/null; then getfattr -R -d -m - . 2>/dev/null; fi)
}
before=$(snapshot)

daemon_args=(--daemon-arg --readonly)
[ "$backend" = sluice ] && daemon_args+=(--daemon-arg --xattr)
"$here/run-guest.sh" --shared-dir "$share" --backend "$backend" "${daemon_args[@]}" \
        --timeout 120 "$here/workload-ro.sh"
status=$?
[ "$status" = 77 ] && exit 77

after=$(snapshot)
if [ "$before" = "$after" ]; then
        pass "host-unchanged"
else
        fail_later "host-unchanged: the host tree changed:"
        diff <(echo "$before") <(echo "$after")
        status=1
fi
[ "$status" = 0 ] && echo "guest-ro: all checks passed" || echo "guest-ro: FAILED"
exit "$status"
