#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every commit subject since BASE is at most 72 characters (HACKING.md,
# Commits): `git log --oneline` and a mail's subject line show it whole
# (meson test --suite meta).
#
#   tests/check-commit-subjects.sh [TOP]
#
# BASE is the last commit before the check came; the longer subjects before
# it stay (history is not rewritten).  Merge commits are left out: git words
# their subjects.  Skips (exit 77), saying why, where there is no history to
# read: a tree without .git (a release tarball) or a shallow clone that does
# not reach BASE.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
top=${1:-$here/..}
base=26d0038c15e9a38c48eeffd3191e7e1ec87f89c0
max=72

need_tools git
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
        skip "$top is no git checkout (a release tarball?): no commit subjects to check"
git -C "$top" cat-file -e "$base^{commit}" 2>/dev/null ||
        skip "the history does not reach $base (a shallow clone?): cannot tell which commits are new"

# characters, not bytes: a subject may hold “quotes” (bash counts in a UTF-8 locale)
export LC_ALL=C.UTF-8
long=
while IFS= read -r line; do
        subject=${line#* }
        [ "${#subject}" -le $max ] || long+="$line (${#subject} characters)"$'\n'
done < <(git -C "$top" log --no-merges --format='%h %s' "$base..HEAD")
long=${long%$'\n'}
count=$(git -C "$top" rev-list --no-merges --count "$base..HEAD")
if [ -n "$long" ]; then
        printf '%s\n' "$long"
        fail "$(wc -l <<<"$long") of $count commit subject(s) since ${base:0:7} are over $max characters (HACKING.md, Commits)"
fi
pass "the $count commit subject(s) since ${base:0:7} are at most $max characters"
