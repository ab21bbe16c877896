#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# workload-ro.sh — runs in the guest (busybox sh) on a share served read-only.
#
# The guest mounts it read-write on purpose: the daemon, not the guest's mount
# options, must refuse every mutation with EROFS.  Expects in the share (put
# there by guest-ro.sh): file.txt containing "original", emptydir/, dir/inner,
# link -> file.txt.  Prints PASS/FAIL per check and DONE.

. /workload-lib.sh
EROFS="Read-only file system"
# erofs NAME COMMAND… — COMMAND must fail with "Read-only file system" (or the
# helper's EROFS tag)
erofs() {
        name=$1
        shift
        if out=$("$@" 2>&1); then
                fail "$name" "succeeded on a read-only share"
        else
                case "$out" in
                *"$EROFS"*|*EROFS*) pass "$name" ;;
                *) fail "$name" "expected '$EROFS', got: $(echo "$out" | tr '\n' ' ')" ;;
                esac
        fi
}

mount_share
pass mount
cd /mnt || exit 1

# reading still works
same read original "$(cat file.txt)"
same readdir "dir emptydir file.txt link" "$(ls | tr '\n' ' ' | sed 's/ $//')"
same readlink file.txt "$(readlink link)"
same read-inner inner "$(cat dir/inner)"

# every kind of change fails with EROFS
erofs create touch new-file
erofs create-redirect sh -c 'echo x >new-file2'
erofs write-existing sh -c 'echo changed >file.txt'
erofs append-existing sh -c 'echo more >>file.txt'
erofs open-for-write sluice-guest-tool open-write file.txt
erofs truncate truncate -s 0 file.txt
erofs unlink rm -f file.txt
erofs unlink-in-dir rm -f dir/inner
erofs mkdir mkdir newdir
erofs rmdir rmdir emptydir
erofs rename mv file.txt renamed.txt
erofs rename-dir mv dir dir2
erofs chmod chmod 600 file.txt
erofs utimes touch -d '2001-01-01 00:00:00' file.txt
erofs link ln file.txt hardlink
erofs symlink ln -s file.txt symlink
erofs mknod-fifo mkfifo fifo
erofs setxattr sluice-guest-tool setxattr file.txt user.x y
erofs removexattr sluice-guest-tool removexattr file.txt user.x
erofs fallocate fallocate -l 4096 file.txt

# and nothing changed, as far as the guest can tell
same unchanged-content original "$(cat file.txt)"
same unchanged-listing "dir emptydir file.txt link" "$(ls | tr '\n' ' ' | sed 's/ $//')"
cd /
umount /mnt && pass umount || fail umount "umount /mnt failed"
echo DONE
