#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/libvirt/guest-agent.sh — the share appears in the guest by itself:
# sluice-service against a real system libvirtd and TCG guests that run the
# QEMU guest agent (tests/guest/build-image.sh puts Debian's qemu-ga in the
# image; tests/guest/init.sh starts it), through the D-Bus API and sluicectl.
# The guests' workload (agent-workload.sh) mounts nothing: it reports what
# appears in its mount table and what leaves it.
#
# Checks (one Linux guest G with the agent for most of them):
#  (a) Vm.GuestAgent "ready", GuestOsType "linux", GuestOsName, `sluicectl
#      vms`; a VM without the channel: "none", EnableGuestAgent() puts it in
#      the persistent definition and says "next boot";
#  (b) AddShare with attach → GuestState "mounted", GuestPath "/mnt/TAG", the
#      guest reads the host's file there; `sluicectl list` shows the path;
#  (d) something in the guest uses the mount → Detach fails with .Busy naming
#      it, the share stays attached and mounted; released → Detach works;
#  (c) Detach → unmounted before the unplug (no dead mount left), GuestPath "";
#  (g) MountAtBoot → Sluice's line in the guest's /etc/fstab; RemoveShare
#      removes it and unmounts before the unplug;
#  (e) the worker SIGKILLed while mounted → the guest reads the share again at
#      the same path, no VM restart;
#  (f) a guest whose agent blocks guest-exec (RHEL's default policy) →
#      GuestAgent "restricted" naming guest-exec, the share attaches with
#      today's hint;
#  (h) a pretend Windows guest (tests/guest/qga-windows.c): drive Z: through
#      VirtioFsSvc set to automatic and started, a second share through a
#      WinFsp launcher instance at Y:, the stop before the unplug; an agent
#      error holding terminal escapes and non-UTF-8 → a printable Error over
#      D-Bus and in `sluicectl list`; a guest without WinFsp → an Error
#      naming what to install;
#  (i) revocation never depends on the guest: a guest whose agent lies
#      (tests/guest/qga-windows.c --os linux, one guest, its mode switched
#      between cases): umount says "target is busy" though nothing holds it
#      (Stop fails with .Busy offering force; `sluicectl stop --force` ends
#      it), guest-file-read sends one byte at a time and never eof, the agent
#      falls silent, the agent answers garbage.  Each time the Stop ends
#      within 20 s (TCG) with the share "stopped", its worker gone, no
#      filesystem of it left in the VM's live XML, and (but for busy) Error
#      saying the guest did not answer.
# Exit: 0 pass, 1 fail, 77 skip (not root, no QEMU/libvirt/kernel, or an
# image without qemu-ga).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=${SLUICE_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
build=${SLUICE_BUILD_ROOT:?SLUICE_BUILD_ROOT must point at the build directory}

. "$top/tests/lib.sh"
. "$here/lib-libvirt.sh"
need_root "starts the system libvirtd"
need_tools libvirtd virsh qemu-system-x86_64 dbus-daemon gdbus setfacl runuser setpriv flock base64

user=${SLUICE_TEST_USER:-sluice-test}
ensure_user "$user"

# One instance per machine (lock.sh says why); the guest with the agent.
libvirt_open --agent "$0" "$@"
windows_fake=
# (the whole listing first: grep -q would end the pipe early, and pipefail)
files=$(cpio -t --quiet < "$image/initrd.cpio" 2>/dev/null)
grep -qx 'bin/sluice-qga-windows' <<<"$files" && windows_fake=1

work=$(mktemp -d /tmp/sluice-agent.XXXXXX)
chmod 755 "$work"

# ---- clean-up ------------------------------------------------------------
service_pid= session_bus_pid=
domains=()
trap libvirt_cleanup EXIT

# ---- system libvirtd ----------------------------------------------------------------------
system_libvirtd_setup tests/libvirt/guest-agent.sh || exit 1
system_libvirtd_start "$user" || fail "no system libvirtd for $user"

