# SPDX-License-Identifier: GPL-2.0-or-later
# tests/session/share-unit.sh — sluice-share@TAG.service under the user
# manager, as README.md tells a user to use it: enable --now starts the
# share; a worker crash the service recovers from keeps the unit active; a
# new login starts the share again; disable --now stops it; a share that
# fails for good fails the unit.  Sourced by in-namespace.sh.

# share_worker TAG — the one running worker of the share (in sluice-service's
# cgroup), or nothing.
share_worker() {
        local pids
        share_is "$1" running || return 0
        pids=$(unit_pids sluice-service.service sluice-fs)
        [ "$(count_lines "$pids")" = 1 ] && echo "$pids"
}

# share_runs_anew TAG OLD_PID — true once the share runs with a worker that is
# not OLD_PID.
share_runs_anew() {
        local pid
        pid=$(share_worker "$1")
        [ -n "$pid" ] && [ "$pid" != "$2" ]
}

case_share_unit() {
        # A "-" in the tag: %i keeps it (%I would turn it into "/").
        local tag=my-docs share=$session_home/Documents unit main worker status
        unit=sluice-share@$tag.service
        as_user mkdir -p "$share"
        ctl add "$share" --tag "$tag" --no-autostart

        user_ctl enable --now "$unit" || fail "systemctl --user enable --now $unit failed"
        unit_is "$unit" active || fail "$unit is $(unit_prop "$unit" ActiveState) after enable --now"
        worker=$(share_worker "$tag")
        [ -n "$worker" ] || fail "enable --now returned, but the share is $(share_field "$tag" state)"
        status=$(unit_prop "$unit" StatusText)
        [ "${status#"$tag: "}" != "$status" ] || fail "$unit's status line: '$status'"
        pass "enable --now: $unit active ('$status'), the share runs (worker $worker)"

        main=$(unit_prop "$unit" MainPID)
        kill -KILL "$worker"
        wait_for 60 share_runs_anew "$tag" "$worker" ||
                fail "after SIGKILL of its worker the share is $(share_field "$tag" state)"
        unit_is "$unit" active && [ "$(unit_prop "$unit" MainPID)" = "$main" ] &&
                [ "$(unit_prop "$unit" NRestarts)" = 0 ] ||
                fail "a recovered worker crash disturbed $unit: $(unit_prop "$unit" ActiveState), MainPID $(unit_prop "$unit" MainPID) (was $main), NRestarts=$(unit_prop "$unit" NRestarts)"
        pass "worker SIGKILLed: the service runs a new one (pid $(share_worker "$tag")), $unit stayed active, not restarted"

        login_end || fail "the logout did not go cleanly"
        # At logout the share stops before the service and the bus do: no
        # client saw the service vanish, the service did not lose its bus.
        ! grep -E "sluice-service stopped|cannot connect to the session bus" "$session_work/units.log" ||
                fail "the logout stopped things out of order (above)"
        [ -z "$(pgrep -u "$session_user" -x sluice-service | while read -r p; do
                [ "$(readlink "/proc/$p/ns/mnt")" = "$(readlink /proc/self/ns/mnt)" ] && echo "$p"; done)" ] ||
                fail "sluice-service outlived the logout"
        login_start || fail "the user manager did not start again"
        wait_for 150 unit_is "$unit" active || fail "after a new login, $unit is $(unit_prop "$unit" ActiveState)"
        worker=$(share_worker "$tag")
        [ -n "$worker" ] || fail "after a new login the share is $(share_field "$tag" state)"
        pass "a new login: $unit active again, the share runs (worker $worker)"

        user_ctl disable --now "$unit" || fail "systemctl --user disable --now $unit failed"
        [ "$(unit_prop "$unit" ActiveState)" = inactive ] && [ "$(unit_prop "$unit" Result)" = success ] ||
                fail "after disable --now, $unit is $(unit_prop "$unit" ActiveState) ($(unit_prop "$unit" Result))"
        [ "$(user_ctl is-enabled "$unit")" = disabled ] || fail "$unit is $(user_ctl is-enabled "$unit") after disable"
        share_is "$tag" stopped || fail "after disable --now the share is $(share_field "$tag" state)"
        wait_for 30 pid_gone "$worker" || fail "the worker $worker outlived disable --now"
        pass "disable --now: $unit inactive (Result=success) and disabled, the share stopped, its worker gone"

        # For good: the folder is gone when the service restarts the crashed
        # worker, and at every start after.  Restart=on-failure tries again
        # (RestartSec=5) until StartLimitBurst=5 within a minute: then failed.
        user_ctl start "$unit" || fail "systemctl --user start $unit failed"
        worker=$(share_worker "$tag")
        [ -n "$worker" ] || fail "started again, the share is $(share_field "$tag" state)"
        as_user mv "$share" "$share.gone"
        kill -KILL "$worker"
        wait_for 150 unit_is "$unit" failed ||
                fail "the share's folder gone, $unit is $(unit_prop "$unit" ActiveState) ($(unit_prop "$unit" Result))"
        share_is "$tag" failed || fail "the unit failed, but the share is $(share_field "$tag" state)"
        pass "a share that fails for good: $unit failed (Result=$(unit_prop "$unit" Result), NRestarts=$(unit_prop "$unit" NRestarts)), the share failed"
        as_user mv "$share.gone" "$share"
        user_ctl reset-failed "$unit"
}
