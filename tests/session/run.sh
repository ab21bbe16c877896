#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Sluice's systemd user units, D-Bus activation and autostart entry under a
# real `systemd --user` of the test user, as a desktop session runs them.
#
#   run.sh --build BUILD_DIR CASE…   the build, installed into a DESTDIR whose
#                                    files appear at their real paths
#   run.sh --installed CASE…         what is installed on the machine (the
#                                    packages, under /usr)
#
# CASE: service, share-unit, fs-unit, fs-resume, service-restart, autostart (the files of those names
# here).  Exit 0 all passed, 1 a failure, 77 cannot run here (says why).
#
# PID 1 is not systemd on the test machines, yet a user manager runs (the
# recipe is in in-namespace.sh and manager.sh): everything happens in a
# private mount namespace (unshare -m) where an empty /run/systemd/system
# says "booted with systemd", the DESTDIR is laid over the install prefix
# (--build) and a fresh folder is the user's home, so neither the machine's
# files nor the user's real home are touched.  This script keeps what must
# be undone from outside: the run's cgroup v2 folder (the manager needs one
# owned by the user) and its work folder; it removes both on every exit.
# Runs as root (a manager for another user, mounts, cgroups); one run at a
# time on the machine (a lock), since the user's manager is one per user.
# Optional: SLUICE_TEST_USER (default sluice-test); SLUICE_TEST_VMM, the
# test VMM (tests/frontend), for --installed (--build takes the build's);
# SLUICE_SESSION_LOG=1 prints the units' messages of passing cases too (a
# failing case prints them always).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

usage() {
        echo "usage: $0 --build BUILD_DIR CASE… | --installed CASE…" >&2
        echo "cases: service share-unit fs-unit fs-resume service-restart autostart" >&2
        exit 2
}

mode=${1:-}
shift || usage
build=
case $mode in
--build)
        [ $# -ge 1 ] || usage
        build=$(cd "$1" 2>/dev/null && pwd) || { echo "no build directory $1" >&2; exit 2; }
        shift
        ;;
--installed) ;;
*) usage ;;
esac
[ $# -ge 1 ] || usage
for c in "$@"; do
        [ -f "$here/$c.sh" ] && [ "$c" != manager ] && [ "$c" != in-namespace ] && [ "$c" != run ] ||
                { echo "unknown case $c" >&2; usage; }
done

need_root "a user manager for another user, a mount namespace and a cgroup folder"
need_tools unshare setpriv systemctl busctl gdbus flock mount findmnt python3 dbus-daemon
[ -x /usr/lib/systemd/systemd ] || skip "no /usr/lib/systemd/systemd (Debian: systemd)"
# The session bus, as a desktop has it: started by the manager (dbus.socket),
# which is what makes D-Bus activation go through systemd.
[ -f /usr/lib/systemd/user/dbus.socket ] ||
        skip "no user unit dbus.socket for the session bus (Debian: dbus-user-session)"
# The manager needs a cgroup v2 folder to start in: the v2 hierarchy itself,
# or its part of a hybrid layout.
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
        cgroot=/sys/fs/cgroup
elif [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
        cgroot=/sys/fs/cgroup/unified
else
        skip "no cgroup v2 hierarchy (neither /sys/fs/cgroup nor /sys/fs/cgroup/unified)"
fi
[ -e "$cgroot/cgroup.kill" ] || [ -n "$(find "$cgroot" -maxdepth 2 -name cgroup.kill -print -quit)" ] ||
        skip "the kernel's cgroup v2 has no cgroup.kill (Linux < 5.14)"
user=$(test_user) || exit 1
[ "$user" != root ] || skip "the test user is root"

# One run at a time: another worktree's run waits its turn.
lock=/run/lock/sluice-session-test.lock
[ -d /run/lock ] || lock=/tmp/sluice-session-test.lock
exec {lock_fd}>"$lock"
flock -w 900 "$lock_fd" || fail "another run of tests/session held $lock for 15 minutes"

# Left by a run that was killed outright (with the lock held, any such
# folder is stale): its processes go, then the folders.
for stale in "$cgroot"/sluice-session-*; do
        [ -d "$stale" ] || continue
        echo 1 >"$stale/cgroup.kill" 2>/dev/null
        wait_for 30 grep -c '^populated 0$' "$stale/cgroup.events" &&
                find "$stale" -depth -type d -exec rmdir {} + 2>/dev/null
done
for stale in /tmp/sluice-session.*; do
        [ -d "$stale" ] && "$here/undo-run.sh" "$stale" /nonexistent
done

work=$(mktemp -d /tmp/sluice-session.XXXXXX) || fail "mktemp"
chmod 0755 "$work"
cgroup=$cgroot/sluice-session-$$
inner_pid=

# What the run leaves must go on every path (undo-run.sh): the namespace's
# processes, the cgroup folders, the work folder.  The mounts live only in
# the namespace and go with its last process.  A guard in a session of its
# own does it once this script is gone, should it be killed first (meson's
# timeout kills the whole process group); it holds the lock until then.
cleanup() {
        local status=$?
        trap - EXIT INT TERM HUP
        [ -z "$inner_pid" ] || kill -TERM "$inner_pid" 2>/dev/null
        [ -z "$inner_pid" ] || wait_for 60 pid_gone "$inner_pid"
        "$here/undo-run.sh" "$work" "$cgroup" || status=1
        exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 0.5; done; exec "$2" "$3" "$4"' \
        guard $$ "$here/undo-run.sh" "$work" "$cgroup" </dev/null >/dev/null 2>&1 &

prefix=/usr sysconfdir=/etc dest=
test_vmm=${SLUICE_TEST_VMM:-}
if [ -n "$build" ]; then
        dest=$work/dest
        note "meson install into $dest"
        meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$work/install.log" 2>&1 ||
                { cat "$work/install.log"; fail "meson install failed"; }
        read -r prefix sysconfdir < <(meson introspect --buildoptions "$build" | python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"], os.path.join(o["prefix"], o["sysconfdir"]))')
        [ -x "$build/tests/frontend/sluice-test-vmm" ] && test_vmm=$build/tests/frontend/sluice-test-vmm
fi
# The test VMM runs as the user: a copy where the user can reach it.
mkdir -p "$work/bin"
if [ -n "$test_vmm" ]; then
        cp "$test_vmm" "$work/bin/sluice-test-vmm" && test_vmm=$work/bin/sluice-test-vmm
fi
chmod -R a+rX "$work/bin"

mkdir "$cgroup" || fail "cannot make the cgroup folder $cgroup"
export session_user=$user session_work=$work session_cgroup=$cgroup session_cgroot=$cgroot \
        session_prefix=$prefix session_sysconfdir=$sysconfdir session_dest=$dest \
        session_test_vmm=$test_vmm session_mode=${mode#--}
# A private mount namespace; mounts of the machine still reach it (slave),
# none of its own leave it.  The lock is not handed down: a process the
# test leaves behind must not hold up the next run.
unshare -m --propagation slave -- bash "$here/in-namespace.sh" "$@" {lock_fd}>&- &
inner_pid=$!
wait "$inner_pid"
status=$?
inner_pid=
exit "$status"
