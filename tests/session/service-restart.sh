# SPDX-License-Identifier: GPL-2.0-or-later
# tests/session/service-restart.sh — `systemctl --user restart
# sluice-service` takes no share down: the service hands its workers over,
# keeps their stores in its unit's fd store (FileDescriptorStoreMax=) and
# the next service's worker resumes the same connection.  A frontend
# (sluice-test-vmm, one connection, as a guest's mount) reads a file of a
# running share in a loop across the restart: not one read may fail.  A stop
# afterwards still ends everything: the frontend sees its connection end.
# Sourced by in-namespace.sh.  Without the test VMM there is no frontend:
# skipped.

# reads_past STATE N — true once the loop in STATE has done more than N good reads.
reads_past() { [ "$(cat "$1/count" 2>/dev/null || echo 0)" -gt "$2" ]; }

# service_replaced UNIT OLD_PID — UNIT active with another MainPID.
service_replaced() {
        local pid
        unit_is "$1" active || return 1
        pid=$(unit_prop "$1" MainPID)
        [ "$pid" != 0 ] && [ "$pid" != "$2" ]
}

# one_worker_not UNIT PID — UNIT runs one sluice-fs, and it is not PID.
one_worker_not() {
        local workers
        workers=$(unit_pids "$1" sluice-fs)
        [ "$(count_lines "$workers")" = 1 ] && [ "$workers" != "$2" ]
}

# vmm_peer_gone PID — the unix sockets of process PID (the test VMM's
# vhost-user connection) all have no peer left (ss shows peer inode 0).
vmm_peer_gone() {
        local lines
        lines=$(ss -xpn | grep -F "pid=$1,") || return 1
        ! printf '%s\n' "$lines" | awk '$8 != 0 { found = 1 } END { exit !found }'
}

# logged_times TEXT N — the units' output has N lines with TEXT.
logged_times() { [ "$(grep -c -F -- "$1" "$session_work/units.log")" = "$2" ]; }

case_service_restart() {
        local unit=sluice-service.service tag=kept-docs share=$session_home/Kept
        local pid worker socket state loop n round vmm_pid vmm=$session_test_vmm
        [ -n "$vmm" ] || skip "no test VMM (SLUICE_TEST_VMM) for a frontend"
        as_user mkdir -p "$share"
        as_user sh -c 'printf hello >"$1/hello.txt"' sh "$share"
        [ "$(unit_prop "$unit" FileDescriptorStoreMax)" -gt 0 ] ||
                fail "$unit has no fd store (FileDescriptorStoreMax=$(unit_prop "$unit" FileDescriptorStoreMax))"

        # autostart off: the share must come back because it ran, not
        # because the service starts it anyway
        ctl add "$share" --tag "$tag" --no-autostart
        ctl start "$tag"
        wait_for 30 share_is "$tag" running || fail "the share is $(share_field "$tag" state) after sluicectl start"
        pid=$(unit_prop "$unit" MainPID)
        worker=$(unit_pids "$unit" sluice-fs)
        [ "$(count_lines "$worker")" = 1 ] || fail "sluice-fs processes in $unit: ${worker:-none}"
        socket=$(share_field "$tag" socket_path)
        [ -S "$socket" ] || fail "the share's socket ${socket:-(none)} is not there"

        state=$session_home/read-loop
        as_user mkdir -p "$state"
        install -m 0755 -o "$session_user" "$here/read-loop.py" "$session_home/read-loop.py"
        as_user python3 "$session_home/read-loop.py" "$vmm" "$socket" hello.txt hello "$state" &
        loop=$!
        wait_for 30 reads_past "$state" 20 || fail "the frontend's read loop did not get going: $(cat "$state/failures" 2>/dev/null)"
        vmm_pid=$(pgrep -u "$session_user" -f -- "--socket $socket session") ||
                fail "no test VMM process for $socket"
        ! vmm_peer_gone "$vmm_pid" ||
                fail "ss shows no peer for the frontend's connection while it is served: $(ss -xpn | grep -F "pid=$vmm_pid,")"
        pass "a frontend reads hello.txt in a loop over one connection to worker $worker of service $pid"

        # ---- restarts: each next service's worker takes the connection over
        # (the second hands over a worker that itself resumed) ----
        for round in 1 2; do
                n=$(cat "$state/count")
                user_ctl restart "$unit" || fail "systemctl --user restart $unit failed"
                wait_for 30 service_replaced "$unit" "$pid" || fail "$unit did not come back after restart $round"
                wait_for 30 reads_past "$state" $((n + 20)) ||
                        fail "the reads stopped after restart $round: $(cat "$state/failures" 2>/dev/null)"
                kill -0 "$loop" 2>/dev/null || fail "the read loop ended: $(cat "$state/failures" 2>/dev/null)"
                [ ! -e "$state/failures" ] || fail "reads failed across restart $round: $(cat "$state/failures")"
                logged_times "SIGTERM: the user manager restarts the unit (job type restart)" $round ||
                        fail "the service did not see SIGTERM $round as a restart"
                wait_for 30 one_worker_not "$unit" "$worker" ||
                        fail "no new worker in $unit after restart $round: $(unit_pids "$unit" sluice-fs)"
                wait_for 30 logged_times "sluice-fs for $tag resumed what the previous service's worker served" $round ||
                        fail "the new worker did not resume: $(grep -F "sluice-fs for $tag" "$session_work/units.log" | tail -3)"
                share_is "$tag" running || fail "after restart $round the share is $(share_field "$tag" state)"
                pid=$(unit_prop "$unit" MainPID)
                worker=$(unit_pids "$unit" sluice-fs)
                pass "systemctl --user restart ($round): service $pid, worker $worker resumed the connection, no read failed, the share runs"
        done

        # ---- a stop still ends everything: the frontend sees the end ----
        worker=$(unit_pids "$unit" sluice-fs)
        user_ctl stop "$unit" || fail "systemctl --user stop $unit failed"
        [ "$(unit_prop "$unit" ActiveState)" = inactive ] && [ "$(unit_prop "$unit" Result)" = success ] ||
                fail "after stop, $unit is $(unit_prop "$unit" ActiveState) ($(unit_prop "$unit" Result))"
        pid_gone "$worker" || fail "the worker $worker outlived $unit"
        # the test VMM does not end its session when the backend hangs up
        # (a read then times out), so its socket is asked: once nothing holds
        # the other end any more, ss shows its peer as 0
        wait_for 30 vmm_peer_gone "$vmm_pid" ||
                fail "the frontend's connection is still open after the stop: $(ss -xpn | grep -F "pid=$vmm_pid,")"
        as_user touch "$state/stop"
        kill "$vmm_pid" 2>/dev/null
        wait "$loop" 2>/dev/null
        pass "systemctl --user stop: the worker is gone, nothing holds the frontend's connection any more"
}