# ---- session bus and sluice-service as the test user ----------------------------
libvirt_user_session
"${as_user[@]}" SLUICE_FS="$work/bin/sluice-fs" SLUICE_LIBVIRT_URIS=qemu:///system \
        G_MESSAGES_DEBUG="${SLUICE_DEBUG:-}" "$work/bin/sluice-service" >>"$work/service.log" 2>&1 &
service_pid=$!
wait_for 60 runu gdbus introspect --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 >/dev/null 2>&1 ||
        fail "sluice-service did not come up"

# ---- guests -----------------------------------------------------------------------
cp "$image/vmlinux" "$work/vmlinux"
"$top/tests/guest/mkcpio.sh" "$work/workload.cpio" "$here/agent-workload.sh:/workload.sh" || exit 1
cat "$image/initrd.cpio" "$work/workload.cpio" > "$work/initrd.cpio"
chmod 644 "$work/vmlinux" "$work/initrd.cpio"

share_dir=$work/share
mkdir -p "$share_dir"
echo "hello from the host" > "$share_dir/hello.txt"
chown -R "$user:" "$share_dir"

# All guests boot at once (each takes 20-40 s under TCG): G, the Linux guest
# with the agent; R, whose agent blocks guest-exec; W and W2, pretend Windows
# (W2 without WinFsp); N, no agent channel, is never started.
G=sluice-qga-g R=sluice-qga-r W=sluice-qga-w W2=sluice-qga-w2 N=sluice-qga-n L=sluice-qga-l
define $G --agent || fail "define $G"
define $R --agent --cmdline "sluice_qga_block=guest-exec" || fail "define $R"
define $N || fail "define $N"
guests=($G $R)
if [ -n "$windows_fake" ]; then
        define $W --agent --cmdline "sluice_qga=windows sluice_qga_error_escapes=wesc" || fail "define $W"
        define $W2 --agent --cmdline "sluice_qga=windows sluice_qga_missing=winfsp" || fail "define $W2"
        define $L --agent --cmdline "sluice_qga=liar" || fail "define $L"
        guests+=($W $W2 $L)
fi
t_boot=$(date +%s.%N)
for d in "${guests[@]}"; do vsh start "$d" >/dev/null || fail "start $d"; done
wait_for 240 booted $G || fail "$G did not boot"
note "$G booted to its workload in $(since "$t_boot") s"

# ---- (a) knowing the guest ---------------------------------------------------------------
wait_for 30 has_vm $G || fail "no Vm object for $G"
vmG=$(vm_path $G)
if wait_for 90 vm_prop_is "$vmG" GuestAgent ready; then
        os_type=$(vmp "$vmG" GuestOsType) os_name=$(vmp "$vmG" GuestOsName)
        [ "$os_type" = linux ] && [ -n "$os_name" ] && pass "Vm $G: GuestAgent ready, GuestOsType linux, GuestOsName '$os_name'" ||
                fail_later "Vm $G: GuestOsType '$os_type', GuestOsName '$os_name'"
        vms=$(runu "$work/bin/sluicectl" vms 2>&1)
        line=$(echo "$vms" | grep -- "$G")
        case $line in *ready*"$os_name"*|*"$os_name"*ready*) pass "sluicectl vms: $line" ;;
                *) fail_later "sluicectl vms does not show the agent and the OS of $G: $vms" ;; esac
else
        fail_later "Vm $G: GuestAgent '$(vmp "$vmG" GuestAgent)' ($(vmp "$vmG" GuestAgentMessage))"
fi
wait_for 30 has_vm $N || fail_later "no Vm object for $N"
vmN=$(vm_path $N)
if [ "$(vmp "$vmN" GuestAgent)" = none ]; then
        pass "Vm $N without the channel: GuestAgent none ($(vmp "$vmN" GuestAgentMessage))"
else
        fail_later "Vm $N: GuestAgent '$(vmp "$vmN" GuestAgent)'"
