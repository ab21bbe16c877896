#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# workload-rw.sh — runs in the guest (busybox sh) with the share writable.
#
# Expects in the share, put there by the host (guest-rw.sh): from-host.bin
# (its sha256 in $HOST_SHA256), many/ with $MANY_COUNT files, and an empty
# directory guest/ that the workload works in.  Prints PASS/FAIL per check,
# "BIGSUM <sha256>" for the 64 MiB file, and DONE.

. /workload-lib.sh
now() { read -r t _ </proc/uptime; echo "$t"; }

t0=$(now)
mount_share
pass mount
grep -q " /mnt $SLUICE_FSTYPE " /proc/mounts && pass mount-type || fail mount-type "$(grep /mnt /proc/mounts)"
G=/mnt/guest
cd "$G" || { fail cd "no $G"; echo DONE; exit 1; }

# -- a file the host wrote, read in the guest
same host-file-read "$HOST_SHA256" "$(sha256sum /mnt/from-host.bin | cut -d' ' -f1)"
check statfs df /mnt

# -- create, read, write in place, append, truncate
echo hello >created
same create-read hello "$(cat created)"
printf abcdef >rw
printf XY | dd of=rw bs=1 seek=2 conv=notrunc 2>/dev/null
same write-in-place abXYef "$(cat rw)"
printf gh >>rw
same append abXYefgh "$(cat rw)"
truncate -s 3 rw
same truncate-shrink "3 abX" "$(stat -c %s rw) $(cat rw)"
truncate -s 100000 rw
same truncate-grow "100000 0" "$(stat -c %s rw) $(tail -c 99997 rw | tr -d '\000' | wc -c)"
check fallocate fallocate -l 1048576 falloc
same fallocate-size 1048576 "$(stat -c %s falloc)"

# -- rename, renameat2 flags
echo one >a
mv a b
if [ ! -e a ] && [ "$(cat b)" = one ]; then pass rename; else fail rename "a still there or b wrong"; fi
echo two >c
fails_with rename-noreplace "EEXIST" sluice-guest-tool rename-noreplace b c
check rename-exchange sluice-guest-tool rename-exchange b c
same rename-exchange-content "two one" "$(cat b) $(cat c)"
mkdir -p rdir/sub && mv rdir rdir2
[ -d rdir2/sub ] && pass rename-dir || fail rename-dir "rdir2/sub missing"

# -- hard links
echo linked >l1
ln l1 l2
same link-count 2 "$(stat -c %h l1)"
echo more >>l2
same link-shared "linked more" "$(cat l1 | tr '\n' ' ' | sed 's/ $//')"
same link-same-inode "$(stat -c %i l1)" "$(stat -c %i l2)"
rm l2
same unlink-count 1 "$(stat -c %h l1)"

# -- symlinks
ln -s created sl
same symlink-readlink created "$(readlink sl)"
same symlink-follow hello "$(cat sl)"
ln -s /etc/passwd abs-link
same symlink-absolute /etc/passwd "$(readlink abs-link)"

# -- chmod, chown, timestamps
chmod 640 created
same chmod 640 "$(stat -c %a created)"
chmod 4755 created 2>/dev/null; chmod 755 created
same chmod-again 755 "$(stat -c %a created)"
touch -d '2001-01-01 00:00:00' created
same utimes 978307200 "$(stat -c %Y created)"
before=$(stat -c %Y created)
touch created
[ "$(stat -c %Y created)" -gt "$before" ] && pass utimes-now || fail utimes-now "mtime not updated"

# -- directories
mkdir -p d1/d2/d3
[ -d d1/d2/d3 ] && pass mkdir || fail mkdir "d1/d2/d3 missing"
fails_with rmdir-nonempty "Directory not empty" rmdir d1/d2
rmdir d1/d2/d3 && rmdir d1/d2 && rmdir d1
[ ! -e d1 ] && pass rmdir || fail rmdir "d1 still there"
fails_with lookup-missing "No such file or directory" cat does-not-exist
mkdir sdir && echo x >sdir/f && rm -r sdir
[ ! -e sdir ] && pass rm-recursive || fail rm-recursive "sdir still there"
check mknod-fifo mkfifo fifo
same fifo-type "fifo" "$(stat -c %F fifo)"

