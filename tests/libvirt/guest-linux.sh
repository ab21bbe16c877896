#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/libvirt/guest-linux.sh — guest-linux.h's procedures against a real
# guest: a TCG guest running Debian's qemu-ga (tests/guest/build-image.sh)
# under the system libvirtd, its virtio-fs device served by a sluice-fs this
# script starts itself (no sluice-service), each procedure run by
# guest-linux-tool.  The guest's workload (agent-workload.sh) mounts nothing
# and reports what appears in its mount table, read through the mount.
#
# Checks: mount → the guest reads the host's file; mount again → already
# mounted, fine; a refused mount point, a tag the guest does not have;
# unmount while a guest process sits in the mount → Busy naming it; unmount;
# the fstab line on and off (a mount point with a space); the fstab with
# /etc full (a tmpfs: no page, or one page free) stays byte-identical and
# nothing of Sluice's is left there; a stale "# sluice: tmpfs" mark above
# "tmpfs /tmp tmpfs …" leaves that line alone; and after a
# SIGKILL of the worker with the share mounted and the guest idle: the unplug
# of the old device completes (timings in the log), release takes the dead
# mount away, a new worker on the same socket, re-plug, mount at the same
# place, the guest reads the file again, no VM restart.  Release before the
# unplug is not tried: it hangs the guest's virtio-fs (guest-linux.h).
# Exit: 0 pass, 1 fail, 77 skip (not root, no QEMU/libvirt/kernel, or an
# image without qemu-ga).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=${SLUICE_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
build=${SLUICE_BUILD_ROOT:?SLUICE_BUILD_ROOT must point at the build directory}

. "$top/tests/lib.sh"
. "$here/lib-libvirt.sh"
need_root "starts the system libvirtd"
need_tools libvirtd virsh qemu-system-x86_64 setpriv flock timeout

# One instance per machine (lock.sh says why); the guest with the agent.
libvirt_open --agent "$0" "$@"
tool=$build/tests/libvirt/guest-linux-tool

work=$(mktemp -d /tmp/sluice-guest-linux.XXXXXX)
chmod 755 "$work"

# ---- clean-up ------------------------------------------------------------
fs_pid=
D=sluice-guest-linux
domains=("$D")
trap libvirt_cleanup EXIT