fi
msg=$(call "$vmN" org.sluice.Sluice1.Vm.EnableGuestAgent 2>&1)
# (not `| grep -q`: pipefail would count virsh's SIGPIPE against it)
if vsh dumpxml --inactive $N | grep -c "org.qemu.guest_agent.0" >/dev/null; then
        case $msg in *"next boot"*) pass "EnableGuestAgent: the channel is in $N's definition: $msg" ;;
                *) fail_later "EnableGuestAgent's message: $msg" ;; esac
else
        fail_later "EnableGuestAgent did not add the channel: $msg; $N's definition: $(vsh dumpxml --inactive $N | grep -A3 '<channel' | tr '\n' ' ')"
fi

# ---- (b) attached → mounted in the guest by the service ---------------------------------------
tagG=docs
mnt=/mnt/$tagG
mounted=$(count "$(console $G)" "^MOUNTED $mnt: ")
shareG=$(add_share "$share_dir" $G $tagG "'attach': <true>")
[ -n "$shareG" ] || fail "AddShare on $G"
if wait_for 90 share_prop_is "$shareG" GuestState mounted; then
        [ "$(shp "$shareG" GuestPath)" = "$mnt" ] && pass "GuestState mounted, GuestPath $mnt" ||
                fail_later "GuestPath '$(shp "$shareG" GuestPath)', not $mnt"
else
        fail_later "not mounted in $G: $(share_info "$shareG")"
fi
if wait_for 30 more_than "$(console $G)" "^MOUNTED $mnt: " "$mounted"; then
        got=$(last "$(console $G)" "^MOUNTED $mnt: ")
        [ "$got" = "MOUNTED $mnt: hello from the host" ] && pass "the guest reads the host's file at $mnt (its workload mounts nothing)" ||
                fail_later "the guest's read: $got"
else
        fail_later "no virtiofs mount appeared in $G"
fi
list=$(runu "$work/bin/sluicectl" list 2>&1)
case $list in *"$mnt"*) pass "sluicectl list shows $mnt" ;; *) fail_later "sluicectl list: $list" ;; esac
runu "$work/bin/sluicectl" list --json 2>/dev/null | grep -c "\"$mnt\"" >/dev/null && pass "sluicectl list --json shows $mnt" ||
        fail_later "sluicectl list --json: $(runu "$work/bin/sluicectl" list --json 2>&1)"

# ---- (d) busy: something in the guest uses the mount --------------------------------------
held=$(count "$(console $G)" "^HOLDING pid=")
guest_flag $G /tmp/ctl-hold
if wait_for 30 more_than "$(console $G)" "^HOLDING pid=" "$held"; then
        err=$(call "$shareG" org.sluice.Sluice1.Share.Detach 2>&1)
        case $err in
        *org.sluice.Sluice1.Error.Busy*sleep*) pass "Detach while a guest process is in the mount: ${err#*Error.}" ;;
        *) fail_later "Detach of a busy mount: $err" ;;
        esac
        state=$(shp "$shareG" State) gstate=$(shp "$shareG" GuestState)
        [ "$state" = attached ] && [ "$gstate" = mounted ] && ! more_than "$(console $G)" "^GONE " 0 &&
                pass "after the refused Detach the share is still attached and mounted" ||
                fail_later "after the refused Detach: $(share_info "$shareG")"
        released=$(count "$(console $G)" "^RELEASED")
        guest_flag $G /tmp/ctl-release
        wait_for 30 more_than "$(console $G)" "^RELEASED" "$released" || fail_later "the guest did not release the mount"
else
        fail_later "the guest did not hold the mount"
fi

