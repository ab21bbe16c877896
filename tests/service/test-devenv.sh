#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/service/test-devenv.sh — Sluice run from its build tree, as a developer
# or a user trying it out without installing:
#   missing     SLUICE_FS points nowhere: the share's State is failed, its
#               Error says where the service looked and what to do, sluicectl
#               prints it, and the service's log has it once for that share
#               although the share was started twice;
#   build-tree  the build tree's sluice-service without SLUICE_FS runs the build
#               tree's sluice-fs; a copy of it elsewhere (as an installed one
#               is) does not, it looks only at the installed path;
#   devenv      `meson devenv -C BUILD` puts the build tree's sluice-service,
#               sluicectl (and sluice-applet) first on PATH and SLUICE_FS at the
#               build tree's worker; sluice-service and sluicectl started in it
#               work together: a share runs that build's sluice-fs.
# Runs the programs as $SLUICE_TEST_USER when root, as ourselves otherwise, on
# a private session bus.  Exit: 0 pass, 1 fail, 77 skip.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
build=${SLUICE_BUILD_ROOT:?SLUICE_BUILD_ROOT must point at the build directory}
build=$(cd "$build" && pwd)
service=$build/service/sluice-service sluicectl=$build/cli/sluicectl worker=$build/daemon/sluice-fs

need_tools dbus-daemon gdbus meson
for f in "$service" "$sluicectl" "$worker"; do [ -x "$f" ] || skip "$f is not built"; done

# Each check reports PASS or FAIL and the run goes on (fail_later, finish).

work=$(mktemp -d /tmp/sluice-devenv.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/run" "$work/config" "$work/home" "$work/share" "$work/copy"
chmod 700 "$work/run"
user_env=(PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="$work/home" LANG=C.UTF-8
          XDG_RUNTIME_DIR="$work/run" XDG_CONFIG_HOME="$work/config"
          DBUS_SESSION_BUS_ADDRESS="unix:path=$work/run/bus" SLUICE_LIBVIRT_URIS=none)
user=$(test_user) || exit 1
as_user_prefix as_user "$user"
[ "$(id -u)" != 0 ] || chown -R "$user:" "$work"
# meson test sets SLUICE_FS for the other service tests: not here
runu() { "${as_user[@]}" env -u SLUICE_FS "${user_env[@]}" "$@"; }
runu test -x "$service" -a -x "$worker" || skip "$user cannot run the build tree's programs in $build"

session_bus_pid= service_pid= job_pid=
stop_service() {
        [ -n "$service_pid" ] || return 0
        kill "$service_pid" 2>/dev/null
        wait_for 30 pid_gone "$service_pid" || fail_later "sluice-service did not exit within 30 s of SIGTERM"
        wait "$job_pid" 2>/dev/null
        service_pid= job_pid=
}
cleanup() {
        local status=$?
        stop_service
        [ -z "$session_bus_pid" ] || { kill "$session_bus_pid"; wait "$session_bus_pid"; } 2>/dev/null
        if [ "$status" != 0 ]; then
                for f in "$work"/service-*.log; do [ -f "$f" ] && { echo "---- $f"; tail -n 30 "$f"; }; done
        fi
        sockets=$(readlink "$work/run/sluice/sockets" 2>/dev/null)
        case $sockets in /tmp/sluice-*) rm -rf "$sockets" ;; esac
        rm -rf "$work"
}
trap cleanup EXIT

start_session_bus "$work/run/bus" /dev/null "${as_user[@]}" env -u SLUICE_FS "${user_env[@]}" ||
        fail "the session bus did not start"

service_up() {
        kill -0 "$service_pid" 2>/dev/null &&
        runu gdbus introspect --session -d org.sluice.Sluice1 -o /org/sluice/Sluice1 >/dev/null 2>&1
}
# start_service NAME COMMAND… — the service (COMMAND, run with $pidfile before the
# program) logging to service-NAME.log: the wrapper writes the service's own pid
# (shell functions and meson devenv run their command in a child)
pidfile=(sh -c 'echo $$ >"$0" && exec "$@"' "$work/service.pid")
start_service() {
        local name=$1; shift
        rm -f "$work/service.pid"
        "$@" >"$work/service-$name.log" 2>&1 &
        job_pid=$!
        wait_for 60 test -s "$work/service.pid" || { fail_later "$name: sluice-service did not start"; return 1; }
        service_pid=$(cat "$work/service.pid")
        wait_for 60 service_up || { fail_later "$name: sluice-service did not come up"; return 1; }
}
ctl() { runu "$sluicectl" "$@"; }
json_field() { # SHARE FIELD — a string field of the share in `sluicectl --json list`
        ctl --json list | python3 -c '
import json, sys
for s in json.load(sys.stdin):
    if s.get("tag") == sys.argv[1]:
        print(s.get(sys.argv[2], ""))' "$1" "$2"
}
has_state() { [ "$(json_field "$1" state)" = "$2" ]; }
worker_exe() { # the executable of this test's running sluice-fs (one share at a time)
        local pid sockets
        # the sockets' folder (/tmp/sluice-UID-XXXXXX), named by its link in the runtime folder
        sockets=$(readlink "$work/run/sluice/sockets") || return 1
        for pid in $(pgrep -u "$user" -f -- "--socket-path=$sockets/"); do
                readlink "/proc/$pid/exe" && return 0
        done
        return 1
}

