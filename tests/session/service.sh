# SPDX-License-Identifier: GPL-2.0-or-later
# tests/session/service.sh — sluice-service.service under the user manager:
# started by D-Bus activation (a sluicectl call), started and stopped with
# systemctl; stopping it stops its workers.  Sourced by in-namespace.sh.

case_service() {
        local unit=sluice-service.service tag=my-docs share=$session_home/Documents
        local pid owner workers worker
        as_user mkdir -p "$share"
        unit_is "$unit" inactive || fail "$unit is $(unit_prop "$unit" ActiveState) before anyone asked for it"

        # The first call activates the service: through the manager, so the
        # unit's process is the one on the bus.
        ctl list
        wait_for 30 unit_is "$unit" active || fail "after a sluicectl call, $unit is $(unit_prop "$unit" ActiveState)"
        pid=$(unit_prop "$unit" MainPID)
        owner=$(bus_owner_pid org.sluice.Sluice1)
        [ "$pid" != 0 ] && [ "$pid" = "$owner" ] ||
                fail "$unit's MainPID is $pid, but org.sluice.Sluice1 is owned by ${owner:-nobody}"
        pass "a sluicectl call started $unit through the manager: active, its MainPID $pid owns org.sluice.Sluice1"

        ctl add "$share" --tag "$tag" --no-autostart
        ctl start "$tag"
        share_is "$tag" running || fail "the share is $(share_field "$tag" state) after sluicectl start"
        workers=$(unit_pids "$unit" sluice-fs)
        [ "$(count_lines "$workers")" = 1 ] || fail "sluice-fs processes in $unit: ${workers:-none}"
        worker=$workers
        pass "the share's worker (pid $worker) runs in $unit's cgroup"

        user_ctl stop "$unit" || fail "systemctl --user stop $unit failed"
        [ "$(unit_prop "$unit" ActiveState)" = inactive ] && [ "$(unit_prop "$unit" Result)" = success ] ||
                fail "after stop, $unit is $(unit_prop "$unit" ActiveState) ($(unit_prop "$unit" Result))"
        pid_gone "$worker" || fail "the worker $worker outlived $unit"
        [ -z "$(session_pids sluice-fs)" ] || fail "sluice-fs processes left: $(session_pids sluice-fs)"
        ! bus_has_owner org.sluice.Sluice1 || fail "org.sluice.Sluice1 is still owned after stop"
        pass "systemctl --user stop: $unit inactive (Result=success), its worker gone, the bus name released"

        user_ctl start "$unit" || fail "systemctl --user start $unit failed"
        unit_is "$unit" active || fail "after start, $unit is $(unit_prop "$unit" ActiveState)"
        pid=$(unit_prop "$unit" MainPID)
        [ "$pid" = "$(bus_owner_pid org.sluice.Sluice1)" ] || fail "after start, the bus name is not $unit's"
        [ "$(share_field "$tag" state)" = stopped ] || fail "the share after a restart: $(share_field "$tag" state)"
        pass "systemctl --user start: $unit active (pid $pid owns the name), the share is listed again"
        ctl start "$tag"
        user_ctl stop "$unit" || fail "systemctl --user stop $unit failed"
        [ -z "$(session_pids sluice-fs)" ] || fail "sluice-fs processes left after the second stop"
        [ "$(unit_prop "$unit" Result)" = success ] || fail "second stop: Result=$(unit_prop "$unit" Result)"
        pass "stopped with a running share again: no worker left, Result=success"
}