# ---- (c) detach: unmounted before the unplug ------------------------------------------------
gone=$(count "$(console $G)" "^GONE ")
unmounted=$(count "$(console $G)" "^UNMOUNTED $mnt\$")
if call "$shareG" org.sluice.Sluice1.Share.Detach >/dev/null; then
        if wait_for 30 more_than "$(console $G)" "^GONE " "$gone"; then
                after=$(last "$(console $G)" "^MOUNTS-AFTER-GONE: ")
                # the unmount and the unplug may fall between two of the
                # guest's looks: its UNMOUNTED line can follow GONE's
                [ "$after" = "MOUNTS-AFTER-GONE: none" ] &&
                        wait_for 10 more_than "$(console $G)" "^UNMOUNTED $mnt\$" "$unmounted" &&
                        pass "detach: unmounted in the guest before the unplug (no dead mount left)" ||
                        fail_later "detach left a mount behind: $after"
        else
                fail_later "detach: the device did not leave $G"
        fi
        [ -z "$(shp "$shareG" GuestPath)" ] && [ -z "$(shp "$shareG" GuestState)" ] &&
                pass "after the detach: GuestPath and GuestState empty" || fail_later "after the detach: $(share_info "$shareG")"
else
        fail_later "Detach: $(call "$shareG" org.sluice.Sluice1.Share.Detach 2>&1)"
fi

# ---- (g) mount at every boot: Sluice's /etc/fstab line ---------------------------------------
fstab() { # DOMAIN → the guest's /etc/fstab, as its workload prints it
        local n; n=$(count "$(console "$1")" "^FSTAB-END")
        guest_flag "$1" /tmp/ctl-fstab
        wait_for 30 more_than "$(console "$1")" "^FSTAB-END" "$n" || return 1
        lines "$(console "$1")" |
                awk -v n="$n" '/^FSTAB-END/ { seen++; next } seen == n && /^FSTAB: / { sub(/^FSTAB: /, ""); print }'
}
# Sluice's line: "TAG MOUNTPOINT virtiofs …nofail…" next to its mark "# sluice: TAG"
sluice_line() {
        fstab "$1" | awk -v mark="# sluice: $tagG" -v tag="$tagG" -v mnt="$mnt" '
                { line[NR] = $0; entry[NR] = ($1 == tag && $2 == mnt && $3 == "virtiofs" && $4 ~ /nofail/) }
                END { for (i = 1; i <= NR; i++)
                              if (entry[i] && (line[i - 1] == mark || line[i + 1] == mark)) { print line[i]; found = 1 }
                      exit !found }'
}
no_sluice_mark() { local tab; tab=$(fstab "$1") && ! grep -q "# sluice" <<<"$tab"; }
# switched on while detached; the line is written when the share is mounted
set_shp "$shareG" MountAtBoot "<true>" || fail_later "setting MountAtBoot"
mounted=$(count "$(console $G)" "^MOUNTED $mnt: ")
call "$shareG" org.sluice.Sluice1.Share.Attach >/dev/null || fail_later "re-attach to $G"
wait_for 60 share_prop_is "$shareG" GuestState mounted && wait_for 30 more_than "$(console $G)" "^MOUNTED $mnt: " "$mounted" ||
        fail_later "re-attach: not mounted again: $(share_info "$shareG")"
if wait_for 60 sluice_line $G >/dev/null; then
        pass "MountAtBoot: the guest's /etc/fstab has: $(sluice_line $G)"
else
        fail_later "MountAtBoot: no marked line in the guest's /etc/fstab: $(fstab $G | tr '\n' '|'); $(share_info "$shareG")"
fi
gone=$(count "$(console $G)" "^GONE ")
if call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$shareG" >/dev/null; then
        wait_for 30 more_than "$(console $G)" "^GONE " "$gone" || fail_later "RemoveShare: the device did not leave $G"
        # RemoveShare answers once the share is gone; the line follows
        if wait_for 30 no_sluice_mark $G; then
                pass "RemoveShare: Sluice's fstab line is gone from the guest"
        else
                fail_later "RemoveShare left the fstab line (or no answer): $(fstab $G | tr '\n' '|')"
        fi
        after=$(last "$(console $G)" "^MOUNTS-AFTER-GONE: ")
        [ "$after" = "MOUNTS-AFTER-GONE: none" ] && pass "RemoveShare: unmounted before the unplug" ||
                fail_later "RemoveShare: $after"
else
        fail_later "RemoveShare: $(call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$shareG" 2>&1)"
