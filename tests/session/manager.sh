# SPDX-License-Identifier: GPL-2.0-or-later
# tests/session/manager.sh — the test user's login: a real `systemd --user`
# and the commands a user types in that session.  Sourced by in-namespace.sh
# (bash, inside the private mount namespace run.sh made), after tests/lib.sh.
#
# Needs: session_user, session_work (the run's folder), session_cgroup (the
# run's cgroup v2 folder, owned by root), session_cgroot (the v2 hierarchy's
# mount point).  A login is:
#   login_start   the manager starts, as a session does at login (its own
#                 cgroup folder, the 0700 runtime folder, dbus.socket: the
#                 session bus at $XDG_RUNTIME_DIR/bus)
#   login_end     SIGTERM: the manager goes to exit.target and stops every
#                 unit, as at logout; its cgroup folders are removed
# and stopping it and starting it again is a new login (the home stays).

# The user's session environment, as a terminal in that session has it.
session_runtime=$session_work/run
session_home=$(getent passwd "$session_user" | cut -d: -f6)
session_path=/usr/local/bin:/usr/bin:/bin
login_count=0
manager_pid=

# as_user COMMAND… — COMMAND as the user, in the session (its bus, its
# runtime folder, its home), with nothing of the test's own environment.
as_user_prefix session_as_user "$session_user"
as_user() {
        "${session_as_user[@]}" env -i HOME="$session_home" USER="$session_user" LOGNAME="$session_user" \
                PATH="$session_path" LANG=C.UTF-8 XDG_RUNTIME_DIR="$session_runtime" \
                DBUS_SESSION_BUS_ADDRESS="unix:path=$session_runtime/bus" \
                ${DISPLAY:+DISPLAY="$DISPLAY"} "$@"
}

# user_ctl ARGS… — systemctl --user ARGS…, as the user types it.
user_ctl() { as_user systemctl --user --no-pager "$@"; }

# unit_prop UNIT PROPERTY — one property's value (systemctl show).
unit_prop() { user_ctl show -p "$2" --value "$1"; }

# unit_is UNIT STATE — true when UNIT's ActiveState is STATE (for wait_for).
unit_is() { [ "$(unit_prop "$1" ActiveState)" = "$2" ]; }

# unit_pids UNIT NAME — the processes called NAME (their comm) in UNIT's
# cgroup and below, one a line.
unit_pids() {
        local cg
        cg=$(unit_prop "$1" ControlGroup)
        [ -n "$cg" ] && [ -d "$session_cgroot$cg" ] || return 0
        cgroup_pids "$session_cgroot$cg" "$2"
}

# cgroup_pids FOLDER NAME — the processes called NAME in FOLDER and below.
cgroup_pids() {
        local procs pid
        while IFS= read -r procs; do
                while IFS= read -r pid; do
                        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && echo "$pid"
                done <"$procs"
        done < <(find "$1" -name cgroup.procs 2>/dev/null)
}

# session_pids NAME — the processes called NAME anywhere in this login.
session_pids() { cgroup_pids "$login_cgroup" "$1"; }

# count_lines TEXT — how many non-empty lines.
count_lines() { printf '%s' "$1" | grep -c . ; }

# login_start — the manager runs and its startup is finished; returns 1 when
# not (the manager's log is in the test's output then).
login_start() {
        local state
        login_count=$((login_count + 1))
        login_cgroup=$session_cgroup/login-$login_count
        manager_log=$session_work/manager-$login_count.log
        mkdir -p "$session_runtime"
        chown "$session_user:" "$session_runtime"
        chmod 0700 "$session_runtime"
        # The manager makes init.scope and its slices under the folder it
        # starts in: it must be the user's (as logind's user@UID.service is).
        mkdir "$login_cgroup" && chown -R "$session_user:" "$login_cgroup" || return 1
        (
                echo "$BASHPID" >"$login_cgroup/cgroup.procs" || exit 1
                exec "${session_as_user[@]}" \
                        env -i HOME="$session_home" USER="$session_user" LOGNAME="$session_user" \
                        SHELL=/bin/bash PATH="$session_path" LANG=C.UTF-8 \
                        XDG_RUNTIME_DIR="$session_runtime" ${session_manager_env[@]+"${session_manager_env[@]}"} \
                        /usr/lib/systemd/systemd --user
        ) >>"$manager_log" 2>&1 </dev/null &
        manager_pid=$!
        note "login $login_count: systemd --user (pid $manager_pid)"
        if ! wait_for 90 manager_started; then
                note "the user manager did not finish starting; its log:"
                cat "$manager_log"
                return 1
        fi
        state=$(user_ctl is-system-running)
        [ "$state" = running ] || note "the manager says $state: $(user_ctl --state=failed list-units --plain --no-legend)"
        wait_for 30 test -S "$session_runtime/bus" || { note "no session bus at $session_runtime/bus"; return 1; }
        note "login $login_count: the manager is $state"
}

manager_started() {
        kill -0 "$manager_pid" 2>/dev/null || return 1
        case $(user_ctl is-system-running 2>/dev/null) in
        running | degraded) return 0 ;;
        *) return 1 ;;
        esac
}

# login_end — logout: SIGTERM to the manager (it starts exit.target and
# stops every unit); after 90 s, or when it is gone, whatever is left in its
# cgroup is killed and the folders are removed.  Returns 1 when the manager
# did not exit by itself.
login_end() {
        local rc=0
        [ -n "$manager_pid" ] || return 0
        kill -TERM "$manager_pid" 2>/dev/null
        if ! wait_for 90 pid_gone "$manager_pid"; then
                note "the user manager did not exit within 90 s of SIGTERM"
                rc=1
        fi
        wait "$manager_pid" 2>/dev/null
        manager_pid=
        cgroup_remove "$login_cgroup" || rc=1
        return $rc
}

# cgroup_remove FOLDER — kills what is left in FOLDER (cgroup.kill), waits
# until it is empty and removes it, deepest folders first.
cgroup_remove() {
        [ -d "$1" ] || return 0
        echo 1 >"$1/cgroup.kill" 2>/dev/null
        wait_for 30 cgroup_empty "$1" || { note "processes are left in $1"; return 1; }
        find "$1" -depth -type d -exec rmdir {} + 2>/dev/null
        [ ! -d "$1" ] || { note "cannot remove $1"; return 1; }
}

cgroup_empty() { grep -c '^populated 0$' "$1/cgroup.events" >/dev/null; }

# ctl ARGS… — sluicectl ARGS… as the user types it (the installed one);
# fails the case when it fails.
ctl() {
        local out
        out=$(as_user "$sluicectl" "$@" 2>&1) || fail "sluicectl $*: $out"
}

# share_field TAG FIELD — a field of the share TAG in `sluicectl --json list`.
share_field() {
        as_user "$sluicectl" --json list 2>/dev/null | python3 -c '
import json, sys
for share in json.load(sys.stdin):
    if share["tag"] == sys.argv[1]:
        print(share[sys.argv[2]])' "$1" "$2"
}

# share_is TAG STATE — true when the share TAG is in STATE (for wait_for).
share_is() { [ "$(share_field "$1" state)" = "$2" ]; }

# bus_owner_pid NAME — the process that owns NAME on the session bus.
bus_owner_pid() { as_user busctl --user status "$1" 2>/dev/null | sed -n 's/^PID=//p'; }

# bus_has_owner NAME — true while someone owns NAME on the session bus.
bus_has_owner() { [ -n "$(bus_owner_pid "$1")" ]; }