# -- extended attributes (the daemon runs with --xattr)
check setxattr sluice-guest-tool setxattr created user.sluice hello-xattr
same getxattr hello-xattr "$(sluice-guest-tool getxattr created user.sluice 2>&1)"
sluice-guest-tool listxattr created | grep -qx user.sluice && pass listxattr ||
        fail listxattr "$(sluice-guest-tool listxattr created 2>&1 | tr '\n' ' ')"
check removexattr sluice-guest-tool removexattr created user.sluice
fails_with getxattr-removed "ENODATA" sluice-guest-tool getxattr created user.sluice
check setxattr-keep sluice-guest-tool setxattr created user.kept from-guest

# -- locks
echo lock >lockfile
check flock sluice-guest-tool flock lockfile
check posix-lock sluice-guest-tool posixlock lockfile

# -- readdir of thousands of entries
t=$(now)
same readdir-count "$MANY_COUNT" "$(ls /mnt/many | wc -l)"
same readdir-long "$MANY_COUNT" "$(ls -l /mnt/many | grep -c '^-')"
same readdir-names "f0001 f$MANY_COUNT" "$(ls /mnt/many | sort | sed -n '1p;$p' | tr '\n' ' ' | sed 's/ $//')"
same readdir-content "file 1234" "$(cat /mnt/many/f1234)"
echo "INFO readdir took $(awk -v a="$t" -v b="$(now)" 'BEGIN { print b - a }')s"
i=0
while [ $i -lt 300 ]; do : >"gmany.$i"; i=$((i + 1)); done
same readdir-guest-created 300 "$(ls | grep -c '^gmany\.')"
rm gmany.*
same unlink-many 0 "$(ls | grep -c '^gmany\.')"

# -- a 64 MiB file: written here, checksummed by the host
t=$(now)
dd if=/dev/urandom of=/tmp/big bs=1M count=64 2>/dev/null
sum=$(sha256sum /tmp/big | cut -d' ' -f1)
t1=$(now)
check big-write dd if=/tmp/big of=big bs=1M conv=fsync
t2=$(now)
rm /tmp/big
sync
echo 3 >/proc/sys/vm/drop_caches
t3=$(now)
same big-readback "$sum" "$(sha256sum big | cut -d' ' -f1)"
t4=$(now)
same big-size 67108864 "$(stat -c %s big)"
echo "BIGSUM $sum"
echo "INFO 64 MiB write $(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')s, read+sha256 $(awk -v a="$t3" -v b="$t4" 'BEGIN { print b - a }')s"

# -- id mapping (--translate-uid/--translate-gid=$IDMAP_UID:<worker's ids>): the
# worker's files appear owned by the guest's ordinary user $IDMAP_UID, who can
# then write in its folders; another guest user cannot.
if [ -n "${IDMAP_UID:-}" ]; then
        same idmap-owner "$IDMAP_UID:$IDMAP_UID" "$(stat -c %u:%g /mnt/from-host.bin)"
        check idmap-user-writes sluice-guest-tool write-as "$IDMAP_UID" "$IDMAP_UID" by-user.txt mine
        same idmap-new-file-owner "$IDMAP_UID" "$(stat -c %u by-user.txt)"
        fails_with idmap-other-user-denied "Permission denied" \
                sluice-guest-tool write-as $((IDMAP_UID + 1)) $((IDMAP_UID + 1)) by-other.txt theirs
fi

# -- a file the host checks after the guest is gone
echo "written by the guest" >from-guest.txt
mkdir guest-dir && echo inside >guest-dir/inner
rm -f falloc fifo rw
sync

cd /
check umount umount /mnt
echo "INFO workload took $(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')s"
echo DONE
