# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of tests/libvirt/test-worker-resume.sh (runs as /workload.sh in
# the busybox test guest, /bin/resume-probe beside it).  The tag comes from
# the kernel command line (sluice_tag=TAG).  Once the share's device is there
# it mounts it and runs, in order, the phases the host starts by creating
# GO-<phase> in the share (or skips it: SKIP-<phase>) and ends by creating
# STOP-<phase> (the guest polls with stat, an operation safe across a crash):
#   touch   resume-probe's read loop on hello.txt (one kill: the loop must not
#           see an error)
#   pause   the same loop (20 kills: its GAP lines are the pause per crash)
#   work    the mixed workload below (20 kills)
# Lines on the console: READY, MOUNTED, STARTED <phase>, the probe's lines,
# ENDED <phase>; for work: FAIL <what> for an error of an operation safe to run
# twice (none allowed), EIO <what> for an operation that makes, removes or
# renames a name (allowed: a request of it in flight at a kill, answered EIO),
# and at the end SUM <file> <md5> (what the share's data files must hold) and
# RESULT rounds=R idem_errors=E eio=N other_errors=O held=ok|bad.
tag=$(sed -n 's/.*sluice_tag=\([^ ]*\).*/\1/p' /proc/cmdline)
mnt=/mnt/$tag
mkdir -p "$mnt"
has_dev() { ls /sys/bus/virtio/drivers/virtiofs/ 2>/dev/null | grep -q '^virtio'; }
echo "READY tag=$tag"
until has_dev; do sleep 0.1; done
# the device shows up before the host side may be ready: retry (bounded)
ok=
for _ in $(seq 1 100); do
        if mount -t virtiofs "$tag" "$mnt" 2>/dev/null; then ok=1; break; fi
        sleep 0.1
done
[ -n "$ok" ] || { echo "FAIL mount: $(mount -t virtiofs "$tag" "$mnt" 2>&1)"; exit 1; }
echo "MOUNTED"

# wait_go PHASE — 0 once the host created GO-PHASE, 1 for SKIP-PHASE
wait_go() {
        until [ -e "$mnt/GO-$1" ] || [ -e "$mnt/SKIP-$1" ]; do sleep 0.1; done
        [ -e "$mnt/GO-$1" ] || return 1
        echo "STARTED $1"
}

for phase in touch pause; do
        wait_go $phase || continue
        /bin/resume-probe readloop "$mnt/hello.txt" "$mnt/STOP-$phase"
        echo "ENDED $phase"
done

# ---- work -----------------------------------------------------------------
# Data files are rewritten 4 KiB at a time at an offset in place (dd
# conv=notrunc: OPEN without O_TRUNC, WRITE at an offset: both run again after
# a crash), mirrored in /tmp; names are made, renamed and removed in names/
# (CREATE, MKDIR, RENAME, UNLINK, RMDIR: answered EIO when in flight at a
# crash, and then the name may or may not have changed, so the loop looks
# which one is there).
# the guest stays up when done: the host reads the live domain XML afterwards
idle() { while :; do sleep 60; done; }
wait_go work || idle
w=$mnt/work
idem=0 eio=0 other=0 rounds=0
fail() { idem=$((idem + 1)); echo "FAIL $*"; }
# a name operation's error: EIO is allowed (counted), anything else is not
name_err() { # WHAT ERRFILE
        if grep -q "I/O error" "$2"; then
                eio=$((eio + 1)); echo "EIO $1"
        else
                other=$((other + 1)); echo "FAIL name $1: $(cat "$2")"
        fi
}
sum() { md5sum "$1" 2>/tmp/err | cut -d' ' -f1; }
mkdir -p /tmp/mirror
for k in 0 1 2 3; do
        cp "$w/data$k" "/tmp/mirror/data$k" || fail "copy data$k"
done
# the held file: open for the whole phase on fd 3, read through it at the end
exec 3< "$w/held"
held_sum=$(sum "$w/held")
cur=$w/names/a
# what ls -R of the tree prints, counted before the first kill
tree_lines=$(ls -R "$w/tree" | wc -l)
echo "WORKING tree_lines=$tree_lines"
while [ ! -e "$mnt/STOP-work" ]; do
        rounds=$((rounds + 1))
        k=$((rounds % 4)) off=$((rounds * 7 % 64))
        head -c 4096 /dev/urandom > /tmp/blk
        dd if=/tmp/blk of="$w/data$k" bs=4096 seek=$off count=1 conv=notrunc 2>/tmp/err ||
                fail "write data$k at block $off: $(cat /tmp/err)"
        dd if=/tmp/blk of="/tmp/mirror/data$k" bs=4096 seek=$off count=1 conv=notrunc 2>/dev/null
        got=$(sum "$w/data$k")
        [ -n "$got" ] || fail "read data$k: $(cat /tmp/err)"
        [ "$got" = "$(sum "/tmp/mirror/data$k")" ] || fail "data$k differs after round $rounds"
        stat "$w/tree" >/dev/null 2>/tmp/err || fail "stat tree: $(cat /tmp/err)"
        n=$(ls -R "$w/tree" 2>/tmp/err | wc -l)
        [ -s /tmp/err ] && fail "ls -R: $(cat /tmp/err)"
        [ "$n" = "$tree_lines" ] || fail "ls -R saw $n lines, not $tree_lines"
        cat "$w/tree/d1/f1" >/dev/null 2>/tmp/err || fail "read tree/d1/f1: $(cat /tmp/err)"
        # names: create, rename, remove (the name in $cur is the one that exists)
        new=$w/names/n$rounds
        if cp /tmp/blk "$new" 2>/tmp/err; then
                [ -e "$new" ] || fail "n$rounds missing after its create"
        else
                name_err "create n$rounds" /tmp/err
        fi
        if ! mv "$cur" "$w/names/b$rounds" 2>/tmp/err; then name_err "rename to b$rounds" /tmp/err; fi
        if [ -e "$w/names/b$rounds" ]; then cur=$w/names/b$rounds
        elif [ ! -e "$cur" ]; then fail "the renamed file is under neither name (round $rounds)"; fi
        rm -f "$new" 2>/tmp/err || name_err "remove n$rounds" /tmp/err
        if [ $((rounds % 5)) = 0 ]; then
                mkdir "$w/names/dir$rounds" 2>/tmp/err || name_err "mkdir dir$rounds" /tmp/err
                if [ -d "$w/names/dir$rounds" ]; then
                        rmdir "$w/names/dir$rounds" 2>/tmp/err || name_err "rmdir dir$rounds" /tmp/err
                fi
        fi
done
# the held descriptor still reads the same file
held=bad
[ "$(md5sum <&3 | cut -d' ' -f1)" = "$held_sum" ] && held=ok
exec 3<&-
sync
for k in 0 1 2 3; do
        echo "SUM data$k $(sum "/tmp/mirror/data$k")"
done
echo "RESULT rounds=$rounds idem_errors=$idem eio=$eio other_errors=$other held=$held"
echo "ENDED work"
idle