# ---- system libvirtd ----------------------------------------------------------------------
system_libvirtd_setup tests/libvirt/guest-linux.sh || exit 1
vsh() { virsh -q -c qemu:///system "$@"; }
system_libvirtd_start || fail "no system libvirtd"

# ---- the share and its worker (QEMU's user serves it: the socket is owner-only) ------------
tag=docs mnt=/mnt/docs
mkdir -p "$work/bin" "$work/share" "$work/sock"
cp "$build/daemon/sluice-fs" "$work/bin/"
echo "hello from the host" > "$work/share/hello.txt"
chown -R libvirt-qemu: "$work/share" "$work/sock"
sock=$work/sock/fs.sock
fs_runs=0
start_fs() {
        fs_runs=$((fs_runs + 1))
        rm -f "$sock"
        setpriv --reuid=libvirt-qemu --regid=libvirt-qemu --clear-groups -- "$work/bin/sluice-fs" --socket-path="$sock" --shared-dir="$work/share" \
                --tag=$tag >"$work/fs-$fs_runs.log" 2>&1 &
        fs_pid=$!
        wait_for 20 test -S "$sock"
}
fs_xml="<filesystem type='mount' accessmode='passthrough'><driver type='virtiofs' queue='1024'/><source socket='$sock'/><target dir='$tag'/></filesystem>"
echo "$fs_xml" > "$work/fs.xml"
start_fs || fail "sluice-fs did not start: $(cat "$work/fs-1.log")"

# ---- the guest: the agent's channel, the device at boot, a workload that mounts nothing -----
cp "$image/vmlinux" "$work/vmlinux"
"$top/tests/guest/mkcpio.sh" "$work/workload.cpio" "$here/agent-workload.sh:/workload.sh" || exit 1
cat "$image/initrd.cpio" "$work/workload.cpio" > "$work/initrd.cpio"
chmod 644 "$work/vmlinux" "$work/initrd.cpio"
con=$work/console.log
: > "$con"
chmod 666 "$con"
"$top/tests/domain-xml.sh" --kernel "$work/vmlinux" --initrd "$work/initrd.cpio" --console "$con" \
        --agent --device "$fs_xml" $D > "$work/$D.xml" || fail "domain-xml.sh"
if vsh dominfo $D >/dev/null 2>&1; then   # left behind by a killed run (this one holds the lock)
        vsh destroy $D >/dev/null 2>&1
        vsh undefine $D >/dev/null 2>&1
fi
vsh define "$work/$D.xml" >/dev/null || fail "define $D"
t_boot=$EPOCHREALTIME
vsh start $D >/dev/null || fail "start $D"

# the serial console ends its lines with \r\n
count() { tr -d '\r' < "$con" | grep -ac -- "$1" 2>/dev/null || true; }
more_than() { [ "$(count "$1")" -gt "$2" ]; }
last() { tr -d '\r' < "$con" | grep -a -- "$1" | tail -n 1; }
run_tool() { "$tool" qemu:///system $D "$@"; }
agent() { vsh qemu-agent-command $D "$1" 2>&1; }
guest_flag() { # FILE: created in the guest (the workload's control files)
        local h
        h=$(agent "{\"execute\":\"guest-file-open\",\"arguments\":{\"path\":\"$1\",\"mode\":\"w\"}}" |
            sed -n 's/.*"return":\([0-9]*\).*/\1/p')
        [ -n "$h" ] && agent "{\"execute\":\"guest-file-close\",\"arguments\":{\"handle\":$h}}" >/dev/null
}
device_plugged() { vsh dumpxml $D | grep -c "<filesystem" >/dev/null; }
device_gone() { ! device_plugged; }
agent_answers() { run_tool is-mounted $tag $mnt; }

wait_for 240 more_than "^READY " 0 || fail "$D did not boot"
wait_for 90 agent_answers || fail "the guest agent does not answer: $(run_tool is-mounted $tag $mnt 2>&1)"
note "$D booted, its agent answers, in $(since "$t_boot") s"

# ---- mount -------------------------------------------------------------------------------
[ "$(run_tool is-mounted $tag $mnt 2>&1)" = "not mounted" ] && pass "before: not mounted" ||
        fail_later "before: $(run_tool is-mounted $tag $mnt 2>&1)"
mounted=$(count "^MOUNTED $mnt: ")
t=$EPOCHREALTIME
out=$(run_tool mount $tag $mnt 2>&1)
took=$(since "$t")
if [ "$out" = ok ] && wait_for 30 more_than "^MOUNTED $mnt: " "$mounted"; then
        got=$(last "^MOUNTED $mnt: ")
        [ "$got" = "MOUNTED $mnt: hello from the host" ] && pass "mount took $took s; the guest reads the host's file" ||
                fail_later "the guest's read: $got"
else
        fail_later "mount: $out"
fi
out=$(run_tool mount $tag $mnt 2>&1)
[ "$out" = ok ] && [ "$(count "^MOUNTED $mnt: ")" = $((mounted + 1)) ] &&
        pass "mount again: success, nothing mounted twice" || fail_later "mount again: $out"
out=$(run_tool mount $tag /etc/docs 2>&1)
case $out in "error InvalidArgument: "*"/etc/docs"*) pass "refused before the guest: ${out#error }" ;;
        *) fail_later "mount at /etc/docs: $out" ;; esac
t=$EPOCHREALTIME
out=$(run_tool mount nosuch /mnt/nosuch 2>&1)
case $out in "error GuestAgent: "*"does not see the device"*) pass "a tag the guest lacks, after $(since "$t") s: ${out#error }" ;;
        *) fail_later "mount of a missing tag: $out" ;; esac

