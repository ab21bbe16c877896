# SPDX-License-Identifier: GPL-2.0-or-later
# tests/lib.sh — what every shell test and test script shares (bash): how a
# test says pass, fail and skip, how it waits, who it runs programs as.
# Source it first thing:
#   . "$(dirname "$0")/../lib.sh"        (from tests/SUITE/NAME.sh)
# It defines functions and the variables test_failures, test_t0 (and
# session_bus_pid, set by start_session_bus) only: no trap, no `set` option,
# no output.  A test keeps its own clean-up trap.
#
# Exit statuses, as meson test reads them: 0 pass, 1 fail, 77 skip.
#
# Two ways to fail, for two kinds of test:
# - a test that cannot go on after a failed step calls `fail` (it exits);
# - a test that checks many independent things calls `pass` / `fail_later`
#   for each and `finish` at its end, so one run reports every failure.

# when the test started (for the times its messages carry)
test_t0=$EPOCHREALTIME
# how many fail_later calls so far
test_failures=0

# since START — seconds (two decimals) from START, a $EPOCHREALTIME value, to
# now (a locale's decimal comma is read as a point).
since() { awk -v a="${1/,/.}" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.2f", b - a }'; }

# note MESSAGE… — a line of the test's log, stamped with the seconds since the
# test started (a slow step shows where the time went).
note() { printf '[%7ss] %s\n' "$(since "$test_t0")" "$*"; }

# pass MESSAGE… — one check held: a PASS line on stdout.
pass() { note "PASS $*"; }

# fail_later MESSAGE… — one check failed, the test goes on: a FAIL line on
# stdout (in order with the PASS lines) and test_failures counts it; finish
# then exits 1.
fail_later() {
        note "FAIL $*"
        test_failures=$((test_failures + 1))
}

# fail MESSAGE… — the test cannot go on: the message on stderr and exit 1
# (the EXIT trap, if any, still runs).  In a $(…) subshell it ends only that
# subshell: call it from the test's own shell.
fail() {
        printf '[%7ss] FAIL: %s\n' "$(since "$test_t0")" "$*" >&2
        exit 1
}

# skip REASON… — what the test needs is not here (a tool, root, a kernel):
# "SKIP: REASON" on stdout and exit 77, which meson counts as skipped.
skip() {
        echo "SKIP: $*"
        exit 77
}

# finish — the verdict of a test that used fail_later: "done: N failure(s)",
# exit 0 when there were none, 1 otherwise.
finish() {
        note "done: $test_failures failure(s)"
        [ "$test_failures" = 0 ] && exit 0
        exit 1
}

# need_tools COMMAND… — skips unless every COMMAND is on PATH.
need_tools() {
        local tool
        for tool in "$@"; do
                command -v "$tool" >/dev/null || skip "$tool is not installed"
        done
}

# need_root WHY — skips unless running as root; WHY says what root is for.
need_root() { [ "$(id -u)" = 0 ] || skip "needs root ($*)"; }

# wait_for SECONDS COMMAND… — polls COMMAND (every 0.1 s) until it succeeds:
# returns 0 as soon as it does, 1 once SECONDS have passed without success.
# Never sleeps past the deadline nor after success.  COMMAND's output is
# discarded (a condition is asked yes or no; a retried error would flood the
# log).  COMMAND may be a shell function; it runs in this shell, so it may set
# variables.  Limits are generous: a loaded 2-core machine is slow, and a
# condition met early costs nothing more.
wait_for() {
        local deadline left
        deadline=$(( ${EPOCHREALTIME/[.,]/} / 1000 + $1 * 1000 )); shift
        until "$@" >/dev/null 2>&1; do
                left=$(( deadline - ${EPOCHREALTIME/[.,]/} / 1000 ))
                [ "$left" -gt 0 ] || return 1
                [ "$left" -lt 100 ] || left=100
                sleep "$(printf '0.%03d' "$left")"
        done
}

# pid_gone PID — true when no process PID is left (for wait_for).
pid_gone() { ! kill -0 "$1" 2>/dev/null; }

# start_session_bus SOCKET LOG [PREFIX…] — a private D-Bus session bus
# listening on SOCKET, started behind PREFIX (as_user_prefix's setpriv, an
# env …), its output in LOG.  session_bus_pid is then the dbus-daemon itself
# (PREFIX must exec it), to stop it by.  Returns 1 when the socket did not
# appear within 60 s.
start_session_bus() {
        local socket=$1 log=$2
        shift 2
        "$@" dbus-daemon --session --nofork --address="unix:path=$socket" >"$log" 2>&1 &
        session_bus_pid=$!
        wait_for 60 test -S "$socket"
}

# The test user: tests run sluice-fs and sluice-service as an ordinary user,
# the way desktop users run them, never as root.

# ensure_user NAME — NAME exists afterwards (created as an ordinary user with
# a home and a group of its own if missing; needs root then); fails otherwise.
ensure_user() {
        id -u "$1" >/dev/null 2>&1 && return 0
        useradd --create-home --shell /bin/bash --user-group "$1" >/dev/null ||
                fail "cannot create the user $1"
}

# test_user — prints the user the test runs Sluice's programs as: as root,
# $SLUICE_TEST_USER (default sluice-test, created if missing); otherwise the
# caller.  Call it as  user=$(test_user) || exit 1.
test_user() {
        if [ "$(id -u)" = 0 ]; then
                ensure_user "${SLUICE_TEST_USER:-sluice-test}" || return 1
                echo "${SLUICE_TEST_USER:-sluice-test}"
        else
                id -un
        fi
}

# as_user_prefix VAR NAME — sets the array VAR to the command prefix that runs
# a command as user NAME with NAME's groups: setpriv, which execs, so a
# program started with & behind it has $! as its own pid (runuser forks and
# stays the parent).  Empty when NAME is the caller already.
as_user_prefix() {
        local -n _prefix=$1
        _prefix=()
        [ "$2" = "$(id -un)" ] && return 0
        _prefix=(setpriv --reuid="$2" --regid="$(id -g "$2")" --init-groups --)
}