fi


# ---- (e) worker SIGKILLed while mounted ---------------------------------------------------------
# a share of its own (the one above is removed), the guest idle
tagG=docs2 mnt=/mnt/docs2
mounted=$(count "$(console $G)" "^MOUNTED $mnt: ")
shareG=$(add_share "$share_dir" $G $tagG "'attach': <true>")
[ -n "$shareG" ] || fail_later "AddShare of $tagG on $G"
wait_for 60 share_prop_is "$shareG" GuestState mounted && wait_for 30 more_than "$(console $G)" "^MOUNTED $mnt: " "$mounted" ||
        fail_later "$tagG: not mounted: $(share_info "$shareG")"
boot_id=$(last "$(console $G)" "^READY ")
wpid=$(worker_of "$shareG")
if [ -n "$wpid" ]; then
        # the share's Event signals, as the applet hears them: "resumed"
        # says the next worker took the same device up (no unplug, no
        # remount); then the guest reads through the mount it had
        runu gdbus monitor --session --dest org.sluice.Sluice1 --object-path "$shareG" >"$work/events.log" 2>&1 &
        monitor=$!
        # it has subscribed once it says who owns the name
        wait_for 20 grep -aq "is owned by" "$work/events.log" || note "gdbus monitor: $(cat "$work/events.log")"
        mounted=$(count "$(console $G)" "^MOUNTED $mnt: ") gone=$(count "$(console $G)" "^GONE ")
        kill -KILL "$wpid"
        if wait_for 90 grep -aq "'resumed', '[^']*recovered from a worker crash" "$work/events.log" &&
           wait_for 30 share_prop_is "$shareG" GuestState mounted; then
                reads=$(count "$(console $G)" "^READ-END")
                guest_flag $G /tmp/ctl-read
                wait_for 30 more_than "$(console $G)" "^READ-END" "$reads" || true
                got=$(last "$(console $G)" "^READ $mnt: ")
                reboots=$(count "$(console $G)" "^READY ")
                [ "$got" = "READ $mnt: hello from the host" ] && [ "$reboots" = 1 ] && [ "$(shp "$shareG" GuestPath)" = "$mnt" ] &&
                        [ "$(count "$(console $G)" "^MOUNTED $mnt: ")" = "$mounted" ] &&
                        [ "$(count "$(console $G)" "^GONE ")" = "$gone" ] &&
                        pass "worker SIGKILLed: resumed, the guest reads at $mnt through the mount it had, no unplug, no remount, no VM restart ($(grep -ao "'resumed', '[^']*'" "$work/events.log" | tail -n 1))" ||
                        fail_later "after the SIGKILL: '$got', $reboots boot(s) ($boot_id), $(share_info "$shareG")"
        else
                fail_later "no recovery in the guest after the SIGKILL: $(share_info "$shareG"); events: $(grep -ao "'[a-z]*', '[^']*'" "$work/events.log" | tr '\n' '|')"
                note "the guest's processes: $(guest_run $G /bin/ps | tr '\n' '|')"
        fi
        kill "$monitor" 2>/dev/null; wait "$monitor" 2>/dev/null
else
        fail_later "no sluice-fs worker found for the share"
fi

vsh destroy $G >/dev/null 2>&1

# ---- (f) an agent that refuses guest-exec --------------------------------------------------------
wait_for 240 booted $R || fail_later "$R did not boot"
wait_for 30 has_vm $R || fail_later "no Vm object for $R"
vmR=$(vm_path $R)
if wait_for 90 vm_prop_is "$vmR" GuestAgent restricted; then
        msg=$(vmp "$vmR" GuestAgentMessage)
        case $msg in *guest-exec*) pass "Vm $R: GuestAgent restricted: $msg" ;; *) fail_later "restricted, but the message: $msg" ;; esac
else
        fail_later "Vm $R: GuestAgent '$(vmp "$vmR" GuestAgent)' ($(vmp "$vmR" GuestAgentMessage))"
