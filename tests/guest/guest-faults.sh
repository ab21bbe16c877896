#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest-faults.sh — one Linux guest meets a failing host file system below the
# daemon (workload-faults.sh): a full disk (ENOSPC), a file that fails to read
# (EIO, from eio-fs.c mounted inside the share), a file renamed over while open,
# a directory renamed out of the share while the guest is inside it, and the
# shared folder itself renamed and then removed.  The host makes each change
# when the guest prints "STEP NAME" and answers with .ctl/go-NAME in the share.
# Afterwards the host checks what the guest left: the files written before the
# disk filled are intact, the worker served to the end, and nothing was written
# outside the share (the renamed-away directory, a new folder at the share's old
# path, a canary file beside the share).
#
# Needs root (it mounts a tmpfs and a FUSE file system); the worker runs as
# $SLUICE_TEST_USER.  $SLUICE_EIO_FS names the eio-fs binary (meson sets it).
# Exit 77 when QEMU, the guest kernel, root or /dev/fuse is missing.
. "$(dirname "$0")/guest-lib.sh"
need_root "tmpfs and FUSE mounts"
[ "$backend" = sluice ] || skip "guest-faults checks sluice-fs only"
[ -c /dev/fuse ] || skip "no /dev/fuse"
eio_fs=${SLUICE_EIO_FS:-${SLUICE_BUILD_ROOT:+$SLUICE_BUILD_ROOT/tests/guest/eio-fs}}
[ -x "${eio_fs:-}" ] || fail "no eio-fs binary (set SLUICE_EIO_FS)"
user=${SLUICE_TEST_USER:-root}

guest_tmp top faults -d
guest_tmp console faults-console
guest_tmp daemon_log faults-daemon
guest_tmp eio_log faults-eio
eio_pid='' guest_pid='' eio_mnt=''
cleanup() {
        [ -z "$guest_pid" ] || kill -TERM "$guest_pid" 2>/dev/null
        [ -z "$guest_pid" ] || wait "$guest_pid" 2>/dev/null
        [ -z "$eio_mnt" ] || umount -l "$eio_mnt" 2>/dev/null
        [ -z "$eio_pid" ] || { kill "$eio_pid" 2>/dev/null; wait "$eio_pid" 2>/dev/null; }
        umount -l "$top" 2>/dev/null
        rm -rf "${guest_tmp_paths[@]}"
}
trap cleanup EXIT

# ---- the host side: a 24 MiB tmpfs holding the share, a folder outside it and a canary ----
mount -t tmpfs -o size=24m,mode=0755 sluice-faults "$top" || fail "cannot mount a tmpfs on $top"
share=$top/share outside=$top/outside canary=$top/canary.txt
mkdir -p "$share/.ctl" "$share/r" "$share/d" "$share/eio" "$outside"
echo "outside the share: nobody writes here" >"$canary"
canary_sha=$(sha256sum "$canary" | cut -d' ' -f1)
head -c 262144 /dev/urandom >"$share/r/f"
head -c 262144 /dev/urandom >"$share/r/f.new"
old_sha=$(sha256sum "$share/r/f" | cut -d' ' -f1)
new_sha=$(sha256sum "$share/r/f.new" | cut -d' ' -f1)
echo inside >"$share/d/inside"
chown -R "$user:" "$share"
chown root: "$share/.ctl" "$share/eio"
"$eio_fs" "$share/eio" >"$eio_log" 2>&1 &
eio_pid=$!
eio_up() { grep -q 'eio-fs: ready' "$eio_log" || pid_gone "$eio_pid"; }
wait_for 30 eio_up
if ! grep -q 'eio-fs: ready' "$eio_log"; then
        wait "$eio_pid"; st=$?
        cat "$eio_log"; eio_pid=''
        [ "$st" = 77 ] && skip "cannot mount a FUSE file system here"
        fail "eio-fs did not start"
fi
eio_mnt=$share/eio

"$here/run-guest.sh" --shared-dir "$share" --daemon-arg --xattr --quiet \
        --env OLD_SHA256="$old_sha" --env NEW_SHA256="$new_sha" \
        --console "$console" --daemon-log "$daemon_log" --timeout 240 "$here/workload-faults.sh" &
guest_pid=$!