# ---- missing: SLUICE_FS points nowhere ------------------------------------------------------
nowhere=$work/nowhere/sluice-fs
if start_service missing runu SLUICE_FS="$nowhere" "${pidfile[@]}" "$service"; then
        ctl add "$work/share" --tag nofs >/dev/null || fail_later "missing: sluicectl add"
        out1=$(ctl start nofs 2>&1); rc1=$?
        out2=$(ctl start nofs 2>&1); rc2=$?
        error=$(json_field nofs error)
        case $error in
        *"$nowhere"*SLUICE_FS*) pass "missing: the share's Error says where it looked and what to do: $error" ;;
        *) fail_later "missing: the share's Error is '$error'" ;;
        esac
        has_state nofs failed && pass "missing: State failed" || fail_later "missing: State $(json_field nofs state)"
        [ "$rc1" = 1 ] && [ "$rc2" = 1 ] && [ "$out1" = "sluicectl: $error" ] && [ "$out2" = "$out1" ] &&
                pass "missing: sluicectl start fails, both times, with that message" ||
                fail_later "missing: sluicectl start: $rc1 '$out1' / $rc2 '$out2'"
        n=$(grep -cF "nofs: $error" "$work/service-missing.log")
        [ "$n" = 1 ] && pass "missing: the service's log says it once for the share (started twice)" ||
                fail_later "missing: the service's log says it $n times"
        ctl remove nofs >/dev/null || fail_later "missing: sluicectl remove"
        stop_service
fi

# ---- build-tree: no SLUICE_FS, the build tree's service; then a copy of it -----------------------
if start_service build-tree runu "${pidfile[@]}" "$service"; then
        ctl add "$work/share" --tag tree >/dev/null && ctl start tree >/dev/null || fail_later "build-tree: add/start: $(json_field tree error)"
        exe=$(worker_exe)
        has_state tree running && [ "$exe" = "$worker" ] &&
                pass "build-tree: the build tree's service runs the build tree's sluice-fs" ||
                fail_later "build-tree: state $(json_field tree state), worker $exe: $(json_field tree error)"
        ctl remove tree >/dev/null
        stop_service
fi
cp "$service" "$work/copy/sluice-service"
chmod 755 "$work/copy/sluice-service"
installed=$(python3 -c '
import json, os, sys
opts = {o["name"]: o["value"] for o in json.load(open(sys.argv[1]))}
print(os.path.join(opts["prefix"], opts["libexecdir"], "sluice-fs"))' "$build/meson-info/intro-buildoptions.json")
if start_service copy runu "${pidfile[@]}" "$work/copy/sluice-service"; then
        ctl add "$work/share" --tag copy >/dev/null
        ctl start copy >/dev/null 2>&1
        exe=$(worker_exe)
        if [ -x "$installed" ]; then
                [ "$exe" = "$installed" ] && pass "copy: a service outside the build tree runs the installed $installed" ||
                        fail_later "copy: its worker is '$exe', not the installed $installed"
        else
                error=$(json_field copy error)
                case $error in
                *"not installed at $installed"*"meson devenv"*SLUICE_FS*) pass "copy: a service outside the build tree does not take the build tree's sluice-fs: $error" ;;
                *) fail_later "copy: state $(json_field copy state), worker '$exe', Error '$error'" ;;
                esac
        fi
        ctl remove copy >/dev/null
        stop_service
fi

# ---- devenv: meson devenv -C BUILD ---------------------------------------------------------
# COMMAND run the way the README says: `meson devenv -C BUILD COMMAND`, as the
# user, with the user's bus and folders; PATH and SLUICE_FS are devenv's
devenv_user() { env -u SLUICE_FS meson devenv -C "$build" "${as_user[@]}" env "${user_env[@]:1}" "$@"; }
{ IFS= read -r SLUICE_FS_DEVENV; IFS= read -r PATH_DEVENV; } < <(devenv_user sh -c 'printf "%s\n%s\n" "$SLUICE_FS" "$PATH"')
where_ctl=$(PATH=$PATH_DEVENV command -v sluicectl) where_service=$(PATH=$PATH_DEVENV command -v sluice-service)
[ "$SLUICE_FS_DEVENV" = "$worker" ] && pass "devenv: SLUICE_FS=$worker" || fail_later "devenv: SLUICE_FS='$SLUICE_FS_DEVENV'"
[ "$where_ctl" = "$sluicectl" ] && [ "$where_service" = "$service" ] &&
        pass "devenv: sluicectl and sluice-service on PATH are the build tree's" ||
        fail_later "devenv: PATH finds '$where_ctl' and '$where_service'"
if [ -x "$build/applet/sluice-applet" ]; then
        where_applet=$(PATH=$PATH_DEVENV command -v sluice-applet)
        [ "$where_applet" = "$build/applet/sluice-applet" ] && pass "devenv: sluice-applet on PATH is the build tree's" ||
                fail_later "devenv: PATH finds sluice-applet at '$where_applet'"
fi
if start_service devenv devenv_user "${pidfile[@]}" sluice-service; then
        if out=$(devenv_user sluicectl add "$work/share" --tag dev 2>&1) && out=$(devenv_user sluicectl start dev 2>&1) &&
           out=$(devenv_user sluicectl --json list 2>&1) && tr -d ' \n' <<<"$out" | grep -q '"tag":"dev","vm":"","state":"running"'; then
                [ "$(worker_exe)" = "$worker" ] &&
                        pass "devenv: meson devenv -C BUILD sluicectl add/start/list: the share runs the build tree's sluice-fs" ||
                        fail_later "devenv: the share's worker is '$(worker_exe)'"
        else
                fail_later "devenv: meson devenv -C BUILD sluicectl …: $out"
        fi
        devenv_user sluicectl remove dev >/dev/null
        stop_service
fi

finish
