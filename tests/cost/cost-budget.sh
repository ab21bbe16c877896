#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cost-budget.sh BUILD BUDGETS — fails when a request costs sluice-fs more
# instructions or system calls than BUDGETS allows.
#
# Every row of BUDGETS (row, instructions and system calls per request,
# reason) is counted with bench/cost-run.sh --check: sluice-fs under
# callgrind, then under strace -c -f, serving N and 2N requests of the row,
# the difference divided by N.  The counts do not depend on the machine's
# load, so this is not a timed test; the instruction budgets carry the small
# margin measured between runs (bench/cost-budgets.txt).  A row that cannot
# be counted fails too (so does a missing strace); only a missing valgrind
# skips.
#
# A budget is raised or lowered on purpose: bench/cost-run.sh
# --update-budgets bench/cost-budgets.txt BUILD rewrites them from a
# measurement, and the reason goes into the file and bench/README.md.
set -uo pipefail
build=${1:?usage: cost-budget.sh BUILD BUDGETS}
budgets=${2:?usage: cost-budget.sh BUILD BUDGETS}
top=$(cd "$(dirname "$0")/../.." && pwd)

if [ -n "${SLUICE_COST_SKIP:-}" ]; then
        echo "SKIP: $SLUICE_COST_SKIP"
        exit 77
fi
if ! command -v valgrind >/dev/null; then
        echo "SKIP: valgrind is not installed (Debian package valgrind, in the Makefile's DEPS_TEST)"
        exit 77
fi
[ -f "$budgets" ] || { echo "FAIL: no budgets file $budgets"; exit 1; }
rows=$(awk '!/^#/ && NF { print $1 }' "$budgets" | paste -sd,)
[ -n "$rows" ] || { echo "FAIL: $budgets names no rows"; exit 1; }

start=$(date +%s)
"$top/bench/cost-run.sh" --check "$budgets" --rows "$rows" -n "${SLUICE_COST_N:-200}" "$build"
rc=$?
echo "counted in $(( $(date +%s) - start )) s"
case $rc in
0|77) exit $rc ;;
*) echo "FAIL: over budget or not measurable (bench/cost-run.sh --annotate ROW $build shows where the instructions go)"
   exit 1 ;;
esac
