#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# workload-users.sh — runs in the guest (busybox sh, as root) and switches
# between guest users A and B (sluice-guest-tool as UID GID CMD…).
#
# Environment (from guest-users.sh): MODE=root (the worker runs as root: files
# belong to the guest user that made them) or MODE=desktop (the worker runs
# as the desktop user: every file belongs to that user, shown as guest user
# A through --translate-uid).  A_UID and B_UID are the two guest users.
# The share holds an empty directory users/ that everybody may write.
# Prints PASS/FAIL per check and DONE.

. /workload-lib.sh
as_a() { sluice-guest-tool as "$A_UID" "$A_UID" "$@"; }
as_b() { sluice-guest-tool as "$B_UID" "$B_UID" "$@"; }

mount_share
pass mount
U=/mnt/users
cd "$U" || give_up cd "no $U"

# -- A creates a private file and may do everything with it
check a-create as_a sh -c 'echo "A was here" >a-file && chmod 600 a-file'
same a-owner "$A_UID" "$(stat -c %u a-file)"
same a-mode 600 "$(stat -c %a a-file)"
check a-chmod as_a chmod 640 a-file
check a-chown-self as_a chown "$A_UID:$A_UID" a-file
check a-truncate as_a truncate -s 4 a-file
same a-truncated "A wa" "$(cat a-file)"
check a-rename as_a mv a-file a-moved
check a-rename-back as_a mv a-moved a-file
check a-append as_a sh -c 'echo " again" >>a-file'
check a-chmod-private as_a chmod 600 a-file
check a-unlink-own as_a sh -c 'echo tmp >a-tmp && rm a-tmp'

# -- B may not touch A's 0600 file
fails_with b-read "Permission denied" as_b cat a-file
fails_with b-write "Permission denied" as_b sh -c 'echo B >>a-file'
fails_with b-truncate "Permission denied" as_b truncate -s 0 a-file
fails_with b-chmod "Operation not permitted" as_b chmod 666 a-file
fails_with b-chown "Operation not permitted" as_b chown "$B_UID" a-file
same a-file-intact "A wa again" "$(cat a-file)"

# -- sticky directory: only the owner removes or renames its entries
mkdir sticky && chmod 1777 sticky
check a-sticky-create as_a sh -c 'echo mine >sticky/a'
fails_with b-sticky-unlink "Operation not permitted" as_b rm -f sticky/a
fails_with b-sticky-rename "Operation not permitted" as_b mv sticky/a sticky/b-took-it
same sticky-file-kept mine "$(cat sticky/a 2>&1)"
check a-sticky-unlink as_a rm sticky/a

# -- what B makes
check b-create as_b sh -c 'echo B >b-file'
if [ "$MODE" = root ]; then
        same b-owner "$B_UID" "$(stat -c %u b-file)"
        # -- set-group-ID directory: new entries take its group, subdirectories its bit
        mkdir sgid && chgrp 3000 sgid && chmod 2777 sgid
        check a-sgid-file as_a touch sgid/f
        check a-sgid-dir as_a mkdir sgid/d
        same sgid-file-group "3000 $A_UID" "$(stat -c '%g %u' sgid/f)"
        same sgid-dir-group 3000 "$(stat -c %g sgid/d)"
        case "$(stat -c %A sgid/d)" in d?????s*) pass sgid-dir-bit ;; *) fail sgid-dir-bit "$(stat -c %A sgid/d)" ;; esac
else
        # One owner on the host: what B makes is shown as the worker's user (A).
        same b-owner-single-user "$A_UID" "$(stat -c %u b-file)"
fi

# -- guest root does not become host root
fails_with root-mknod-char "Operation not permitted" mknod cdev c 1 3
fails_with root-mknod-block "Operation not permitted" mknod bdev b 8 0
[ -e cdev ] && fail root-no-cdev "cdev exists" || pass root-no-cdev
check root-mkfifo mknod fifo p
# A guest that keeps trying must not flood the host's log (the host counts the lines).
i=0
while [ $i -lt 40 ]; do mknod "flood$i" c 1 3 2>/dev/null; i=$((i + 1)); done
[ -e flood0 ] && fail root-flood-refused "flood0 exists" || pass root-flood-refused
echo '#!/bin/sh' >suid && chmod 4755 suid
same root-setuid-stripped 755 "$(stat -c %a suid)"
check root-setgid-file-create sh -c 'touch sgidf && chmod 2755 sgidf'
same root-setgid-stripped 755 "$(stat -c %a sgidf)"
fails_with root-file-capability "EPERM" sluice-guest-tool setcap suid
fails_with root-trusted-xattr "EPERM" sluice-guest-tool setxattr suid trusted.x y

