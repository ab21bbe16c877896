#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bigtree-workload.sh — /workload.sh of the big-tree guest (see bench/bigtree.sh).
#
# The host hands the guest an uncompressed tar of a real source tree as the
# read-only disk /dev/vda (decompressing xz under TCG would be the whole
# measurement) and watches the console: each phase is bracketed by
#   BIGTREE-MARK NAME start UPTIME
#   BIGTREE-MARK NAME end UPTIME STATUS
# lines, at which the host samples the daemon's CPU time and descriptors.
# Caches are dropped before every phase, outside the brackets, so that each
# phase starts cold and looks every inode up again.
#
# Environment: BIGTREE_GREP (the fixed string grep -r looks for),
# BIGTREE_PHASE_TIMEOUT (seconds per phase), BIGTREE_9P_CACHE (9p cache mode),
# BIGTREE_DROP_EVERY (seconds: drop the dentry and inode caches that often while
# a phase runs; 0 = never).
set -u
. /workload-lib.sh

timeout_s=${BIGTREE_PHASE_TIMEOUT:-1800}
needle=${BIGTREE_GREP:-virtio_fs}
drop_every=${BIGTREE_DROP_EVERY:-0}
phases=,${BIGTREE_PHASES:-extract,walk,du,grep,rm},

if [ "$SLUICE_FSTYPE" = 9p ]; then
        mount -t 9p -o "trans=virtio,version=9p2000.L,msize=512000,cache=${BIGTREE_9P_CACHE:-mmap}" \
                "$SLUICE_TAG" /mnt || give_up mount "9p mount failed"
else
        mount_share
fi
grep " /mnt " /proc/mounts | sed 's/^/INFO mount /'
echo "INFO guest kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) vCPU(s), $(awk '/MemTotal/ { print $2 }' /proc/meminfo) KiB"

# The tar disk: Linux 6.12 has virtio_blk as a module (shipped by the host).
[ -f /lib/bigtree/virtio_blk.ko ] && insmod /lib/bigtree/virtio_blk.ko 2>/dev/null
for _ in $(seq 1 100); do
        [ -b /dev/vda ] && break
        sleep 0.1
done
[ -b /dev/vda ] || give_up disk "no /dev/vda (the tar disk)"

mark() {   # NAME start|end [STATUS]
        read -r up _ </proc/uptime
        echo "BIGTREE-MARK $1 $2 $up${3:+ $3}"
}
cold() {
        sync
        echo 3 >/proc/sys/vm/drop_caches
}
# phase NAME SHELL-COMMAND — the command's output goes to /tmp/NAME.out, its
# errors to /tmp/NAME.err (the first lines are printed after the end mark)
phase() {
        name=$1
        case "$phases" in *",$name,"*) ;; *) rc=0; return 0 ;; esac
        cold
        dropper=
        if [ "$drop_every" -gt 0 ]; then
                # Keeps the inodes the guest knows (each a descriptor in the daemon) few.
                (while sleep "$drop_every"; do echo 2 >/proc/sys/vm/drop_caches; done) &
                dropper=$!
        fi
        mark "$name" start
        timeout -s KILL "$timeout_s" sh -c "$2" >"/tmp/$name.out" 2>"/tmp/$name.err"
        rc=$?
        mark "$name" end "$rc"
        [ -z "$dropper" ] || { kill "$dropper"; wait "$dropper"; } 2>/dev/null
        if [ -s "/tmp/$name.err" ]; then
                echo "INFO $name: $(wc -l <"/tmp/$name.err") error line(s), first:"
                head -n 5 "/tmp/$name.err" | sed "s/^/INFO $name err: /"
        fi
        return $rc
}

mkdir /mnt/bigtree || give_up mkdir "cannot create /mnt/bigtree"
# -o: not restoring the owner, as a user's tar does (the tree belongs to root).
if phase extract "cd /mnt/bigtree && tar -xo -f /dev/vda"; then pass extract; else fail extract "tar exited $rc"; fi
# find | xargs stat; find's list is kept in the guest's tmpfs for the count.
if phase walk "find /mnt/bigtree >/tmp/list && xargs stat </tmp/list >/dev/null"; then
        pass walk
else
        fail walk "status $rc"
fi
[ ! -f /tmp/list ] || echo "RESULT walk entries $(wc -l </tmp/list)"
if phase du "du -s /mnt/bigtree"; then pass du; else fail du "status $rc"; fi
[ ! -f /tmp/du.out ] || echo "RESULT du $(cut -f1 /tmp/du.out)"
# GNU grep when the host shipped it (busybox grep is several times slower per
# byte, which under TCG would make this phase the guest's matcher, not the share).
grep_cmd="grep"
[ -x /usr/bin/grep-gnu ] && grep_cmd=/usr/bin/grep-gnu
if phase grep "$grep_cmd -rF -- '$needle' /mnt/bigtree | wc -l"; then pass grep; else fail grep "status $rc"; fi
[ ! -f /tmp/grep.out ] || echo "RESULT grep $(tail -n 1 /tmp/grep.out) lines with '$needle' ($grep_cmd)"
if phase rm "rm -rf /mnt/bigtree"; then pass rm; else fail rm "status $rc"; fi
case "$phases" in *,rm,*) same empty-after-rm "" "$(ls -A /mnt)" ;; esac
# The host samples the daemon at the last mark: the virtiofsds exit as soon as
# QEMU has gone, so the guest waits before it powers off.
sleep 3
# No umount: after the removal QEMU 7.2's legacy virtiofsd leaves umount
# blocked for minutes (seen here, the kernel's hung-task warning), and
# /init's poweroff ends the guest as well.
echo DONE
