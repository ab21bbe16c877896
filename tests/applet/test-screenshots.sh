#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Screenshots of the window, kept in the build directory (tests/applet/):
#   applet-empty.png        no shares
#   applet-shares-1/2.png   two running shares while the test VMM reads and
#                           writes through one of them (the graph moves);
#                           the second with the sync-queue table open
#   (applet-guest-tools-progress.png, an install's copy into a Windows VM at
#   75 %, is taken by test-guest-tools.sh, which has the VM for it)
# Each must not be blank, and the two graph shots must differ.
. "$(dirname "$0")/lib.sh"
[ -n "${SLUICE_TEST_VMM:-}" ] && [ -x "$SLUICE_TEST_VMM" ] || skip "sluice-test-vmm is not built"

start_desktop --watcher --notifications
start_service
start_applet
wait_for 15 window_visible || fail "the window did not open"
locate drop-zone
xdotool windowsize "$loc_win" 720 880
xdotool windowmove "$loc_win" 40 10
sleep 2
shot applet-empty

a="$SA_WORK/Projects"; b="$SA_WORK/Photos"
mkdir -p "$a" "$b"
head -c 4194304 /dev/urandom >"$a/big.bin"
for f in "$a" "$b"; do
        s=$(add_share "$f")
        gdbus call --session -d org.sluice.Sluice1 -o "$s" -m org.sluice.Sluice1.Share.Start >/dev/null
        wait_for 20 share_state_is "$s" running || fail "share $f did not start"
done
sa=$(share_object_for "$a")
sock=$(share_prop "$sa" SocketPath | sed "s/^(<'\(.*\)'>,)$/\1/")

# Traffic: whole-file reads and small writes, as a guest would do.
traffic() {
        local end=$(( $(date +%s) + $1 )) i=0
        while [ "$(date +%s)" -lt "$end" ]; do
                "$SLUICE_TEST_VMM" --socket "$sock" read big.bin >/dev/null || return 1
                "$SLUICE_TEST_VMM" --socket "$sock" write "note-$i.txt" "$(head -c 20000 /dev/zero | tr '\0' x)" || return 1
                i=$((i + 1))
        done
}
traffic 6 || fail "the test VMM could not talk to the worker"
rate_nonzero() { share_prop "$sa" Stats | grep -qE "'read-bytes-per-sec': <[1-9]"; }
traffic 3 &
traffic_pid=$!
pids+=($traffic_pid)
wait_for 10 rate_nonzero || fail "Stats show no read throughput: $(share_prop "$sa" Stats)"
shot applet-shares-1
# The tray follows the same samples: the active icon and the total throughput.
item=$(awk '/^REGISTERED /{print $2; exit}' "$desktop_log")
sni() { gdbus call --session -d "$item" -o /StatusNotifierItem \
        -m org.freedesktop.DBus.Properties.Get org.kde.StatusNotifierItem "$1"; }
tray_active() { sni IconName | grep -q sluice-active-symbolic; }
wait_for 10 tray_active || fail "the tray icon does not show activity: $(sni IconName)"
sni ToolTip | grep -qE "2 shared folders · Read [0-9.]*[1-9][0-9.]* MB/s" ||
        fail "the tooltip does not show the live total: $(sni ToolTip)"
note "tooltip: $(sni ToolTip | grep -oE "2 shared folders[^']*")"
wait "$traffic_pid" || true
# Open the per-queue sync-queue table of the busy share for the second shot.
click_widget "queues:$a"
traffic 4 || true
shot applet-shares-2
diff=$(compare -metric AE "$SA_SHOTS/applet-shares-1.png" "$SA_SHOTS/applet-shares-2.png" null: 2>&1 || true)
note "pixels that changed between the two shots: $diff"
[ "${diff%%.*}" -gt 100 ] 2>/dev/null || fail "the window did not change while data flowed ($diff pixels)"
echo "PASS"
