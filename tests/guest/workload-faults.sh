#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# workload-faults.sh — runs in the guest (busybox sh) against a share that the
# host (guest-faults.sh) breaks below the daemon, step by step:
#   ENOSPC  the share is a small tmpfs: writing until full fails with ENOSPC,
#           the worker serves on, files written before are intact;
#   EIO     eio/ is a FUSE file system of the test whose file "bad" fails READ;
#   replace r/f is renamed over on the host while the guest has it open;
#   away    d/ is renamed out of the share while the guest is inside it;
#   moved   the shared folder itself is renamed, then removed.
# Handshake: the guest prints "STEP NAME" and waits (a generous limit, no fixed
# sleep) for the host to create /mnt/.ctl/go-NAME once it has made the change.
# The last step has no control directory left: the guest waits until /mnt/.ctl
# disappears.  Prints "SUM NAME SHA256" for the host's comparisons, then DONE.
# Environment: OLD_SHA256 / NEW_SHA256 (r/f before and after the host replaces it).

. /workload-lib.sh

# wait_go NAME — tells the host we reached NAME and waits for its go-ahead (up to 120 s)
wait_go() {
        echo "STEP $1"
        i=0
        while [ ! -e "/mnt/.ctl/go-$1" ]; do
                i=$((i + 1))
                [ "$i" -le 1200 ] || give_up "go-$1" "the host did not answer step $1 within 120 s"
                sleep 0.1
        done
}
# result NAME COMMAND… — runs COMMAND, prints "RESULT NAME: ok" or its error (what each case returns)
result() {
        name=$1
        shift
        if out=$("$@" 2>&1); then echo "RESULT $name: ok"; else echo "RESULT $name: $(echo "$out" | tr '\n' ' ')"; fi
}
sha() { sha256sum "$1" | cut -d' ' -f1; }

mount_share
pass mount
W=/mnt/w
mkdir "$W" || give_up mkdir "cannot make $W"

# ---- files written before the share fills up ------------------------------------------
head -c 1048576 /dev/urandom >"$W/before-big"
echo "written before the disk filled" >"$W/before-small"
sync
echo "SUM before-big $(sha "$W/before-big")"
echo "SUM before-small $(sha "$W/before-small")"

# ---- ENOSPC: write until the host filesystem is full -----------------------------------
fails_with enospc-write "No space left on device" dd if=/dev/zero of="$W/fill" bs=65536
result enospc-write dd if=/dev/zero of="$W/fill" bs=65536 oflag=append conv=notrunc
fails_with enospc-fsync "No space left on device" dd if=/dev/zero of="$W/fill2" bs=4096 count=64 conv=fsync
result enospc-fsync dd if=/dev/zero of="$W/fill2" bs=4096 count=64 conv=fsync
result enospc-small-create sh -c "echo x >$W/tiny"
avail=$(df -k /mnt | awk 'NR == 2 { print $4 }')
[ "${avail:-x}" -lt 64 ] 2>/dev/null && pass enospc-df-full || fail enospc-df-full "df says ${avail:-?} KiB free"
# The worker is alive and serving: free the space, write again, read the old files back.
check enospc-rm rm -f "$W/fill" "$W/fill2" "$W/tiny"
# The space comes back when the worker closes its fds of the removed files: the
# guest sends RELEASE in the background after close, so wait for df to see it.
i=0
while [ "$(df -k /mnt | awk 'NR == 2 { print $4 }')" -lt 4096 ] && [ "$i" -lt 600 ]; do i=$((i + 1)); sleep 0.1; done
echo "RESULT enospc-space-back: after $i polls of 0.1 s"
check enospc-after-create sh -c "echo 'written after the disk filled' >$W/after"
sync
same enospc-after-write "written after the disk filled" "$(cat "$W/after")"
echo "SUM before-big-reread $(sha "$W/before-big")"
echo "SUM before-small-reread $(sha "$W/before-small")"

# ---- EIO from the host file system -------------------------------------------------------
same eio-list "bad good" "$(ls /mnt/eio | tr '\n' ' ' | sed 's/ $//')"
fails_with eio-read "Input/output error" cat /mnt/eio/bad
result eio-read cat /mnt/eio/bad
fails_with eio-read-direct "Input/output error" dd if=/mnt/eio/bad of=/dev/null bs=4096 count=1 iflag=direct
same eio-good-file "good data" "$(cat /mnt/eio/good)"
same eio-size 65536 "$(stat -c %s /mnt/eio/bad)"

# ---- a file replaced (renamed over) on the host while the guest has it open --------------
exec 3</mnt/r/f
dd bs=4096 count=1 of=/tmp/part1 <&3 2>/dev/null
wait_go replace
cat <&3 >/tmp/part2
exec 3<&-
same replace-open-fd-old-content "$OLD_SHA256" "$(cat /tmp/part1 /tmp/part2 | sha256sum | cut -d' ' -f1)"
echo "RESULT replace-open-fd: read on to the end of the old file"
# A new open sees the new file once the guest's 1 s entry cache expires.
i=0
while [ "$(sha /mnt/r/f 2>/dev/null)" != "$NEW_SHA256" ] && [ "$i" -lt 600 ]; do i=$((i + 1)); sleep 0.1; done
same replace-reopen-new-content "$NEW_SHA256" "$(sha /mnt/r/f)"

# ---- a directory renamed out of the share while the guest is inside it ------------------
cd /mnt/d || give_up cd-d "no /mnt/d"
exec 4>>/mnt/d/open-w
echo "before the move" >&4
wait_go away
result away-ls ls .
result away-stat-file stat -c %s inside
result away-read-file cat inside
result away-create sh -c 'echo new >created-after'
result away-mkdir mkdir made-after
result away-rename mv inside renamed-inside
result away-unlink rm -f inside
result away-link ln inside linked-after
result away-open-write sh -c 'echo appended >>inside'
result away-truncate truncate -s 0 inside
result away-setxattr sluice-guest-tool setxattr inside user.after moved
result away-write-open-fd sh -c 'echo "after the move" >&4'
exec 4>&-
result away-chmod chmod 600 inside
fails_with away-no-chmod "Permission denied" chmod 600 inside
cd /
result away-lookup-by-path ls /mnt/d
# Gone from the share once the guest's 1 s entry cache of d expires.
i=0
while [ -e /mnt/d ] && [ "$i" -lt 600 ]; do i=$((i + 1)); sleep 0.1; done
[ ! -e /mnt/d ] && pass away-gone-from-share || fail away-gone-from-share "/mnt/d still there after 60 s"

# ---- the shared folder itself renamed on the host -----------------------------------------
wait_go share-renamed
result share-renamed-ls ls /mnt
result share-renamed-create sh -c 'echo "after the share moved" >/mnt/after-share-rename'
result share-renamed-read cat /mnt/w/before-small

# ---- the shared folder removed on the host (no control directory left: wait for it to go) --
echo "STEP share-removed"
i=0
while [ -e /mnt/.ctl ]; do
        i=$((i + 1))
        [ "$i" -le 1200 ] || give_up share-removed "/mnt/.ctl still there 120 s after the step"
        sleep 0.1
done
result share-removed-ls ls -a /mnt
result share-removed-stat stat -c %F /mnt
result share-removed-create sh -c 'echo x >/mnt/after-removal'
result share-removed-mkdir mkdir /mnt/dir-after-removal
result share-removed-statfs df /mnt
fails_with share-removed-no-create "No such file or directory" mkdir /mnt/dir-after-removal2
check share-removed-umount umount /mnt
echo DONE