# ---- busy, then unmount ---------------------------------------------------------------------
held=$(count "^HOLDING pid=")
guest_flag /tmp/ctl-hold
if wait_for 30 more_than "^HOLDING pid=" "$held"; then
        pid=$(last "^HOLDING pid=" | sed 's/^HOLDING pid=\([0-9]*\).*/\1/')
        out=$(run_tool unmount $tag $mnt 2>&1)
        case $out in "error Busy: $mnt is in use in the guest by "*"sleep (pid "*) pass "busy: ${out#error }" ;;
                *) fail_later "unmount of a busy mount (holder pid $pid): $out" ;; esac
        [ "$(run_tool is-mounted $tag $mnt 2>&1)" = mounted ] && pass "still mounted after the refusal" ||
                fail_later "after the refused unmount: $(run_tool is-mounted $tag $mnt 2>&1)"
        released=$(count "^RELEASED")
        guest_flag /tmp/ctl-release
        wait_for 30 more_than "^RELEASED" "$released" || fail_later "the guest did not release the mount"
else
        fail_later "the guest did not hold the mount"
fi
out=$(run_tool unmount $tag $mnt 2>&1)
[ "$out" = ok ] && wait_for 30 more_than "^UNMOUNTED $mnt\$" 0 && pass "unmount" || fail_later "unmount: $out"
out=$(run_tool unmount $tag $mnt 2>&1)
[ "$out" = ok ] && pass "unmount when not mounted: success" || fail_later "unmount again: $out"

# ---- the fstab line ---------------------------------------------------------------------------
fstab() { # prints the guest's /etc/fstab, as its workload reads it
        local n; n=$(count "^FSTAB-END")
        guest_flag /tmp/ctl-fstab
        wait_for 30 more_than "^FSTAB-END" "$n" || return 1
        tr -d '\r' < "$con" | awk -v n="$n" '/^FSTAB-END/ { seen++; next } seen == n && /^FSTAB: / { sub(/^FSTAB: /, ""); print }'
}
before=$(fstab)
spaced="/mnt/my docs"
out1=$(run_tool fstab-on $tag "$spaced" 2>&1) out2=$(run_tool fstab-on $tag "$spaced" 2>&1)
on=$(fstab)
want=$(printf '%s\n%s' "# sluice: $tag" "$tag /mnt/my\\040docs virtiofs defaults,nofail 0 0")
case $on in *"$want") [ "$(grep -c "^# sluice: $tag\$" <<<"$on")" = 1 ] && pass "fstab on (twice): $(tail -n 1 <<<"$on")" ||
                        fail_later "fstab has the line twice: $on" ;;
        *) fail_later "fstab on ($out1, $out2): $on" ;; esac
out=$(run_tool fstab-off $tag "$spaced" 2>&1)
off=$(fstab)
[ "$out" = ok ] && [ "$off" = "$before" ] && pass "fstab off: the file as it was" || fail_later "fstab off ($out): $off"

