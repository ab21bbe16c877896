#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# case-miss.sh [--check FIRST LATER] BUILD — what a folded lookup of
# --case=insensitive costs in a folder of 100,000 names, counted by callgrind
# (instructions inside findex_lookup only; not timed).
#
# The folder is made once in a tmpfs (/dev/shm, else $TMPDIR).  bench/case-miss
# runs twice, each time 1 + N lookups (N = 1000), callgrind collecting once
# inside the first lookup (one scan of the folder builds the index), once
# inside the N later ones (the index kept): their total / N.  The index's
# hash key is random, so figures move a little from run to run (slot probes).
#
#   --check FIRST LATER   exit 1 when the first lookup costs more than
#                         FIRST or a later one more than LATER instructions
#                         (tests/cost's cost-case-miss); 77 without valgrind
#   --names COUNT         the folder's size (default 100000)
set -uo pipefail
first_budget= later_budget= count=100000 n=1000
while [ $# -gt 0 ]; do
        case "$1" in
        --check) first_budget=$2 later_budget=$3; shift 2 ;;
        --names) count=$2; shift ;;
        -*) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
        *) break ;;
        esac
        shift
done
[ $# -eq 1 ] || { echo "usage: case-miss.sh [--check FIRST LATER] BUILD" >&2; exit 2; }
bin=$1/bench/case-miss
[ -x "$bin" ] || { echo "case-miss: build $1 first (no $bin)" >&2; exit 1; }
if [ -n "${SLUICE_COST_SKIP:-}" ]; then
        echo "SKIP: $SLUICE_COST_SKIP"
        exit 77
fi
command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed (Debian package valgrind)"; exit 77; }

# meson test sets MALLOC_PERTURB_, which fills every allocation: not ours to count
unset MALLOC_PERTURB_
base=/dev/shm
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/case-miss.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
"$bin" --make "$work/folder" "$count" || exit 1

# collected FUNCTION: the instructions spent inside FUNCTION (and the clones
# gcc may make of it, FUNCTION.constprop.0 …; first_lookup:
# once; later_lookups: N times), in one run of N + 1 lookups
collected() {
        valgrind --tool=callgrind --toggle-collect="$1*" --dump-instr=no \
                --callgrind-out-file="$work/cg.$1" "$bin" "$work/folder" "$count" "$n" \
                >"$work/log.$1" 2>&1 || { cat "$work/log.$1" >&2; return 1; }
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$work/log.$1"
}
first=$(collected first_lookup) && all_later=$(collected later_lookups) ||
        { echo "FAIL: case-miss did not run under callgrind"; exit 1; }
[ -n "$first" ] && [ -n "$all_later" ] || { echo "FAIL: no callgrind total"; exit 1; }
later=$(( all_later / n ))
echo "folder of $count names: first folded lookup $first instructions ($(( first / count )) per name), later ones $later each"
[ -n "$first_budget" ] || exit 0
status=0
if [ "$first" -gt "$first_budget" ]; then
        echo "FAIL: the first lookup costs $first instructions, budget $first_budget"
        status=1
fi
if [ "$later" -gt "$later_budget" ]; then
        echo "FAIL: a later lookup costs $later instructions, budget $later_budget"
        status=1
fi
[ "$status" = 1 ] || echo "ok: within the budgets ($first_budget, $later_budget)"
exit $status