# wait_step NAME — until the guest prints "STEP NAME" (up to 180 s; boot
# included); a guest run that ended meanwhile ends the wait
step_reached() { tr -d '\r' <"$console" | grep -qx "STEP $1"; }
step_or_end() { step_reached "$1" || pid_gone "$guest_pid"; }
wait_step() {
        wait_for 180 step_or_end "$1" && step_reached "$1" && return 0
        fail_later "host-step-$1: the guest never reached step $1"
        return 1
}
go() { touch "$1/.ctl/go-$2"; }
sum_of() { tr -d '\r' <"$console" | sed -n "s/^SUM $1 \([0-9a-f]\{64\}\)\$/\1/p"; }
hsum() { [ -f "$1" ] && sha256sum "$1" | cut -d' ' -f1; }

if wait_step replace; then
        mv -f "$share/r/f.new" "$share/r/f"
        go "$share" replace
fi
if wait_step away; then
        mv "$share/d" "$outside/d"
        go "$share" away
fi
moved=$top/share-moved
if wait_step share-renamed; then
        # Lazily: the worker still holds O_PATH fds of eio-fs's files.
        umount -l "$eio_mnt" && eio_mnt=''
        mv "$share" "$moved"
        # A new folder at the share's old path: the worker must keep to the one it opened.
        mkdir "$share" && chown "$user:" "$share"
        go "$moved" share-renamed
fi
if wait_step share-removed; then
        # What the guest wrote, checked before the folder goes.
        for f in before-big before-small; do
                host_check "enospc-$f-intact" "$(sum_of "$f")" "$(hsum "$moved/w/$f")"
                host_check "enospc-$f-reread" "$(sum_of "$f")" "$(sum_of "$f-reread")"
                [ -n "$(sum_of "$f")" ] || fail_later "host-enospc-$f: the guest printed no SUM line"
        done
        host_check enospc-after "written after the disk filled" "$(cat "$moved/w/after" 2>&1)"
        host_check enospc-fill-gone "" "$(cd "$moved/w" && ls -d fill fill2 tiny 2>/dev/null)"
        host_check share-renamed-follows "after the share moved" "$(cat "$moved/after-share-rename" 2>&1)"
        host_check replace-host-file "$new_sha" "$(hsum "$moved/r/f")"
        rm -rf "$moved"
fi
wait "$guest_pid"
status=$?
guest_pid=''
[ "$status" = 77 ] && exit 77

# ---- what each case returned in the guest ----------------------------------------------
echo "--- what the guest got:"
tr -d '\r' <"$console" | grep -E '^(RESULT|PASS|FAIL)' | sed 's/^/    /'

# ---- nothing was written outside the share ---------------------------------------------
host_check canary "$canary_sha" "$(hsum "$canary")"
host_check old-path-folder-empty "" "$(ls -A "$share")"
host_check away-names "inside open-w" "$(ls -A "$outside/d" | sort | tr '\n' ' ' | sed 's/ $//')"
host_check away-inside-content inside "$(cat "$outside/d/inside" 2>&1)"
host_check away-inside-mode 644 "$(stat -c %a "$outside/d/inside" 2>&1)"
if command -v getfattr >/dev/null; then
        host_check away-inside-xattr "" "$(getfattr --absolute-names -d "$outside/d/inside" 2>/dev/null)"
fi
# Written through a file the guest opened before the move: it stays that file.
echo "away open-w (opened in the share before the move): $(tr '\n' '|' <"$outside/d/open-w")"
host_check top-names "canary.txt outside share" "$(ls -A "$top" | sort | tr '\n' ' ' | sed 's/ $//')"
host_check moved-removed "" "$(ls -d "$moved" 2>/dev/null)"

# ---- the worker served to the end and printed its counters ------------------------------
if grep -q -- '^--- run-guest: SIGUSR1' "$daemon_log" &&
   sed -n '/^--- run-guest: SIGUSR1/,$p' "$daemon_log" | grep -q 'requests'; then
        pass "host-worker-alive"
else
        fail_later "host-worker-alive: no counters after SIGUSR1 in the worker's log"
fi
if grep -qE 'ERROR: AddressSanitizer|runtime error:|Segmentation' "$daemon_log"; then
        fail_later "host-worker-clean: the worker log reports an error:"; grep -E 'ERROR|runtime error' "$daemon_log"
fi

if [ "$status" != 0 ] || [ "$test_failures" != 0 ]; then
        echo "--- worker log (last 30 lines):"; tail -n 30 "$daemon_log"
        echo "guest-faults: FAILED (run-guest status $status)"
        exit 1
fi
echo "guest-faults: all checks passed"
