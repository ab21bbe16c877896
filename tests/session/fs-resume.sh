# SPDX-License-Identifier: GPL-2.0-or-later
# tests/session/fs-resume.sh — sluice-fs@NAME.service keeps its frontend
# across its own death and a restart into a rebuilt binary: the unit's fd
# store (FileDescriptorStoreMax=, --resume) holds the connection, memory,
# rings and tables, and the next worker takes them up.  A frontend
# (sluice-test-vmm, one connection, as a guest's mount) reads a file in a
# loop through `systemctl --user kill -s KILL` and `systemctl --user
# restart` after the binary was replaced; not one read may fail.  Sourced
# by in-namespace.sh.  Without the test VMM there is no frontend: skipped.

# reads_past STATE N — true once the loop in STATE has done more than N good reads.
reads_past() { [ "$(cat "$1/count" 2>/dev/null || echo 0)" -gt "$2" ]; }

# worker_replaced UNIT OLD_PID — UNIT active with another MainPID.
worker_replaced() {
        local pid
        unit_is "$1" active || return 1
        pid=$(unit_prop "$1" MainPID)
        [ "$pid" != 0 ] && [ "$pid" != "$2" ]
}

# loop_alive PID — the read loop has not ended (it ends at its first failure
# when the connection goes).
loop_alive() { kill -0 "$1" 2>/dev/null; }

case_fs_resume() {
        local name=resume-docs share=$session_home/Resume unit pid exe rebuilt state loop n vmm=$session_test_vmm
        unit=sluice-fs@$name.service
        [ -n "$vmm" ] || skip "no test VMM (SLUICE_TEST_VMM) for a frontend"
        as_user mkdir -p "$share" "$session_home/.config/sluice/fs"
        as_user sh -c 'printf hello >"$1/hello.txt"' sh "$share"
        as_user tee "$session_home/.config/sluice/fs/$name.conf" >/dev/null <<CONF
SHARED_DIR=$share
OPTIONS=
CONF
        user_ctl daemon-reload
        [ "$(unit_prop "$unit" FileDescriptorStoreMax)" -gt 0 ] ||
                fail "$unit has no fd store (FileDescriptorStoreMax=$(unit_prop "$unit" FileDescriptorStoreMax))"
        user_ctl start "$unit" || fail "systemctl --user start $unit failed: $(user_ctl status "$unit" 2>&1 | tail -5)"
        pid=$(unit_prop "$unit" MainPID)
        tr '\0' ' ' <"/proc/$pid/cmdline" | grep -c -- ' --resume' >/dev/null ||
                fail "the worker runs without --resume: $(tr '\0' ' ' <"/proc/$pid/cmdline")"

        state=$session_home/read-loop
        as_user mkdir -p "$state"
        install -m 0755 -o "$session_user" "$here/read-loop.py" "$session_home/read-loop.py"
        as_user python3 "$session_home/read-loop.py" "$vmm" "$session_runtime/sluice-fs/$name/socket" \
                hello.txt hello "$state" &
        loop=$!
        wait_for 30 reads_past "$state" 20 || fail "the frontend's read loop did not get going: $(cat "$state/failures" 2>/dev/null)"
        pass "a frontend reads hello.txt in a loop over one connection to worker $pid"

        # ---- killed: the unit restarts it at once with its store ----
        n=$(cat "$state/count")
        user_ctl kill -s KILL "$unit" || fail "systemctl --user kill -s KILL $unit failed"
        wait_for 30 worker_replaced "$unit" "$pid" || fail "$unit did not come back after SIGKILL: $(unit_prop "$unit" ActiveState)"
        wait_for 30 reads_past "$state" $((n + 20)) ||
                fail "the reads stopped after the SIGKILL: $(cat "$state/failures" 2>/dev/null)"
        loop_alive "$loop" || fail "the read loop ended: $(cat "$state/failures" 2>/dev/null)"
        [ ! -e "$state/failures" ] || fail "reads failed across the SIGKILL: $(cat "$state/failures")"
        pass "SIGKILL of worker $pid: worker $(unit_prop "$unit" MainPID) took the connection over, no read failed"

        # ---- a rebuilt binary, then a restart into it ----
        pid=$(unit_prop "$unit" MainPID)
        exe=$(readlink "/proc/$pid/exe")
        # another file with the same code where the unit's ExecStart looks,
        # as an upgrade leaves it; the install is a read-only layer here
        # (in-namespace.sh), so the new file is mounted over the old one
        rebuilt=$session_work/sluice-fs.rebuilt
        cp "$exe" "$rebuilt" && printf '\0' >>"$rebuilt" && chmod 0755 "$rebuilt" &&
                mount --bind "$rebuilt" "$exe" || fail "cannot replace $exe"
        case_cleanup() { umount "$exe" 2>/dev/null; }
        n=$(cat "$state/count")
        user_ctl restart "$unit" || fail "systemctl --user restart $unit failed"
        wait_for 30 worker_replaced "$unit" "$pid" || fail "$unit did not come back after restart"
        [ "$(stat -L -c %i "/proc/$(unit_prop "$unit" MainPID)/exe")" = "$(stat -c %i "$rebuilt")" ] ||
                fail "the restarted worker does not run the rebuilt $exe"
        wait_for 30 reads_past "$state" $((n + 20)) ||
                fail "the reads stopped after the restart: $(cat "$state/failures" 2>/dev/null)"
        [ ! -e "$state/failures" ] || fail "reads failed across the restart: $(cat "$state/failures")"
        pass "systemctl --user restart into the replaced $exe: worker $(unit_prop "$unit" MainPID) serves on, no read failed"

        as_user touch "$state/stop"
        wait "$loop" || fail "the read loop saw a failure: $(cat "$state/failures" 2>/dev/null)"
        pass "$(cat "$state/count") reads, none failed"
        user_ctl stop "$unit" || fail "systemctl --user stop $unit failed"
}
