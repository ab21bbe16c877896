#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The share in the guest, as the row shows it (libvirt's test:///default
# driver gives the service one running VM, "test", whose definition has no
# guest agent channel): the row offers to add the agent; a real click calls
# Vm.EnableGuestAgent and the service's answer shows inline.  The row menu's
# "Mount in the VM Automatically" flips Share.AutoMount, and follows it when
# another client sets it.  (Where a real agent mounted the share, "In the VM
# at …" and its copy button: tests/libvirt/applet-vm.sh.)
. "$(dirname "$0")/lib.sh"
export SA_LIBVIRT_URI=test:///default

start_desktop --notifications
start_service
vm_listed() { managed_objects | grep -qF "'Name': <'test'>"; }
wait_for 20 vm_listed || skip "the service shows no VM from test:///default"
vm_obj=$(managed_objects | grep -oE "'/org/sluice/Sluice1/vm/[A-Za-z0-9_]+'" | head -1 | tr -d "'")
vm_prop() {
        gdbus call --session -d org.sluice.Sluice1 -o "$vm_obj" \
                -m org.freedesktop.DBus.Properties.Get org.sluice.Sluice1.Vm "$1"
}
agent_known() { ! vm_prop GuestAgent | grep -qF "<''>"; }
wait_for 20 agent_known || skip "this service does not publish Vm.GuestAgent yet"
vm_prop GuestAgent | grep -qF "'none'" || fail "test:///default's VM has no agent channel, yet GuestAgent is $(vm_prop GuestAgent)"

folder="$SA_WORK/Docs"
mkdir -p "$folder"
share=$(gdbus call --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 -m org.sluice.Sluice1.Manager.AddShare \
        "$folder" test '@a{sv} {}' | sed "s/^(objectpath '\(.*\)',)$/\1/")
gdbus call --session -d org.sluice.Sluice1 -o "$share" -m org.sluice.Sluice1.Share.Start >/dev/null || true
not_stopped() { ! share_state_is "$share" stopped; }
wait_for 20 not_stopped || fail "the share did not start: $(share_prop "$share" Error)"
start_applet
wait_for 15 window_visible || fail "the window did not open"

# ---- no agent: the offer, and what the service answers -----------------------------------
wait_for 10 locate "guest-agent:$folder" || fail "the row offers no guest agent for a VM without one: $(hook_prop Labels)"
hook_prop Labels | grep -qF "“test” has no guest agent" || fail "the offer does not say why: $(hook_prop Labels)"
before=$(hook_prop LastMessage)
click_widget "guest-agent:$folder"
answered() { [ "$(hook_prop LastMessage)" != "$before" ] && ! hook_prop LastMessage | grep -qF "<''>"; }
wait_for 15 answered || fail "the offer's answer was not shown: $(hook_prop LastMessage)"
note "inline: $(hook_prop LastMessage)"
shot_settled applet-guest-agent-offer

# ---- AutoMount from the row menu ------------------------------------------------------------
auto_is() { share_prop "$share" AutoMount | grep -q "$1"; }
if auto_is true; then was=true now=false; else was=false now=true; fi
click_widget "menu:$folder"
wait_for 10 locate "button:Mount in the VM Automatically" || fail "the row menu has no AutoMount entry: $(hook_prop Labels)"
click_widget "button:Mount in the VM Automatically"
wait_for 10 auto_is "$now" || fail "the menu entry did not set AutoMount to $now: $(share_prop "$share" AutoMount)"
xdotool key Escape
# set by another client: the menu follows (a click flips it back)
gdbus call --session -d org.sluice.Sluice1 -o "$share" -m org.freedesktop.DBus.Properties.Set \
        org.sluice.Sluice1.Share AutoMount "<$was>" >/dev/null
wait_for 10 auto_is "$was" || fail "AutoMount was not set over D-Bus"
menu_closed() { ! locate "button:Mount in the VM Automatically"; }
wait_for 10 menu_closed || fail "the row menu stayed open"
click_widget "menu:$folder"
click_widget "button:Mount in the VM Automatically"
wait_for 10 auto_is "$now" || fail "the menu did not follow AutoMount set by another client"
echo "PASS"
