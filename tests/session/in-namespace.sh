#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/session/in-namespace.sh CASE… — run.sh's second half, inside the
# private mount namespace it made (as root): lays out what the user manager
# needs and runs each case in a login of its own.  run.sh exports session_*
# (manager.sh lists them; also session_prefix, session_sysconfdir,
# session_dest: the DESTDIR for --build, empty for --installed;
# session_test_vmm; session_mode).
#
# The manager starts only where sd_booted() holds, i.e. /run/systemd/system
# exists: an empty one, in this namespace only.  With --build, the DESTDIR's
# prefix (and its configuration folder, when outside the prefix) is laid over
# the real one (overlayfs: the machine's own files stay visible beneath), so
# the units, sluicectl, the D-Bus activation file and the autostart entry are
# where an installation puts them.  The user's home is a fresh folder of the
# run's, mounted over the real one: what a case writes to ~/.config (enabled
# units, environment.d, sluice's shares) is gone with the run.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
. "$here/manager.sh"

readlink /proc/self/ns/mnt >"$session_work/mntns"
# The caller's display is not the test session's (autostart.sh starts one).
unset DISPLAY WAYLAND_DISPLAY

# lay_over DIR — DESTDIR's DIR over DIR (overlayfs; a bind mount where the
# kernel has no overlayfs).
lay_over() {
        local upper=$session_dest$1
        [ -d "$upper" ] || return 0
        mkdir -p "$1" || return 1
        mount -t overlay overlay -o "ro,lowerdir=$upper:$1" "$1" 2>/dev/null ||
                mount --bind "$upper" "$1"
}

mkdir -p "$session_work/run-systemd/system"
chmod -R 0755 "$session_work/run-systemd"
mkdir -p /run/systemd
mount --bind "$session_work/run-systemd" /run/systemd || fail "cannot mount over /run/systemd"
# No journald here: a small reader stands in at its sockets
# (journal-stream.py), so a failing case can show what the units printed.
python3 "$here/journal-stream.py" "$session_work/run-systemd/journal" "$session_work/units.log" &
journal_pid=$!

if [ -n "$session_dest" ]; then
        lay_over "$session_prefix" || fail "cannot lay $session_dest$session_prefix over $session_prefix"
        case $session_sysconfdir/ in
        "$session_prefix"/*) ;;
        *) lay_over "$session_sysconfdir" || fail "cannot lay the DESTDIR's $session_sysconfdir over it" ;;
        esac
fi
# The manager's environment: where a login finds what was installed.  An
# installation under another prefix than /usr needs the XDG lists to name
# it (the generator reads the autostart folders from XDG_CONFIG_DIRS,
# dbus-daemon its activation files from XDG_DATA_DIRS); /usr needs nothing.
session_manager_env=()
if [ "$session_prefix" != /usr ]; then
        session_manager_env+=("XDG_CONFIG_DIRS=$session_sysconfdir/xdg:/etc/xdg"
                "XDG_DATA_DIRS=$session_prefix/share:/usr/local/share:/usr/share")
fi

sluicectl=$session_prefix/bin/sluicectl
[ -x "$session_dest$sluicectl" ] || fail "$session_dest$sluicectl is not installed"
wait_for 30 test -S "$session_work/run-systemd/journal/socket" || fail "journal-stream.py did not start"

mkdir -p "$session_work/home"
mount --bind "$session_work/home" "$session_home" || fail "cannot mount a fresh home over $session_home"

# configure_session — what the user set up before logging in, as a user
# would: the session's environment (environment.d, read by the manager at
# login and handed to every unit, D-Bus activated ones too).
configure_session() {
        as_user mkdir -p "$session_home/.config/environment.d"
        as_user tee "$session_home/.config/environment.d/60-sluice-test.conf" >/dev/null <<'CONF'
# The test machines' VMs are not this session's business: Sluice without
# libvirt (sluice-service(1), SLUICE_LIBVIRT_URIS).
SLUICE_LIBVIRT_URIS=none
CONF
}

failed=0 passed=0 skipped=0
for name in "$@"; do
        # A case's login: a fresh home and runtime folder; the case runs in a
        # subshell (fail ends the case, not the run), logs out at its end.
        find "$session_home" -mindepth 1 -delete
        chown "$session_user:" "$session_home"
        chmod 0755 "$session_home"
        # A tmpfs, as logind mounts on /run/user/UID: systemd removes a
        # unit's RuntimeDirectory= with what is left in it only on tmpfs.
        ! mountpoint -q "$session_runtime" || umount "$session_runtime"
        rm -rf "$session_runtime"
        mkdir -p "$session_runtime"
        mount -t tmpfs -o mode=0700,size=64m sluice-runtime "$session_runtime" ||
                fail "cannot mount a tmpfs on $session_runtime"
        : >"$session_work/units.log"
        test_t0=$EPOCHREALTIME
        (
                end_case() {
                        local status=$?
                        trap - EXIT
                        login_end || status=1
                        [ "$(type -t case_cleanup)" != function ] || case_cleanup
                        # the workers' sockets' folder in /tmp (service/socket-dir.h)
                        sockets=$(readlink "$session_runtime/sluice/sockets" 2>/dev/null)
                        case $sockets in
                        /tmp/sluice-*) rm -rf "$sockets" ;; # it outlives the service on purpose (a restart finds it again)
                        esac
                        if [ $status != 0 ] && [ $status != 77 ]; then
                                echo "----- the units' output"
                                tail -n 80 "$session_work/units.log"
                                for log in "$session_work"/manager-*.log; do
                                        [ -s "$log" ] && { echo "----- $log"; tail -n 30 "$log"; }
                                done
                        elif [ -n "${SLUICE_SESSION_LOG:-}" ]; then
                                cat "$session_work/units.log"
                        fi
                        exit $status
                }
                trap end_case EXIT
                . "$here/$name.sh"
                configure_session
                login_start || fail "the user manager did not start"
                "case_${name//-/_}"
        )
        status=$?
        # Nothing of the case may be left: no process in its cgroup folders,
        # no process of the user's in this namespace.
        left=$(find "$session_cgroup" -mindepth 1 -maxdepth 1 -type d)
        [ -z "$left" ] || { echo "FAIL: $name left cgroup folders: $left"; status=1; }
        case $status in
        0) echo "PASS: $name ($(since "$test_t0") s)"; passed=$((passed + 1)) ;;
        77) echo "SKIP: $name"; skipped=$((skipped + 1)) ;;
        *) echo "FAIL: $name ($(since "$test_t0") s)"; failed=$((failed + 1)) ;;
        esac
done
kill "$journal_pid" 2>/dev/null
wait "$journal_pid" 2>/dev/null
[ $failed = 0 ] || exit 1
[ $passed = 0 ] && [ $skipped -gt 0 ] && exit 77
exit 0
