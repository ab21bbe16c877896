#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the libFuzzer targets and runs each: once over its seed corpus
# (tests/fuzz/corpus/<target>), then for SECONDS of fuzzing.  A crash, a
# sanitizer report, a leak or a harness check failing stops it with status 1
# (the input is kept in BUILD/fuzz-artifacts/).  Usage:
#   tests/fuzz/run-fuzz.sh [BUILD [SECONDS [TARGET...]]]   (default build-fuzz 15, all targets)
# Without clang it says so and exits 77 (skipped).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-fuzz}
seconds=${2:-15}
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz-vhost-user fuzz-virtqueue fuzz-fuse)
cd "$top"

if ! command -v clang >/dev/null; then
        echo "fuzz: clang is not installed; the libFuzzer targets are skipped"
        exit 77
fi
if [ ! -f "$build/build.ninja" ]; then
        CC=clang meson setup "$build" -Dfuzzing=true -Dservice=false -Dapplet=false \
                -Dguest_tests=false >/dev/null || { echo "fuzz: meson setup $build failed"; exit 1; }
fi
meson compile -C "$build" "${targets[@]}" >/dev/null || { echo "fuzz: the build failed"; exit 1; }

artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=${FUZZ_ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:halt_on_error=1}
export UBSAN_OPTIONS=${FUZZ_UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The FUSE target's scratch folder: a tmpfs clean-up is several times faster.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=${TMPDIR:-/dev/shm}

status=0
for t in "${targets[@]}"; do
        corpus=tests/fuzz/corpus/$t
        exe=$build/tests/fuzz/$t
        log=$work/$t.log
        # The committed corpus stays as it is: new inputs go to a scratch copy.
        mkdir -p "$work/$t"
        cp "$corpus"/* "$work/$t/"
        start=$(date +%s)
        if ! "$exe" -runs=0 -close_fd_mask=2 -artifact_prefix="$artifacts/$t-" "$corpus" >"$log" 2>&1 ||
           ! "$exe" -max_total_time="$seconds" -close_fd_mask=2 -print_final_stats=1 \
                -artifact_prefix="$artifacts/$t-" "$work/$t" >>"$log" 2>&1; then
                echo "fuzz: $t FAILED; its log:"
                tail -60 "$log"
                echo "fuzz: the input is in $artifacts/ (reproduce: $exe FILE)"
                status=1
                continue
        fi
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
        echo "fuzz: $t ok: ${runs:-?} runs in $(( $(date +%s) - start )) s, $cov, corpus $(ls "$corpus" | wc -l) seeds"
done
exit $status
