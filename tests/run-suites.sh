#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs every suite (make check).  Usage: tests/run-suites.sh BUILD ASAN_BUILD [TSAN_BUILD]
# (or tests/run-suites.sh --tsan [TSAN_BUILD]: the ThreadSanitizer pass alone)
#
# The normal build runs all suites.  The daemon's and the service's suites (and
# the libvirt suite's in-process tests) run again in a second build with
# AddressSanitizer + UBSan; any report fails them
# (halt_on_error / abort_on_error below turn a report into a failure).
# Last, the daemon's unit and frontend suites under ThreadSanitizer (tsan_pass).
# Every build here has the test hooks (-Dtest_hooks=true; an existing build
# without them is switched on, ensure_test_hooks): the applet's tests and the
# sandbox's read the programs through them.  Warnings are errors in all of
# them (meson.build's default).
# As root, an ordinary user `sluice-test` is created: tests run sluice-fs and
# sluice-service as that user, the way desktop users run them.
set -uo pipefail
build=${1:-build}
asan_build=${2:-build-asan}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

if [ "$(id -u)" = 0 ]; then
        export SLUICE_TEST_USER=${SLUICE_TEST_USER:-sluice-test}
        id -u "$SLUICE_TEST_USER" >/dev/null 2>&1 ||
                useradd --create-home --shell /bin/bash --user-group "$SLUICE_TEST_USER"
fi

# BUILD configured earlier without the test hooks gets them (meson test
# then rebuilds what changed).  `setup --reconfigure`, not `configure`: a
# build directory older than the option does not know it yet.  A failure is
# said and counted: the suites would otherwise run hook-less and skip.
ensure_test_hooks() {
        grep -q '^#define SLUICE_TEST_HOOKS 1' "$1/config.h" 2>/dev/null && return 0
        if ! meson setup --reconfigure "$1" -Dtest_hooks=true >/dev/null; then
                echo "could not switch the test hooks on in $1: meson setup --reconfigure $1 -Dtest_hooks=true failed"
                failed=$((failed + 1))
                return 1
        fi
}

passed=0 failed=0 skipped=0
count() { # parses meson test's summary lines from its log
        local log=$1 ok fail exp skip to
        ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        exp=$(sed -n 's/^Expected Fail: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        fail=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        to=$(sed -n 's/^Timeout: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        skip=$(sed -n 's/^Skipped: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        passed=$((passed + ${ok:-0} + ${exp:-0}))
        failed=$((failed + ${fail:-0} + ${to:-0}))
        skipped=$((skipped + ${skip:-0}))
}

# ThreadSanitizer: the daemon's unit and frontend suites (frontend-concurrency
# drives all request queues at once; not the client library's, suite client:
# GDBus's worker thread inside an uninstrumented GLib reads as races) in a -Db_sanitize=thread build, last in
# make check (build and run: 2 min 36 s on a loaded 2-core machine, README.md
# Tests); `make tsan` runs it alone: tests/run-suites.sh --tsan [BUILD].
# halt_on_error: a report kills the worker (its test fails) or fails the test
# program; suppressions are for libraries only (tests/tsan.supp).  The fuzz
# generator runs a quarter of its requests: TSan makes each ~10x slower.
# Seccomp and Landlock stay on: sandbox.c lets a sanitizer build report.
# gcc's libtsan symbolises in-process; clang's forks llvm-symbolizer, which
# the filter forbids (the worker dies with its report unprinted): with
# CC=clang, set TSAN_OPTIONS=...:symbolize=0 and resolve the offsets after.
tsan_pass() {
        local tsan_build=$1 tlog rc=0
        if [ ! -f "$tsan_build/build.ninja" ]; then
                meson setup "$tsan_build" -Dtest_hooks=true -Db_sanitize=thread -Db_lundef=false \
                        -Dapplet=false -Dservice=false -Dbuildtype=debug >/dev/null || rc=1
        fi
        ensure_test_hooks "$tsan_build" || rc=1
        if ! meson compile -C "$tsan_build" >/dev/null; then
                echo "ThreadSanitizer build failed"
                failed=$((failed + 1))
                return 1
        fi
        tlog=$(mktemp)
        TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$top/tests/tsan.supp} \
        SLUICE_FUZZ_ITERATIONS=${SLUICE_FUZZ_ITERATIONS:-6000} \
                meson test -C "$tsan_build" --print-errorlogs --num-processes 1 \
                --suite unit --suite frontend --no-suite client 2>&1 | tee "$tlog"
        [ "${PIPESTATUS[0]}" = 0 ] || rc=1
        count "$tlog"
        rm -f "$tlog"
        return $rc
}
if [ "${1:-}" = --tsan ]; then
        tsan_pass "${2:-build-tsan}"
        rc=$?
        echo
        echo "make tsan: $passed passed, $failed failed, $skipped skipped"
        exit $rc
fi

status=0
ensure_test_hooks "$build" || status=1
log=$(mktemp)
meson test -C "$build" --print-errorlogs --num-processes 1 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
count "$log"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:halt_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ ! -f "$asan_build/build.ninja" ]; then
        meson setup "$asan_build" -Dtest_hooks=true -Db_sanitize=address,undefined \
                -Db_lundef=false -Dapplet=false -Dbuildtype=debug >/dev/null || status=1
fi
ensure_test_hooks "$asan_build" || status=1
if meson compile -C "$asan_build" >/dev/null; then
        meson test -C "$asan_build" --print-errorlogs --num-processes 1 \
                --suite daemon --suite service 2>&1 | tee "$log"
        [ "${PIPESTATUS[0]}" = 0 ] || status=1
        count "$log"
        # the service's libvirt side without a libvirtd (test:///default, in-process)
        meson test -C "$asan_build" --print-errorlogs vm-tracking domain-xml 2>&1 | tee "$log"
        [ "${PIPESTATUS[0]}" = 0 ] || status=1
        count "$log"
else
        echo "AddressSanitizer build failed"
        status=1 failed=$((failed + 1))
fi
rm -f "$log"
tsan_pass "${3:-build-tsan}" || status=1

# The libFuzzer targets, when clang is there: each over its seed corpus and
# then fuzzing for a few seconds (tests/fuzz/run-fuzz.sh; longer: make fuzz).
tests/fuzz/run-fuzz.sh "${FUZZ_BUILD:-build-fuzz}" "${FUZZ_SECONDS:-15}"
case $? in
0) passed=$((passed + 1)) ;;
77) skipped=$((skipped + 1)) ;;
*) failed=$((failed + 1)) status=1 ;;
esac

echo
echo "make check: $passed passed, $failed failed, $skipped skipped"
echo "$passed passed, $failed failed"
exit $status
