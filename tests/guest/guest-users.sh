#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest-users.sh — several guest users on one share, in both modes
# (workload-users.sh), then the host checks what they left behind:
#   root:    the worker runs as root (libvirt's <binary> route): files belong
#            to the guest user that made them, set-group-ID directories work;
#   desktop: the worker runs as $SLUICE_TEST_USER (or the caller): every file
#            is that user's, shown as guest user A through --translate-uid.
# In both, guest users are kept apart and guest root makes no device, no
# set-ID file and no file capability on the host; guest root's tar -x, cp -a,
# rsync -a and touch -h give special files their owner, mode and times (root mode), a
# guest user's cp -a, rsync -a and touch -h a FIFO's mode and times and a symlink's
# times (desktop mode, through the metadata helper), under the default sandbox.  The root mode needs root
# (skipped otherwise).  Exit 77 when QEMU or the guest kernel is missing.
. "$(dirname "$0")/guest-lib.sh"
guest_tmp work users -d
# A sanitizer build's worker enters no mount namespace (mount-namespace.c: its
# run-time reads /proc by path), so a root worker is not sealed and keeps the
# sandbox's refusal of symlink metadata: the workload checks that instead.
# Nor does a desktop user's worker start its metadata helper there
# (metadata-helper.h): HELPER=0 tells the workload.
sealed=1
worker=${SLUICE_FS:-${SLUICE_BUILD_ROOT:+$SLUICE_BUILD_ROOT/daemon/sluice-fs}}
if [ -n "$worker" ] && grep -qa -e __asan_init -e __tsan_init "$worker"; then
        sealed=0
        echo "note: $worker is a sanitizer build: its root worker is not sealed"
fi
chmod 0755 "$work"
ran=0

# run_mode MODE A_UID B_UID [run-guest options…]
run_mode() {
        local mode=$1 a=$2 b=$3
        shift 3
        local share=$work/$mode-share log=$work/$mode-daemon.log
        mkdir -p "$share/users"
        chmod 0777 "$share/users"
        if [ "$mode" = desktop ] && [ -n "$owner" ] && [ "$owner" != "$(id -un)" ]; then
                chown -R "$owner:" "$share"
        fi
        echo "--- mode $mode: guest users $a and $b"
        "$here/run-guest.sh" --shared-dir "$share" --daemon-arg --xattr "$@" \
                --env MODE="$mode" --env A_UID="$a" --env B_UID="$b" --env SEALED="$sealed" --env HELPER="$sealed" \
                --daemon-log "$log" --timeout 150 "$here/workload-users.sh"
        local status=$?
        [ "$status" = 77 ] && exit 77
        [ "$status" = 0 ] || fail_later "$mode: run-guest.sh failed (status $status)"
        ran=$((ran + 1))
        local u=$share/users
        if [ "$mode" = root ]; then
                host_check "$mode-a-owner" "$a:$a" "$(stat -c %u:%g "$u/a-file" 2>&1)"
                host_check "$mode-b-owner" "$b:$b" "$(stat -c %u:%g "$u/b-file" 2>&1)"
                host_check "$mode-sgid-file" "$a:3000" "$(stat -c %u:%g "$u/sgid/f" 2>&1)"
                host_check "$mode-suid-root" "0 755" "$(stat -c '%u %a' "$u/suid" 2>&1)"
                # tar -x, cp -a and touch -h of special files (workload-users.sh)
                host_check "$mode-tar-fifo" "1100:1101 640 981173106" \
                        "$(stat -c '%u:%g %a %Y' "$u/tarx/fifo" 2>&1)"
                if [ "$sealed" = 1 ]; then
                        host_check "$mode-cp-a-link" "1100:1101 $(date -u -d '2003-04-05 06:07:08' +%s)" \
                                "$(stat -c '%u:%g %Y' "$u/cpa/link" 2>&1)"
                        [ ! -d "$u/rsyncd" ] ||
                                host_check "$mode-rsync-a-link" "1100:1101 $(date -u -d '2002-03-04 05:06:07' +%s)" \
                                        "$(stat -c '%u:%g %Y' "$u/rsyncd/link" 2>&1)"
                fi
        else
                host_check "$mode-fifo" "$owner 640 981173106" "$(stat -c '%U %a %Y' "$u/dfifo" 2>&1)"
                if [ "$sealed" = 1 ]; then
                        host_check "$mode-touch-h-link" "$owner $(date -u -d '2003-04-05 06:07:08' +%s)" \
                                "$(stat -c '%U %Y' "$u/dcpa/link" 2>&1)"
                        [ -L "$u/drsync/link" ] &&
                                host_check "$mode-rsync-a-link" "$owner $(date -u -d '2002-03-04 05:06:07' +%s)" \
                                        "$(stat -c '%U %Y' "$u/drsync/link" 2>&1)"
                fi
                host_check "$mode-a-owner" "$owner" "$(stat -c %U "$u/a-file" 2>&1)"
                host_check "$mode-b-owner" "$owner" "$(stat -c %U "$u/b-file" 2>&1)"
                host_check "$mode-suid" 755 "$(stat -c %a "$u/suid" 2>&1)"
        fi
        host_check "$mode-a-content" "A wa again" "$(cat "$u/a-file" 2>&1)"
        host_check "$mode-no-devices" "" "$(find "$u" \( -type c -o -type b \) 2>&1)"
        host_check "$mode-no-setid" "" "$(find "$u" -type f -perm /6000 2>&1)"
        host_check "$mode-no-capability" "" "$(getfattr --absolute-names -n security.capability "$u/suid" 2>/dev/null)"
        # Each refusal is logged, rate-limited: 42 device attempts give at most
        # 10 lines (LOG_RATELIMIT_BURST a minute), the xattr refusals their own.
        local devices xattrs
        devices=$(grep -c 'refused: guest uid 0 tried to create a' "$log")
        xattrs=$(grep -c 'refused: guest uid 0 tried to write xattr' "$log")
        if [ "$devices" -ge 2 ] && [ "$devices" -le 10 ] && [ "$xattrs" = 2 ]; then
                pass "host-$mode-refusals-logged ($devices device lines, $xattrs xattr lines)"
        else
                fail_later "host-$mode-refusals-logged: $devices device lines (2 to 10 expected), $xattrs xattr lines (2 expected)"
        fi
}

# ---- desktop user ----------------------------------------------------------------------
owner=$(id -un)
if [ "$(id -u)" = 0 ] && [ -n "${SLUICE_TEST_USER:-}" ]; then
        owner=$SLUICE_TEST_USER
fi
if [ "$owner" != root ]; then
        a=1000
        [ "$(id -u "$owner")" = 1000 ] || [ "$(id -g "$owner")" = 1000 ] && a=2000
        run_mode desktop "$a" $((a + 1)) \
                --daemon-arg "--translate-uid=$a:$(id -u "$owner")" \
                --daemon-arg "--translate-gid=$a:$(id -g "$owner")"
else
        echo "SKIP desktop mode: no SLUICE_TEST_USER to run the worker as"
fi

# ---- root --------------------------------------------------------------------------------
if [ "$(id -u)" = 0 ]; then
        run_mode root 1100 1101 --daemon-as-root
else
        echo "SKIP root mode: needs root"
fi

[ "$ran" -gt 0 ] || exit 77
if [ "$test_failures" != 0 ]; then
        echo "guest-users: FAILED"
        exit 1
fi
echo "guest-users: all checks passed"