fi
shareR=$(add_share "$share_dir" $R docsr "'attach': <true>")
if [ -n "$shareR" ] && wait_for 30 share_prop_is "$shareR" State attached; then
        wait_for 30 share_prop_is_not "$shareR" Error "" || true
        gstate=$(shp "$shareR" GuestState) hint=$(shp "$shareR" GuestHint) error=$(shp "$shareR" Error)
        # the share's Error says why Sluice leaves the guest alone and what to
        # enable; GuestHint is today's command
        case $gstate/$hint/$error in
        /*"mount -t virtiofs docsr"*/*guest-exec*"mount -t virtiofs docsr"*)
                pass "restricted agent: attached, nothing run in the guest, Error: $error" ;;
        *) fail_later "restricted agent: $(share_info "$shareR"), hint '$hint'" ;;
        esac
        ! more_than "$(console $R)" "^MOUNTED " 0 || fail_later "something mounted the share in $R"
else
        fail_later "share on $R did not attach: ${shareR:-no share} $([ -n "$shareR" ] && share_info "$shareR")"
fi
[ -n "$shareR" ] && call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$shareR" >/dev/null
vsh destroy $R >/dev/null 2>&1

# ---- (i) a guest that lies: revocation never depends on it ---------------------------------------
# lie DOMAIN MODE — switches the lying agent (answered in every mode)
lie() { agent "$1" "{\"execute\":\"sluice-test-lie\",\"arguments\":{\"mode\":\"$2\"}}"; }
in_live_xml() { vsh dumpxml "$1" | grep -c "<target dir='$2'/>" >/dev/null; } # DOMAIN TAG
# liar_case MODE — a share mounted through the honest agent, the agent
# switched to MODE, then the user's Stop (for busy: refused, then --force)
liar_case() {
        local mode=$1 tag=lie-$1 dir=$work/lie-$1 share wpid t0 took err state error
        mkdir -p "$dir" && chown "$user:" "$dir"
        wait_for 90 vm_prop_is "$vmL" GuestAgent ready || { fail_later "$mode: the agent of $L is not ready: $(vmp "$vmL" GuestAgentMessage)"; return; }
        share=$(add_share "$dir" $L "$tag" "'attach': <true>")
        if [ -z "$share" ] || ! wait_for 90 share_prop_is "$share" GuestState mounted; then
                fail_later "$mode: the share was not mounted through the honest agent: ${share:-no share} $([ -n "$share" ] && share_info "$share")"
                return
        fi
        wpid=$(worker_of "$share")
        lie $L "$mode" | grep -c '"return"' >/dev/null || { fail_later "$mode: the agent did not switch"; return; }
        if [ "$mode" = busy ]; then
                t0=$EPOCHREALTIME
                err=$(call "$share" org.sluice.Sluice1.Share.Stop 2>&1)
                case $err in
                *org.sluice.Sluice1.Error.Busy*"in use"*force*) pass "busy: Stop refused in $(since "$t0") s, offering force: ${err#*Error.}" ;;
                *) fail_later "busy: the Stop was not refused as busy: $err" ;;
                esac
                [ "$(shp "$share" State)" = attached ] || fail_later "busy: after the refused Stop: $(share_info "$share")"
                t0=$EPOCHREALTIME
                runu "$work/bin/sluicectl" stop --force "$tag" >/dev/null 2>"$work/stop.err" ||
                        fail_later "busy: sluicectl stop --force: $(cat "$work/stop.err")"
        else
                t0=$EPOCHREALTIME
                call "$share" org.sluice.Sluice1.Share.Stop >/dev/null 2>"$work/stop.err" ||
                        fail_later "$mode: Stop failed: $(cat "$work/stop.err")"
        fi
        took=$(since "$t0")
        state=$(shp "$share" State) error=$(shp "$share" Error)
        if awk -v t="$took" 'BEGIN { exit !(t < 20) }' && [ "$state" = stopped ]; then
                pass "$mode: the Stop ended the share in $took s (State $state)"
        else
                fail_later "$mode: the Stop took $took s, State '$state': $(share_info "$share")"
        fi
        [ -n "$wpid" ] && [ ! -d "/proc/$wpid" ] && pass "$mode: its worker ($wpid) is gone" ||
                fail_later "$mode: the worker '${wpid:-none found}' still runs"
        if in_live_xml $L "$tag"; then
                fail_later "$mode: $L's live XML still has the share's filesystem"
        else
                pass "$mode: no filesystem of the share left in $L's live XML"
        fi
        if [ "$mode" != busy ]; then
                case $error in *"did not answer"*) pass "$mode: Error says so: $error" ;;
                        *) fail_later "$mode: Error does not say the guest did not answer: '$error'" ;; esac
        fi
        # honest again for the next case (garbage is the last: libvirt gives up on that agent)
        [ "$mode" = garbage ] || lie $L none >/dev/null
        call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShareWithOptions "$share" "{'force': <true>}" >/dev/null ||
                fail_later "$mode: removing the share"
}
if [ -n "$windows_fake" ]; then
        t_lies=$EPOCHREALTIME
        wait_for 240 booted $L || fail_later "$L did not boot"
        wait_for 30 has_vm $L || fail_later "no Vm object for $L"
        vmL=$(vm_path $L)
        for mode in busy one-byte-reads silent garbage; do
                liar_case $mode
        done
        note "the lying guest's cases took $(since "$t_lies") s"
        vsh destroy $L >/dev/null 2>&1
