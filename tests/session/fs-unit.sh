# SPDX-License-Identifier: GPL-2.0-or-later
# tests/session/fs-unit.sh — sluice-fs@NAME.service under the user manager,
# for a QEMU started by hand: start returns once the socket accepts
# (Type=notify), the options file is read, the watchdog restarts a worker
# whose main loop hangs, stop ends it cleanly; the worker's metadata helper
# runs under the unit (RestrictNamespaces= lets it in).  Sourced by in-namespace.sh.
#
# The watchdog part adds a drop-in with WatchdogSec=3 (the unit's 30 s would
# make the case wait half a minute); the unit is otherwise as installed.

# connects NAME — true when a client can connect to the worker's socket at
# once (no retry: the point is that it is there when start returns).
connects() {
        as_user python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])' "$session_runtime/sluice-fs/$1/socket"
}

# restarted UNIT OLD_PID — true once UNIT is active again with another MainPID.
restarted() {
        local pid
        unit_is "$1" active || return 1
        pid=$(unit_prop "$1" MainPID)
        [ "$pid" != 0 ] && [ "$pid" != "$2" ]
}

# pinged UNIT SINCE — true once UNIT's last watchdog ping is later than SINCE
# (WatchdogTimestampMonotonic).
pinged() { [ "$(unit_prop "$1" WatchdogTimestampMonotonic)" -gt "$2" ]; }

case_fs_unit() {
        local name=my-docs share=$session_home/Documents unit pid out since dropin vmm=$session_test_vmm
        unit=sluice-fs@$name.service
        as_user mkdir -p "$share" "$session_home/.config/sluice/fs"
        as_user sh -c 'printf hello >"$1/hello.txt"' sh "$share"
        as_user tee "$session_home/.config/sluice/fs/$name.conf" >/dev/null <<CONF
SHARED_DIR=$share
OPTIONS=--readonly
CONF
        dropin=$session_home/.config/systemd/user/sluice-fs@.service.d
        as_user mkdir -p "$dropin"
        as_user tee "$dropin/50-test-watchdog.conf" >/dev/null <<'CONF'
[Service]
WatchdogSec=3
CONF
        user_ctl daemon-reload

        user_ctl start "$unit" || fail "systemctl --user start $unit failed: $(user_ctl status "$unit" 2>&1 | tail -5)"
        connects "$name" || fail "start returned, but $session_runtime/sluice-fs/$name/socket does not accept"
        unit_is "$unit" active || fail "$unit is $(unit_prop "$unit" ActiveState) after start"
        pass "systemctl --user start $unit returned with the socket accepting; $(unit_prop "$unit" StatusText)"
        pid=$(unit_prop "$unit" MainPID)
        grep -c '^NoNewPrivs:[[:space:]]*1$' "/proc/$pid/status" >/dev/null &&
                grep -c '^Seccomp:[[:space:]]*2$' "/proc/$pid/status" >/dev/null ||
                fail "the worker runs without no-new-privileges or a seccomp filter"
        pass "the worker (pid $pid) runs with no-new-privileges and its seccomp filter"
        # The unit lets the worker's metadata helper (symlinks' times and
        # owner under the sandbox) into its user and mount namespaces.
        helper=$(pgrep -P "$pid" -x sluice-fs-meta) ||
                fail "no metadata helper beside worker $pid under $unit: $(user_ctl status "$unit" 2>&1 | grep -i 'metadata helper' | tail -1)"
        pass "the worker's metadata helper (pid $helper) runs under $unit"

        if [ -n "$vmm" ]; then
                out=$(as_user "$vmm" --socket "$session_runtime/sluice-fs/$name/socket" read hello.txt 2>&1)
                [ "$out" = hello ] || fail "a frontend read hello.txt as '$out'"
                out=$(as_user "$vmm" --socket "$session_runtime/sluice-fs/$name/socket" write new.txt x 2>&1) &&
                        fail "a frontend could write to a --readonly share"
                [ "$out" = "error: EROFS" ] && [ ! -e "$share/new.txt" ] || fail "a write to the share: '$out'"
                pass "OPTIONS=--readonly from $name.conf: a frontend reads the share, its write fails with EROFS"
        else
                tr '\0' ' ' <"/proc/$pid/cmdline" | grep -c -- ' --readonly' >/dev/null ||
                        fail "--readonly from $name.conf is not on the worker's command line"
                pass "OPTIONS=--readonly from $name.conf is on the worker's command line (no test VMM here to try a write: SLUICE_TEST_VMM)"
        fi

        # The watchdog: pings arrive while the loop runs; a stopped loop is
        # restarted (SIGABRT, then Restart=on-failure).
        since=$(unit_prop "$unit" WatchdogTimestampMonotonic)
        wait_for 30 pinged "$unit" "$since" || fail "no watchdog ping from $unit within 30 s"
        [ "$(unit_prop "$unit" NRestarts)" = 0 ] || fail "$unit restarted while its loop ran"
        kill -STOP "$pid"
        wait_for 60 restarted "$unit" "$pid" ||
                fail "the worker's loop stopped, yet $unit is $(unit_prop "$unit" ActiveState) with MainPID $(unit_prop "$unit" MainPID)"
        wait_for 30 pid_gone "$pid" || fail "the hung worker $pid is still there"
        connects "$name" || fail "the restarted worker does not accept"
        pass "worker $pid stopped (SIGSTOP): the watchdog restarted it (new pid $(unit_prop "$unit" MainPID), NRestarts=$(unit_prop "$unit" NRestarts)), it accepts again"

        pid=$(unit_prop "$unit" MainPID)
        user_ctl stop "$unit" || fail "systemctl --user stop $unit failed"
        [ "$(unit_prop "$unit" ActiveState)" = inactive ] && [ "$(unit_prop "$unit" Result)" = success ] ||
                fail "after stop, $unit is $(unit_prop "$unit" ActiveState) ($(unit_prop "$unit" Result))"
        pid_gone "$pid" || fail "the worker $pid outlived stop"
        [ ! -e "$session_runtime/sluice-fs/$name" ] || fail "the socket's folder is left after stop"
        pass "systemctl --user stop: $unit inactive (Result=success), the worker and its socket gone"
}