# ---- the fstab when something goes wrong -------------------------------------------------------
# guest_sh SCRIPT: runs it with the guest's /bin/sh through the agent (test
# set-up only: Sluice itself runs no shell); prints its output, fails with
# its exit status.
guest_exec_pid=
guest_exec_reply=
guest_exec_done() {
        guest_exec_reply=$(agent "{\"execute\":\"guest-exec-status\",\"arguments\":{\"pid\":$guest_exec_pid}}")
        case $guest_exec_reply in *'"exited":true'*) return 0 ;; esac
        return 1
}
guest_sh() {
        local script code
        script=$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' | awk '{ printf "%s\\n", $0 }')
        guest_exec_pid=$(agent "{\"execute\":\"guest-exec\",\"arguments\":{\"path\":\"/bin/sh\",\"arg\":[\"-c\",\"$script\"],\"capture-output\":true}}" |
                sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
        [ -n "$guest_exec_pid" ] || return 1
        wait_for 30 guest_exec_done || return 1
        sed -n 's/.*"out-data":"\([^"]*\)".*/\1/p' <<<"$guest_exec_reply" | base64 -d
        code=$(sed -n 's/.*"exitcode":\([0-9]*\).*/\1/p' <<<"$guest_exec_reply")
        return "${code:-1}"
}
fstab_sum() { guest_sh 'md5sum < /etc/fstab; wc -c < /etc/fstab' | tr -s '\n -' ' '; }
guest_sh 'cp /etc/fstab /tmp/fstab.sluice-test 2>/dev/null || : > /tmp/fstab.sluice-test' ||
        fail_later "cannot keep the guest's fstab"

# (1) a full /etc: a tmpfs of 16 pages, an fstab of one nearly full page
# that Sluice's line makes two, then every page taken (FREE=0) or all but
# one (FREE=1).  FREE=0: the copy fails (an in-place rewrite frees the old
# page, writes one and fails on the second: the file cut after 4096 bytes);
# FREE=1: the copy fits, the new file's second page does not, and qemu-ga
# reports ENOSPC at guest-file-close, after the first page went to disk.
full_etc() { # FREE
        guest_sh "mount -t tmpfs -o size=64k sluice-full /etc &&
                i=0; while [ \$i -lt 80 ]; do echo '# a padding line, for an fstab of one nearly full page' >> /etc/fstab; i=\$((i + 1)); done &&
                head -c 4090 /etc/fstab > /etc/fstab.x && mv /etc/fstab.x /etc/fstab &&
                i=0; while dd if=/dev/zero of=/etc/fill\$i bs=4096 count=1 2>/dev/null; do i=\$((i + 1)); done
                rm -f /etc/fill\$i
                [ $1 = 0 ] || rm /etc/fill0"
}
for free in 0 1; do
        if ! full_etc $free >/dev/null; then
                fail_later "full /etc ($free free): the guest could not set it up"
                guest_sh 'umount /etc' >/dev/null 2>&1
                continue
        fi
        before=$(fstab_sum)
        out=$(run_tool fstab-on $tag /mnt/docs 2>&1)
        after=$(fstab_sum)
        left=$(guest_sh 'ls -a /etc | grep -c fstab.sluice')
        guest_sh 'umount /etc' >/dev/null || fail_later "full /etc: cannot unmount the tmpfs"
        case $out in
        "error GuestAgent: "*"/etc/fstab is unchanged"*)
                [ "$after" = "$before" ] && [ "$left" = 0 ] &&
                        pass "full /etc ($free page free): fstab byte-identical ($(head -n 1 <<<"$before" | cut -c1-8)…), no file left: ${out#error }" ||
                        fail_later "full /etc ($free page free): fstab $before → $after, Sluice's files left: $left" ;;
        *) fail_later "full /etc ($free page free): $out (fstab $before → $after)" ;;
        esac
done

# (2) a mark whose entry an administrator deleted, above their own line
# that starts with the tag (a share of a folder named "tmpfs")
guest_sh 'printf "# sluice: tmpfs\ntmpfs /tmp tmpfs defaults,size=2G 0 0\n" >> /etc/fstab' ||
        fail_later "cannot plant the stale mark"
out1=$(run_tool fstab-on tmpfs /mnt/tmpfs 2>&1)
on=$(guest_sh 'cat /etc/fstab')
out2=$(run_tool fstab-off tmpfs /mnt/tmpfs 2>&1)
off=$(guest_sh 'cat /etc/fstab')
if [ "$out1" = ok ] && [ "$out2" = ok ] && grep -qx 'tmpfs /tmp tmpfs defaults,size=2G 0 0' <<<"$on" &&
   grep -qx 'tmpfs /mnt/tmpfs virtiofs defaults,nofail 0 0' <<<"$on" && [ "$(grep -c '^# sluice: tmpfs$' <<<"$on")" = 1 ] &&
   grep -qx 'tmpfs /tmp tmpfs defaults,size=2G 0 0' <<<"$off" && ! grep -q '^# sluice' <<<"$off"; then
        pass "a stale mark above 'tmpfs /tmp tmpfs …': the line survives Sluice's line on and off"
else
        fail_later "stale mark: on ($out1): $(tr '\n' '|' <<<"$on"); off ($out2): $(tr '\n' '|' <<<"$off")"
fi
guest_sh 'cp /tmp/fstab.sluice-test /etc/fstab' || fail_later "cannot restore the guest's fstab"