fi

# ---- (h) a pretend Windows guest -----------------------------------------------------------------
if [ -z "$windows_fake" ]; then
        fail_later "the image has no pretend Windows agent (tests/guest/qga-windows.c): the Windows checks did not run"
        finish
fi
wait_for 240 booted $W || fail_later "$W did not boot"
wait_for 30 has_vm $W || fail_later "no Vm object for $W"
vmW=$(vm_path $W)
wait_for 90 vm_prop_is "$vmW" GuestAgent ready && wait_for 30 vm_prop_is "$vmW" GuestOsType windows &&
        pass "Vm $W: GuestAgent ready, GuestOsType windows, GuestOsName '$(vmp "$vmW" GuestOsName)'" ||
        fail_later "Vm $W: GuestAgent '$(vmp "$vmW" GuestAgent)', GuestOsType '$(vmp "$vmW" GuestOsType)'"
mkdir -p "$work/share2" && chown "$user:" "$work/share2"
shareW=$(add_share "$share_dir" $W wdocs "'attach': <true>")
if [ -n "$shareW" ] && wait_for 90 share_prop_is "$shareW" GuestState mounted; then
        [ "$(shp "$shareW" GuestPath)" = "Z:" ] && pass "Windows: the first share is drive Z:" ||
                fail_later "Windows: GuestPath '$(shp "$shareW" GuestPath)'"
        win $W | grep -cE '"config" *, *"VirtioFsSvc" *, *"start=" *, *"auto"' >/dev/null &&
                win $W | grep -cE '"start" *, *"VirtioFsSvc"' >/dev/null &&
                pass "Windows: VirtioFsSvc set to start automatically and started" ||
                fail_later "Windows: the agent was not asked to set up VirtioFsSvc: $(win $W | tr '\n' '|')"
else
        fail_later "Windows share not mounted: ${shareW:-no share} $([ -n "$shareW" ] && share_info "$shareW")"
fi
# the first share's device is seen before the second one's is counted
wait_for 30 more_than "$(console $W)" "^DEVICE " 0 || fail_later "$W never saw wdocs's device"
devices=$(count "$(console $W)" "^DEVICE ")
shareW2=$(add_share "$work/share2" $W wdocs2 "'attach': <true>")
if [ -n "$shareW2" ] && wait_for 90 share_prop_is "$shareW2" GuestState mounted; then
        [ "$(shp "$shareW2" GuestPath)" = "Y:" ] && win $W | grep -i "launchctl" | grep -c "wdocs2" >/dev/null &&
                pass "Windows: the second share is a WinFsp launcher instance at Y:" ||
                fail_later "Windows second share: GuestPath '$(shp "$shareW2" GuestPath)', commands: $(win $W | tr '\n' '|')"
