#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Line coverage of the daemon reached by the fuzzers' corpora (not part of
# make check).  Builds the targets once more with clang's source-based coverage
# (-fprofile-instr-generate -fcoverage-mapping) in BUILD, replays each target's
# corpus (-runs=0: every input once, no fuzzing), and prints llvm-cov's
# per-file report for the daemon's sources.  Usage:
#   tests/fuzz/coverage.sh [BUILD [TARGET=DIR...]]
# Default: build-fuzz-cov, and each target over its committed seed corpus
# (tests/fuzz/corpus/<target>).  TARGET=DIR replays DIR instead (a corpus grown
# by a long run).  The reports are also written to BUILD/coverage-<target>.txt.
# Needs clang and llvm-cov/llvm-profdata (Debian: clang, llvm-14).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-fuzz-cov}
shift $(( $# > 0 ? 1 : 0 ))
cd "$top"

declare -A corpus=(
        [fuzz-vhost-user]=tests/fuzz/corpus/fuzz-vhost-user
        [fuzz-virtqueue]=tests/fuzz/corpus/fuzz-virtqueue
        [fuzz-fuse]=tests/fuzz/corpus/fuzz-fuse
)
for arg in "$@"; do
        t=${arg%%=*} d=${arg#*=}
        [ -n "${corpus[$t]:-}" ] && [ -d "$d" ] || { echo "coverage: '$arg' is not TARGET=DIR (targets: ${!corpus[*]})" >&2; exit 2; }
        corpus[$t]=$d
done

for tool in clang llvm-profdata llvm-cov; do
        command -v "$tool" >/dev/null || { echo "coverage: $tool is missing (apt-get install clang llvm-14)" >&2; exit 1; }
done
if [ ! -f "$build/build.ninja" ]; then
        flags='-fprofile-instr-generate -fcoverage-mapping'
        CC=clang meson setup "$build" -Dfuzzing=true -Dservice=false -Dapplet=false \
                -Dguest_tests=false -Dc_args="$flags" -Dc_link_args="$flags" >/dev/null ||
                { echo "coverage: meson setup $build failed" >&2; exit 1; }
fi
meson compile -C "$build" fuzz-vhost-user fuzz-virtqueue fuzz-fuse >/dev/null ||
        { echo "coverage: the build failed" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0
for t in fuzz-vhost-user fuzz-virtqueue fuzz-fuse; do
        exe=$build/tests/fuzz/$t
        echo "== $t over ${corpus[$t]} ($(find "${corpus[$t]}" -maxdepth 1 -type f | wc -l) inputs)"
        # -runs=0 replays the corpus without fuzzing; the profile is written at exit
        if ! LLVM_PROFILE_FILE=$work/$t.profraw TMPDIR=${TMPDIR:-/tmp} "$exe" -runs=0 \
                -close_fd_mask=2 "${corpus[$t]}" >"$work/$t.log" 2>&1; then
                echo "coverage: $t failed on its corpus:"; tail -20 "$work/$t.log"; rc=1; continue
        fi
        llvm-profdata merge -o "$work/$t.profdata" "$work/$t.profraw" || { rc=1; continue; }
        llvm-cov report "$exe" -instr-profile="$work/$t.profdata" "$top/daemon" \
                >"$build/coverage-$t.txt" || { rc=1; continue; }
        # the files a target reaches at all, then the total
        awk 'NR <= 2 || /^TOTAL/ || ($1 ~ /\.c$/ && $NF != "-" && $(NF-3) != "0.00%")' \
                "$build/coverage-$t.txt"
done
exit $rc
