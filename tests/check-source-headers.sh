#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every source file says its licence, and no comment sends a reader elsewhere
# for its reason (meson test --suite meta).
#
#   tests/check-source-headers.sh [TOP]        check; lists file:line of each fault
#   tests/check-source-headers.sh --add [TOP]  put the SPDX line into the files
#                                              that lack it, then check
#
# Source files: *.c, *.h, *.sh, *.py, meson.build and Makefile, as git tracks
# them (every file below TOP outside build folders when TOP is no git tree).
# Each carries "SPDX-License-Identifier: GPL-2.0-or-later" in its first five
# lines: `/* … */` in C, `# …` elsewhere, after the shebang of a script.
# A comment names the requirement itself: never an issue by its number, a
# design document the repository does not hold, or who owned the code.
set -euo pipefail

add=false
if [ "${1:-}" = --add ]; then
        add=true
        shift
fi
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top"

spdx='SPDX-License-Identifier: GPL-2.0-or-later'

list_sources() {
        if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
                git ls-files -z -- '*.c' '*.h' '*.sh' '*.py' '*meson.build' '*Makefile'
        else
                find . \( -name 'build*' -o -name '.git' -o -name subprojects \) -prune -o \
                        -type f \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.py' \
                        -o -name meson.build -o -name Makefile \) -printf '%P\0'
        fi
}

# The line a file of this kind carries.
spdx_line() {
        case $1 in
        *.c | *.h) printf '/* %s */\n' "$spdx" ;;
        *) printf '# %s\n' "$spdx" ;;
        esac
}

insert_spdx() {
        local f=$1 line tmp
        line=$(spdx_line "$f")
        tmp=$(mktemp "$f.spdx-XXXXXX")
        if head -n 1 "$f" | grep -q '^#!'; then
                { head -n 1 "$f"; printf '%s\n' "$line"; tail -n +2 "$f"; } >"$tmp"
        else
                { printf '%s\n' "$line"; cat "$f"; } >"$tmp"
        fi
        chmod --reference="$f" "$tmp"
        mv "$tmp" "$f"
}

faults=0
added=0
while IFS= read -r -d '' f; do
        [ -f "$f" ] || continue
        if ! head -n 5 "$f" | grep -qF "$spdx"; then
                if $add; then
                        insert_spdx "$f"
                        added=$((added + 1))
                else
                        echo "$f:1: no '$spdx' line in its first five lines"
                        faults=$((faults + 1))
                fi
        fi
        # Whole files, not only comments: a string naming an issue number is
        # as much a pointer elsewhere as a comment is.
        while IFS= read -r hit; do
                echo "$f:${hit%%:*}: names an issue, a design document or an owner instead of the requirement: ${hit#*:}"
                faults=$((faults + 1))
        done < <({ grep -nEi '\bissues? ?#?[0-9]+' "$f"
                   grep -nE '\bDESIGN(\.md)?\b|owned by the [[:alnum:] -]*engineer' "$f"; } |
                 sort -n -t: -k1,1 || true)
done < <(list_sources)

if $add; then
        echo "added the SPDX line to $added file(s)"
fi
if [ "$faults" -gt 0 ]; then
        echo "$faults fault(s); \`$0 --add\` puts in the missing SPDX lines," \
                "a reference to an issue is rewritten as the requirement it stands for" >&2
        exit 1
fi
echo "every source file carries its SPDX line and names no issue"