else
        fail_later "Windows second share not mounted: ${shareW2:-no share} $([ -n "$shareW2" ] && share_info "$shareW2")"
fi
if [ -n "$shareW2" ]; then
        # the fake "mounts" at once: the guest must have seen the device
        # come before its going can be seen
        wait_for 30 more_than "$(console $W)" "^DEVICE " "$devices" || fail_later "$W never saw wdocs2's device"
        gone=$(count "$(console $W)" "^GONE ")
        call "$shareW2" org.sluice.Sluice1.Share.Detach >/dev/null || fail_later "Detach on $W"
        if wait_for 30 more_than "$(console $W)" "^GONE " "$gone"; then
                stop=$(lines "$(console $W)" | grep -an "^QGA-WIN: " | grep -i "launchctl" |
                       grep -E '"stop" *, *"virtiofs" *, *"[^"]*wdocs2"' | tail -n 1 | cut -d: -f1)
                [ -n "$stop" ] && [ "$stop" -lt "$(line_no "$(console $W)" "^GONE ")" ] &&
                        pass "Windows: its launcher instance stopped before the unplug" ||
                        fail_later "Windows detach: no stop before the unplug: $(win $W | tail -n 3 | tr '\n' '|')"
        else
                fail_later "Windows detach: the device did not leave $W"
        fi
fi
# the agent's error for a share "wesc" holds terminal escapes, C1 controls, a
# bidi override and bytes that are not UTF-8 (qga-windows.c --error-escapes)
mkdir -p "$work/share-esc" && chown "$user:" "$work/share-esc"
shareE=$(add_share "$work/share-esc" $W wesc "'attach': <true>")
if [ -n "$shareE" ] && wait_for 90 share_prop_is "$shareE" GuestState failed; then
        err=$(shp "$shareE" Error)
        listed=$(runu "$work/bin/sluicectl" list 2>&1)
        case $err in
        *"access"*"denied"*" end"*)
                if grep -q "g_utf8_validate" "$work/service.log"; then
                        fail_later "Windows error with escapes: GLib refused a string: $(grep -m1 g_utf8_validate "$work/service.log")"
                elif grep -qE '\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|\\[0-7]{3}' <<<"$err"; then
                        fail_later "Windows error with escapes: control characters in Error '$err'"
                elif ! iconv -f UTF-8 -t UTF-8 <<<"$listed" >/dev/null 2>&1 || LC_ALL=C grep -q $'\e' <<<"$listed" ||
                     ! grep -q "denied" <<<"$listed"; then
                        fail_later "Windows error with escapes: sluicectl list: $(cat -v <<<"$listed" | grep -a denied)"
                else
                        pass "Windows error with escapes and non-UTF-8: Error and sluicectl list printable: $err"
                fi ;;
        *) fail_later "Windows error with escapes: Error '$err'" ;;
        esac
else
        fail_later "Windows error with escapes: ${shareE:-no share} $([ -n "$shareE" ] && share_info "$shareE")"
fi
[ -n "$shareE" ] && call /org/sluice/Sluice1 org.sluice.Sluice1.Manager.RemoveShare "$shareE" >/dev/null
wait_for 240 booted $W2 || fail_later "$W2 did not boot"
shareM=$(add_share "$share_dir" $W2 wdocs3 "'attach': <true>")
if [ -n "$shareM" ] && wait_for 90 share_prop_is "$shareM" GuestState failed; then
        case $(shp "$shareM" Error) in *WinFsp*) pass "Windows without WinFsp: $(shp "$shareM" Error)" ;;
                *) fail_later "Windows without WinFsp: Error '$(shp "$shareM" Error)'" ;; esac
else
        fail_later "Windows without WinFsp: ${shareM:-no share} $([ -n "$shareM" ] && share_info "$shareM")"
fi

finish
