#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# VMs (libvirt's test:///default driver gives the service one running VM,
# "test", without shared memory): the chooser lists it and offers the fix;
# a real click on "Enable Shared Memory" reaches the service and its answer
# shows inline; the row menu moves a share to the VM (Share.SetVm).
. "$(dirname "$0")/lib.sh"
export SA_LIBVIRT_URI=test:///default

start_desktop --notifications
start_service
vm_listed() { managed_objects | grep -qF "'Name': <'test'>"; }
wait_for 20 vm_listed || skip "the service shows no VM from test:///default"
folder="$SA_WORK/Projects"
mkdir -p "$folder"
share=$(add_share "$folder")
start_applet
wait_for 15 window_visible || fail "the window did not open"

wait_for 10 locate "button:_Enable Shared Memory" || fail "the chooser offers no shared-memory fix for 'test'"
click_widget "button:_Enable Shared Memory"
wait_for 15 message_contains "“test”" || fail "the fix's answer was not shown: $(hook_prop LastMessage)"
note "inline: $(hook_prop LastMessage)"

click_widget "menu:$folder"
wait_for 10 locate "button:test" || fail "the row menu does not list the VM"
click_widget "button:test"
vm_is_test() { share_prop "$share" Vm | grep -qF "'test'"; }
wait_for 15 vm_is_test || fail "choosing the VM in the row menu did not assign it: $(share_prop "$share" Vm)"
echo "PASS"
