#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The read-only switch, clicked for real (xdotool at the switch's place),
# flips Share.ReadOnly on the service and the running worker: a guest write
# (the test VMM speaking vhost-user to the worker) then fails with EROFS, and
# succeeds again after a second click.
. "$(dirname "$0")/lib.sh"
[ -n "${SLUICE_TEST_VMM:-}" ] && [ -x "$SLUICE_TEST_VMM" ] || skip "sluice-test-vmm is not built"

start_desktop --notifications
start_service
folder="$SA_WORK/Shared"
mkdir -p "$folder"
share=$(add_share "$folder")
gdbus call --session -d org.sluice.Sluice1 -o "$share" -m org.sluice.Sluice1.Share.Start >/dev/null
wait_for 20 share_state_is "$share" running || fail "the share did not start: $(share_prop "$share" Error)"
sock=$(share_prop "$share" SocketPath | sed "s/^(<'\(.*\)'>,)$/\1/")
note "worker socket $sock"

start_applet
wait_for 15 window_visible || fail "the window did not open"
wait_for 10 locate "read-only:$folder" || fail "no row for the share"
share_prop "$share" ReadOnly | grep -q false || fail "share starts read-only"

"$SLUICE_TEST_VMM" --socket "$sock" write before.txt "writable" || fail "the worker refused a write before the switch"
[ "$(cat "$folder/before.txt")" = writable ] || fail "write did not reach the host folder"

sleep 0.5
click_widget "read-only:$folder"
ro_is() { share_prop "$share" ReadOnly | grep -q "$1"; }
wait_for 10 ro_is true || fail "clicking the switch did not set Share.ReadOnly"
if "$SLUICE_TEST_VMM" --socket "$sock" write after.txt "nope" 2>"$log_dir/vmm.err"; then
        fail "the worker still accepts writes after the switch"
fi
grep -q EROFS "$log_dir/vmm.err" || fail "write failed, but not with EROFS: $(cat "$log_dir/vmm.err")"
[ ! -e "$folder/after.txt" ] || fail "a read-only share created a file"
"$SLUICE_TEST_VMM" --socket "$sock" read before.txt | grep -q writable || fail "reads fail on a read-only share"

click_widget "read-only:$folder"
wait_for 10 ro_is false || fail "the second click did not clear Share.ReadOnly"
"$SLUICE_TEST_VMM" --socket "$sock" write again.txt "yes" || fail "the worker refuses writes after the switch went off"
[ "$(cat "$folder/again.txt")" = yes ] || fail "write after the switch did not reach the host"

# The switch follows the service too: set ReadOnly over D-Bus, the switch shows it
# (a click then turns it off again, proving the switch had turned on).
# (Wait for the switch to show it, not a fixed time: clicked before, it would
# turn on rather than off.)
gdbus call --session -d org.sluice.Sluice1 -o "$share" -m org.freedesktop.DBus.Properties.Set \
        org.sluice.Sluice1.Share ReadOnly '<true>' >/dev/null
switch_on() {
        gdbus call --session -d org.sluice.Applet -o /org/sluice/Applet/Test \
                -m org.sluice.Applet.Test.IsActive "read-only:$folder" | grep -q true
}
wait_for 10 switch_on || fail "the switch did not follow ReadOnly set by another client"
click_widget "read-only:$folder"
wait_for 10 ro_is false || fail "clicking the switch turned on by another client did not clear ReadOnly"
echo "PASS"
