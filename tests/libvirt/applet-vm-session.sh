#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The session side of tests/libvirt/applet-vm.sh (read its header): runs
# inside tests/applet/run-test.sh, as the test user, from a copy of the
# scripts it needs laid out as in tests/ (applet/lib.sh, lib.sh,
# domain-xml.sh).  $SA_GUEST_DIR holds vmlinux and initrd.cpio (with
# guest-workload.sh as /workload.sh), and initrd-agent.cpio (qemu-ga, with
# agent-workload.sh as /workload.sh) when the image has the agent.
. "$(dirname "$0")/../applet/lib.sh"
: "${SA_GUEST_DIR:?}"

export SA_LIBVIRT_URI=qemu:///session
vm=sluice-applet-vm
avm=sluice-applet-agent   # the VM with the guest agent
svm=sluice-applet-slots   # the VM without a free PCIe root port
folder="$SA_WORK/appletdocs"   # its default tag is its name: the guest mounts that tag
tag=appletdocs
console="$SA_WORK/console.log"
mkdir -p "$folder"
echo "hello from the host" >"$folder/hello.txt"
: >"$console"
vsh() { virsh -q -c qemu:///session "$@"; }

# The domain and the session libvirtd (started by the first virsh) go with the
# test.  The service goes first: it would start libvirtd again to reconnect.
vm_cleanup() {
        set +e
        if [ -n "${service_pid:-}" ]; then
                kill "$service_pid" 2>/dev/null
                wait_for 10 pid_gone "$service_pid"
        fi
        local d
        for d in "$vm" "$avm" "$svm"; do
                vsh destroy "$d" >/dev/null 2>&1
                vsh undefine "$d" >/dev/null 2>&1
        done
        local f pid
        for f in "$XDG_RUNTIME_DIR"/libvirt/libvirtd.pid "$XDG_RUNTIME_DIR"/libvirt/virtlogd.pid; do
                pid=$(cat "$f" 2>/dev/null) || continue
                kill "$pid" 2>/dev/null
                wait_for 5 pid_gone "$pid"
        done
        [ -z "${qga_sock:-}" ] || rm -f "$qga_sock"
        [ -z "${keep_console:-}" ] || { echo "----- guest console (last 20 lines)"; tail -n 20 "$console"; }
        [ -z "${keep_console:-}" ] || [ ! -f "${aconsole:-}" ] || { echo "----- agent guest console (last 20 lines)"; tail -n 20 "$aconsole"; }
}
trap 'st=$?; [ $st = 0 ] || keep_console=1; vm_cleanup; (exit $st); sa_cleanup' EXIT

# ---- dunst: the real notification server; a rule's script logs what it shows ----
notes="$SA_WORK/notifications.log"
: >"$notes"
cat >"$SA_WORK/log-note.sh" <<'SH'
#!/bin/sh
printf 'NOTE\t%s\t%s\t%s\n' "$DUNST_APP_NAME" "$DUNST_SUMMARY" "$(printf '%s' "$DUNST_BODY" | tr '\n' ' ')" >>"$SA_NOTES"
SH
chmod +x "$SA_WORK/log-note.sh"
cat >"$SA_WORK/dunstrc" <<CONF
[global]
    always_run_script = true
[log-everything]
    summary = "*"
    script = $SA_WORK/log-note.sh
CONF
SA_NOTES=$notes dunst -config "$SA_WORK/dunstrc" >>"$log_dir/dunst.log" 2>&1 &
pids+=($!)
wait_for 20 bus_has_name org.freedesktop.Notifications || fail "dunst did not take the notification bus name"
note "dunst is up"

# ---- the guest, in the test user's own libvirtd -----------------------------------------
"$(dirname "$0")/../domain-xml.sh" --kernel "$SA_GUEST_DIR/vmlinux" --initrd "$SA_GUEST_DIR/initrd.cpio" \
        --console "$console" --tag "$tag" "$vm" >"$SA_WORK/$vm.xml" || fail "domain-xml.sh failed"
# the first call starts the session libvirtd (it probes QEMU: slow on a loaded machine)
wait_for 180 vsh version || fail "the session libvirtd did not start"
vsh dominfo "$vm" >/dev/null 2>&1 && { vsh destroy "$vm"; vsh undefine "$vm"; } >/dev/null 2>&1
vsh define "$SA_WORK/$vm.xml" >/dev/null || fail "cannot define $vm"
vsh start "$vm" >/dev/null || fail "cannot start $vm"
note "libvirtd up, $vm started"

start_service
start_applet
wait_for 15 window_visible || fail "the window did not open"
vm_known() { managed_objects | grep -qF "'Name': <'$vm'>"; }
wait_for 30 vm_known || fail "the service does not list $vm"
wait_for 180 grep -q READY "$console" || fail "$vm did not boot to its workload"
note "guest booted; service and applet up"

# ---- pick the VM in the chooser: open the drop-down, click the VM ----------------------
wait_for 15 locate vm-chooser || fail "no VM chooser in the window"
click_widget vm-chooser
wait_for 10 locate "vm-option:$vm" || fail "the chooser's list does not offer $vm"
click_widget "vm-option:$vm"
popover_closed() { ! locate "vm-option:$vm"; }
wait_for 10 popover_closed || fail "the chooser's list stayed open after the click"

# ---- drop the folder ------------------------------------------------------------------------
drag_to_applet "$folder"
wait_for 20 share_object_for "$folder" || fail "dropping the folder did not create a share: $(hook_prop LastMessage)"
share=$(share_object_for "$folder")
share_prop "$share" Vm | grep -qF "'$vm'" || fail "the share is not for the VM picked: $(share_prop "$share" Vm)"
share_prop "$share" Tag | grep -qF "'$tag'" || fail "unexpected tag: $(share_prop "$share" Tag)"
wait_for 60 share_state_is "$share" attached ||
        fail "the share did not attach: $(share_prop "$share" State) $(share_prop "$share" Error)"
note "share attached"

attached_note() { grep -F "“$tag” is now in $vm" "$notes" | grep -qF "mount -t virtiofs $tag"; }
wait_for 20 attached_note || fail "dunst showed no “is now in $vm” notification with the mount command: $(cat "$notes")"
note "$(grep -F "is now in $vm" "$notes" | head -1)"
wait_for 60 grep -q "PASS read" "$console" || fail "the guest did not read the share: $(grep FAIL "$console")"
wait_for 30 grep -q "PASS write" "$console" || fail "the guest did not write to the share: $(grep FAIL "$console")"
written() { ls "$folder"/guest-*-0.txt >/dev/null 2>&1; }
wait_for 10 written || fail "the guest's file is not in the folder on the host"
note "the guest mounted the share, read hello.txt and wrote $(basename "$(ls "$folder"/guest-*-0.txt)")"
# ---- no guest agent: today's hint in the row, and the offer ---------------------------------
hint_shown() { hook_prop Labels | grep -qF "mount -t virtiofs $tag"; }
wait_for 10 hint_shown || fail "the row does not show the mount command: $(hook_prop Labels)"
hook_prop Labels | grep -qF "In the VM at" && fail "the row says where the share is in a guest nobody mounted it in"
shot applet-vm-attached
vm_obj_of() { # NAME → the Vm object's path
        local obj
        for obj in $(managed_objects | grep -oE "'/org/sluice/Sluice1/vm/[A-Za-z0-9_]+'" | tr -d "'" | sort -u); do
                gdbus call --session -d org.sluice.Sluice1 -o "$obj" -m org.freedesktop.DBus.Properties.Get \
                        org.sluice.Sluice1.Vm Name | grep -qF "<'$1'>" && { echo "$obj"; return 0; }
        done
        return 1
}
vm_prop() { # NAME PROPERTY
        local obj
        obj=$(vm_obj_of "$1") || return 0
        gdbus call --session -d org.sluice.Sluice1 -o "$obj" \
                -m org.freedesktop.DBus.Properties.Get org.sluice.Sluice1.Vm "$2" | sed "s/^(<'\(.*\)'>,)$/\1/"
}
agent_published() { [ -n "$(vm_prop "$vm" GuestAgent)" ]; }
not_run=()
if wait_for 20 agent_published; then
        [ "$(vm_prop "$vm" GuestAgent)" = none ] || fail "$vm has no agent channel, yet GuestAgent is $(vm_prop "$vm" GuestAgent)"
        wait_for 10 locate "guest-agent:$folder" || fail "the row offers no guest agent for $vm: $(hook_prop Labels)"
        before=$(hook_prop LastMessage)
        click_widget "guest-agent:$folder"
        answered() { [ "$(hook_prop LastMessage)" != "$before" ]; }
        wait_for 20 answered || fail "the offer's answer was not shown"
        note "inline: $(hook_prop LastMessage)"
        vsh dumpxml --inactive "$vm" | grep -cF org.qemu.guest_agent.0 >/dev/null ||
                fail "the click did not add the agent channel to $vm's definition: $(hook_prop LastMessage)"
        vsh dumpxml "$vm" | grep -cF org.qemu.guest_agent.0 >/dev/null && fail "the running $vm changed at once"
        note "the offer added the agent channel to $vm's persistent definition"
else
        not_run+=("the guest agent offer (the service publishes no Vm.GuestAgent)")
fi

# ---- a VM with the guest agent: the service mounts the share ---------------------------------
if [ ${#not_run[@]} = 0 ] && [ -f "$SA_GUEST_DIR/initrd-agent.cpio" ]; then
        vsh destroy "$vm" >/dev/null 2>&1   # one TCG guest at a time
        # its row goes too: the new share's row is then the first, in sight
        # (a click lands where the widget is on the screen)
        gdbus call --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 \
                -m org.sluice.Sluice1.Manager.RemoveShare "$share" >/dev/null || fail "cannot remove the first share"
        aconsole="$SA_WORK/console-agent.log"
        : >"$aconsole"
        # The channel's socket where its path fits a UNIX socket address:
        # the one a session libvirtd picks under this test's home is too long.
        qga_sock=/tmp/applet-qga.$$.sock
        "$(dirname "$0")/../domain-xml.sh" --kernel "$SA_GUEST_DIR/vmlinux" --initrd "$SA_GUEST_DIR/initrd-agent.cpio" \
                --console "$aconsole" \
                --device "<channel type='unix'><source mode='bind' path='$qga_sock'/><target type='virtio' name='org.qemu.guest_agent.0'/></channel>" \
                "$avm" >"$SA_WORK/$avm.xml" || fail "domain-xml.sh failed"
        vsh define "$SA_WORK/$avm.xml" >/dev/null || fail "cannot define $avm"
        vsh start "$avm" >/dev/null || fail "cannot start $avm"
        wait_for 180 grep -q "^READY" "$aconsole" || fail "$avm did not boot to its workload: $(tail -5 "$aconsole")"
        agent_ready() { [ "$(vm_prop "$avm" GuestAgent)" = ready ]; }
        wait_for 120 agent_ready || fail "$avm's agent is not ready: $(vm_prop "$avm" GuestAgent): $(vm_prop "$avm" GuestAgentMessage)"
        afolder="$SA_WORK/agentdocs"
        atag=agentdocs
        mkdir -p "$afolder"
        echo "hello from the host" >"$afolder/hello.txt"
        ashare=$(gdbus call --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 -m org.sluice.Sluice1.Manager.AddShare \
                "$afolder" "$avm" "{'attach': <true>}" | sed "s/^(objectpath '\(.*\)',)$/\1/")
        guest_path() { share_prop "$ashare" GuestPath | sed "s/^(<'\(.*\)'>,)$/\1/"; }
        placed() { [ -n "$(guest_path)" ]; }
        wait_for 120 placed || fail "the service did not mount the share in $avm: $(share_prop "$ashare" GuestState) $(share_prop "$ashare" Error)"
        place=$(guest_path)
        note "mounted in $avm at $place"
        wait_for 30 grep -qF "MOUNTED $place" "$aconsole" || fail "the guest does not see the mount at $place"
        wait_for 10 locate "label:In the VM at $place" || fail "the row does not say where the share is: $(hook_prop Labels)"
        hook_prop Labels | grep -qF "mount -t virtiofs $atag" && fail "the row still shows the command to mount it by hand"
        click_widget "guest-copy:$afolder"
        copied() {
                gdbus call --session -d org.sluice.Applet -o /org/sluice/Applet/Test \
                        -m org.sluice.Applet.Test.ReadClipboard | grep -qF "('$place',)"
        }
        wait_for 10 copied || fail "the copy button did not put $place on the clipboard: $(gdbus call --session \
                -d org.sluice.Applet -o /org/sluice/Applet/Test -m org.sluice.Applet.Test.ReadClipboard 2>&1)"
        placed_note() { grep -F "“$atag” is now in $avm" "$notes" | grep -qF "$place"; }
        wait_for 20 placed_note || fail "the notification does not say where the share is: $(grep -F "$avm" "$notes")"
        grep -F "“$atag” is now in $avm" "$notes" | grep -qF "mount -t virtiofs" && fail "the notification still gives the mount command"
        note "$(grep -F "is now in $avm" "$notes" | head -1)"
        shot applet-vm-in-guest

        # ---- busy in the guest: the row's Stop Anyway ----
        # a process of the guest's workload sits in the mount (agent-workload.sh's
        # /tmp/ctl-hold, created through the agent); the row's Stop is refused,
        # the row says what uses it and offers Stop Anyway, whose click ends the share
        qga() { vsh qemu-agent-command "$avm" "$1" 2>&1; }
        h=$(qga '{"execute":"guest-file-open","arguments":{"path":"/tmp/ctl-hold","mode":"w"}}' |
            sed -n 's/.*"return":\([0-9]*\).*/\1/p')
        [ -n "$h" ] && qga "{\"execute\":\"guest-file-close\",\"arguments\":{\"handle\":$h}}" >/dev/null ||
                fail "cannot ask $avm to hold the mount"
        wait_for 30 grep -q "^HOLDING pid=" "$aconsole" || fail "the guest did not hold the mount"
        click_widget "start-stop:$afolder"
        wait_for 60 locate "stop-anyway:$afolder" ||
                fail "no Stop Anyway after a Stop the guest refused: $(hook_prop Labels) $(hook_prop LastMessage)"
        hook_prop Labels | grep -qF "in use in the guest" || fail "the row does not say what uses the share: $(hook_prop Labels)"
        share_prop "$ashare" State | grep -qF "'attached'" || fail "the refused Stop changed the share: $(share_prop "$ashare" State)"
        shot applet-vm-busy
        click_widget "stop-anyway:$afolder"
        stopped() { share_prop "$ashare" State | grep -qF "'stopped'"; }
        wait_for 30 stopped || fail "Stop Anyway did not stop the share: $(share_prop "$ashare" State) $(share_prop "$ashare" Error)"
        vsh dumpxml "$avm" | grep -cF "<target dir='$atag'/>" >/dev/null && fail "Stop Anyway left the share in $avm's live XML"
        gone_offer() { ! locate "stop-anyway:$afolder"; }
        wait_for 10 gone_offer || fail "the row still offers Stop Anyway once the share stopped"
        note "busy in the guest: Stop refused, Stop Anyway stopped the share"
else
        [ ${#not_run[@]} != 0 ] || not_run+=("the share mounted by the service (no qemu-ga in the guest image)")
        not_run+=("\"In the VM at …\", its copy button and the notification of where")
fi

# ---- a VM without a free PCIe root port: the row offers spare ones ------------------------------
# one TCG guest at a time (either may be off already)
vsh destroy "$vm" >/dev/null 2>&1 || true
vsh destroy "$avm" >/dev/null 2>&1 || true
# the rows before it go (the first may be gone already): the new share's row
# is then the first, in sight
for s in "$share" "${ashare:-}"; do
        [ -z "$s" ] || gdbus call --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 \
                -m org.sluice.Sluice1.Manager.RemoveShare "$s" >/dev/null 2>&1 || true
done
sfolder="$SA_WORK/slotsdocs"
mkdir -p "$sfolder"
sconsole="$SA_WORK/console-slots.log"
: >"$sconsole"
"$(dirname "$0")/../domain-xml.sh" --kernel "$SA_GUEST_DIR/vmlinux" --initrd "$SA_GUEST_DIR/initrd.cpio" \
        --console "$sconsole" --tag slotsdocs --root-ports 0 "$svm" >"$SA_WORK/$svm.xml" || fail "domain-xml.sh failed"
vsh define "$SA_WORK/$svm.xml" >/dev/null || fail "cannot define $svm"
vsh start "$svm" >/dev/null || fail "cannot start $svm"
saved_ports() { vsh dumpxml --inactive "$svm" | grep -c "model='pcie-root-port'"; }
ports_before=$(saved_ports)
slots_left() { vm_prop "$svm" HotplugSlots | sed -n 's/^(<uint32 \([0-9]*\)>,)$/\1/p'; }
counted() { [ -n "$(slots_left)" ] && [ "$(slots_left)" != 4294967295 ]; }
wait_for 60 counted || fail "$svm's Vm.HotplugSlots is not counted: $(vm_prop "$svm" HotplugSlots)"
# the spare port libvirt adds is taken by another device, as a user's own would
cat >"$SA_WORK/rng.xml" <<'XML'
<rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>
XML
slots_are() { [ "$(slots_left)" = "$1" ]; }
for _ in 1 2 3 4; do
        free_ports=$(slots_left)   # not "left": wait_for has a local of that name
        [ "${free_ports:-0}" -gt 0 ] || break
        vsh attach-device "$svm" "$SA_WORK/rng.xml" --live >/dev/null || fail "cannot plug a device into $svm"
        wait_for 20 slots_are $((free_ports - 1)) ||
                fail "$svm's Vm.HotplugSlots stayed $(slots_left) after a device was plugged in"
done
[ "$(slots_left)" = 0 ] || fail "$svm's Vm.HotplugSlots is not 0: $(vm_prop "$svm" HotplugSlots)"
sshare=$(gdbus call --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 -m org.sluice.Sluice1.Manager.AddShare \
        "$sfolder" "$svm" "{}" | sed "s/^(objectpath '\(.*\)',)$/\1/") || fail "cannot add a share for $svm"
[ -n "$sshare" ] || fail "cannot add a share for $svm"
gdbus call --session -d org.sluice.Sluice1 -o "$sshare" -m org.sluice.Sluice1.Share.Start >/dev/null ||
        fail "cannot start the share for $svm: $(share_prop "$sshare" Error)"
share_listening() { share_state_is "$sshare" running; }
wait_for 20 share_listening || fail "the share for $svm does not run: $(share_prop "$sshare" State)"
serr=$(gdbus call --session -d org.sluice.Sluice1 -o "$sshare" -m org.sluice.Sluice1.Share.Attach 2>&1) &&
        fail "the attach into $svm, which has no free root port, succeeded: $serr"
case $serr in *NoHotplugSlot*) ;; *) fail "the attach into $svm failed otherwise: $serr" ;; esac
# the row's error is long: a taller window keeps the offer in sight, clear of the toasts
locate drop-zone && xdotool windowsize "$loc_win" 640 880
wait_for 60 locate "hotplug-slots:$sfolder" ||
        fail "the row offers no PCIe slots for $svm: $(hook_prop Labels) $(share_prop "$sshare" Error)"
hook_prop Labels | grep -qF "no free PCIe root port" || fail "the row does not show why the folder is not in $svm: $(hook_prop Labels)"
shot applet-vm-no-slot
before=$(hook_prop LastMessage)
click_widget "hotplug-slots:$sfolder"
answered() { [ "$(hook_prop LastMessage)" != "$before" ]; }
wait_for 20 answered || fail "the offer's answer was not shown"
note "inline: $(hook_prop LastMessage)"
hook_prop LastMessage | grep -qF "spare PCIe root ports were added to “$svm”" ||
        fail "the answer does not say what was added: $(hook_prop LastMessage)"
hook_prop LastMessage | grep -qF "start it again" || fail "the answer does not say to restart $svm: $(hook_prop LastMessage)"
[ "$(saved_ports)" = $((ports_before + 4)) ] ||
        fail "the click did not add 4 root ports to $svm's definition: $ports_before → $(saved_ports)"
restart_said() { hook_prop Labels | grep -qF "shut it down and start it again to use them"; }
wait_for 10 restart_said || fail "the row does not say to restart $svm: $(hook_prop Labels)"
gone_slots_offer() { ! locate "hotplug-slots:$sfolder"; }
wait_for 10 gone_slots_offer || fail "the row still offers to add slots once they were added"
note "no free root port: the row's offer added 4 root ports to $svm's definition ($ports_before → $(saved_ports))"
vsh destroy "$svm" >/dev/null 2>&1 || true

for part in ${not_run[@]+"${not_run[@]}"}; do note "NOT RUN: $part"; done
echo "PASS"