# -- guest root restores what special files carry, as on a local file system:
#    tar -x (mknod, chown, chmod, times of a FIFO), cp -a (also chown -h of a
#    symlink), touch -h of a symlink.  The same commands on the guest's own root
#    file system are the reference (busybox tar restores no symlink owner or
#    time, cp -a no symlink time); the host checks owners and times as well.
#    rsync -a (the host's rsync in the image) likewise, symlink times included.
describe_special() {
        stat -c '%n %F %u:%g %a %Y' fifo file
        stat -c '%n %F %u:%g' link
}
S=/tmp/special-src R=/tmp/special-ref
mkdir -p "$S" "$R/tar" "$R/cp" && cd "$S" || give_up special-src "no $S"
mkfifo -m 0640 fifo && ln -s fifo link && echo data >file
chown 1100:1101 fifo file && chown -h 1100:1101 link
touch -d '2001-02-03 04:05:06' fifo file && touch -h -d '2002-03-04 05:06:07' link
tar -cf /tmp/special.tar fifo link file
tar -xf /tmp/special.tar -C "$R/tar" && cp -a fifo link file "$R/cp"
[ -x /bin/rsync ] && rsync -a "$S/" "$R/rsync"
cd "$U"
if [ "$MODE" = root ]; then
        mkdir tarx cpa
        check root-tar-x tar -xf /tmp/special.tar -C tarx
        same root-tar-x-as-local "$(cd "$R/tar" && describe_special)" "$(cd tarx && describe_special)"
        if [ "${SEALED:-1}" = 1 ]; then
                check root-cp-a cp -a "$S/fifo" "$S/link" "$S/file" cpa
                same root-cp-a-as-local "$(cd "$R/cp" && describe_special)" "$(cd cpa && describe_special)"
                check root-touch-h touch -h -d '2003-04-05 06:07:08' cpa/link
                same root-touch-h-mtime "$(date -d '2003-04-05 06:07:08' +%s)" "$(stat -c %Y cpa/link)"
                same root-touch-h-target-kept 981173106 "$(stat -c %Y cpa/fifo)"
                if [ -x /bin/rsync ]; then
                        check root-rsync-a rsync -a "$S/" rsyncd
                        same root-rsync-a-as-local "$(cd "$R/rsync" && describe_special && stat -c %Y link)" \
                                "$(cd rsyncd && describe_special && stat -c %Y link)"
                else
                        echo "SKIP root-rsync-a: the image has no rsync (build-image.sh)"
                fi
        else
                # A sanitizer build's root worker is not sealed (guest-users.sh
                # tells): a symlink's owner and times stay, as README.md says.
                ln -s fifo unsealed-link
                fails_with root-touch-h-unsealed "Operation not supported" \
                        touch -h -d '2003-04-05 06:07:08' unsealed-link
        fi
else
        # One owner on the host: the FIFO's mode and times still change.
        check desktop-mkfifo mkfifo -m 0600 dfifo
        check desktop-fifo-chmod chmod 0640 dfifo
        check desktop-fifo-touch touch -d '2001-02-03 04:05:06' dfifo
        same desktop-fifo-attrs "640 981173106" "$(stat -c '%a %Y' dfifo)"
        # A guest user's copies keep a symlink's times: the worker's metadata
        # helper changes them (metadata-helper.h).  A sanitizer build starts
        # none (guest-users.sh tells): then they are not supported, as before.
        D=/tmp/desktop-src
        mkdir -p "$D" && chown "$A_UID:$A_UID" "$D"
        as_a sh -c "cd $D && mkfifo -m 0640 fifo && ln -s fifo link && echo data >file &&
                touch -d '2001-02-03 04:05:06' fifo file && touch -h -d '2002-03-04 05:06:07' link"
        check desktop-mkdir as_a mkdir dcpa
        if [ "${HELPER:-1}" = 1 ]; then
                check desktop-cp-a as_a cp -a "$D/fifo" "$D/link" "$D/file" dcpa
                same desktop-cp-a-attrs "640 981173106 981173106" \
                        "$(stat -c '%a %Y' dcpa/fifo) $(stat -c %Y dcpa/file)"
                check desktop-touch-h as_a touch -h -d '2003-04-05 06:07:08' dcpa/link
                same desktop-touch-h-mtime "$(date -d '2003-04-05 06:07:08' +%s)" "$(stat -c %Y dcpa/link)"
                same desktop-touch-h-target-kept 981173106 "$(stat -c %Y dcpa/fifo)"
                if [ -x /bin/rsync ]; then
                        check desktop-rsync-a as_a rsync -a "$D/" drsync
                        same desktop-rsync-a-link-mtime "$(date -d '2002-03-04 05:06:07' +%s)" \
                                "$(stat -c %Y drsync/link)"
                        same desktop-rsync-a-fifo "640 981173106" "$(stat -c '%a %Y' drsync/fifo)"
                else
                        echo "SKIP desktop-rsync-a: the image has no rsync (build-image.sh)"
                fi
        else
                check desktop-link as_a ln -s fifo dcpa/link
                fails_with desktop-touch-h-no-helper "Operation not supported" \
                        as_a touch -h -d '2003-04-05 06:07:08' dcpa/link
        fi
fi

# -- F_GETLK names the guest process holding the lock
check a-lockfile as_a sh -c 'echo locks >lockfile && chmod 666 lockfile'
check getlk-pid sluice-guest-tool posixlock-pid lockfile

cd /
sync
check umount umount /mnt
echo DONE