# ---- the worker dies with the share mounted, the guest idle ---------------------------------------
# crash_cycle HOW: HOW is "detach-first" (unplug, then release what is left)
# or "release-first" (what the service does: release, then unplug).
crash_cycle() {
        local how=$1 mounted t out gone_after= left
        mounted=$(count "^MOUNTED $mnt: ")
        out=$(run_tool mount $tag $mnt 2>&1)
        [ "$out" = ok ] && [ "$(run_tool is-mounted $tag $mnt 2>&1)" = mounted ] || { fail_later "$how: mount: $out"; return; }
        # idle means idle: the guest reads hello.txt through every new mount,
        # and a read still in flight at the kill holds the device in the
        # guest (see share-attachment.h); kill once it has reported the read
        wait_for 30 more_than "^MOUNTED $mnt: " "$mounted" || fail_later "$how: the guest did not see the mount"
        kill -KILL "$fs_pid"; wait "$fs_pid" 2>/dev/null; fs_pid=
        note "$how: worker SIGKILLed, the share mounted, the guest idle"
        t=$EPOCHREALTIME
        if [ "$how" = release-first ]; then
                out=$(G_MESSAGES_DEBUG=all run_tool release $tag $mnt 2>&1 | tr '\n' ' ')
                note "$how: release: $out ($(since "$t") s)"
                t=$EPOCHREALTIME
        fi
        timeout 60 virsh -q -c qemu:///system detach-device $D "$work/fs.xml" --live >"$work/detach.out" 2>&1
        note "$how: virsh detach-device returned $? after $(since "$t") s: $(tr '\n' ' ' < "$work/detach.out")"
        if wait_for 20 device_gone; then
                gone_after=$(since "$t")
                note "$how: the old device left the guest $gone_after s after the detach"
        else
                note "$how: the old device is still in the guest 20 s after the detach"
        fi
        left=$(last "^MOUNTS-AFTER-GONE: ")
        [ -n "$left" ] && note "$how: the guest's virtiofs mounts when the device went: ${left#MOUNTS-AFTER-GONE: }"
        if [ "$how" = detach-first ]; then
                t=$EPOCHREALTIME
                out=$(G_MESSAGES_DEBUG=all run_tool release $tag $mnt 2>&1 | tr '\n' ' ')
                note "$how: release after the detach: $out ($(since "$t") s)"
                if [ -z "$gone_after" ] && wait_for 30 device_gone; then
                        gone_after=$(since "$t")
                        note "$how: the old device left $gone_after s after the release"
                fi
        fi
        [ -n "$gone_after" ] && pass "$how: the old device went without a VM restart" ||
                { fail_later "$how: the old device never left the guest"; return; }
        [ "$(run_tool is-mounted $tag $mnt 2>&1)" = "not mounted" ] && pass "$how: no dead mount left at $mnt" ||
                fail_later "$how: after the release: $(run_tool is-mounted $tag $mnt 2>&1)"
        start_fs || { fail_later "$how: a new sluice-fs did not start"; return; }
        mounted=$(count "^MOUNTED $mnt: ")
        t=$EPOCHREALTIME
        vsh attach-device $D "$work/fs.xml" --live >/dev/null || { fail_later "$how: re-attach"; return; }
        out=$(run_tool mount $tag $mnt 2>&1)
        if [ "$out" = ok ] && wait_for 30 more_than "^MOUNTED $mnt: " "$mounted"; then
                got=$(last "^MOUNTED $mnt: ")
                [ "$got" = "MOUNTED $mnt: hello from the host" ] && [ "$(count "^READY ")" = 1 ] &&
                        pass "$how: re-plugged and mounted again at $mnt in $(since "$t") s, the guest reads the file, no VM restart" ||
                        fail_later "$how: after the re-plug: $got, boots $(count "^READY ")"
        else
                fail_later "$how: mount after the re-plug: $out"
        fi
}
crash_cycle detach-first

out=$(run_tool unmount $tag $mnt 2>&1)
[ "$out" = ok ] && pass "unmounted at the end" || fail_later "final unmount: $out"
finish
