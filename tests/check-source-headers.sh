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

# One awk over every file (a process per file is slow on a loaded machine):
# prints "FILE:LINE: fault" lines, by file and line.
scan() {
        # shellcheck disable=SC2016 # the awk program is meant to be quoted
        list_sources | xargs -0 -r awk -v spdx="$spdx" '
                function missing() {
                        if (file != "" && !found)
                                printf "%s:1: no \"%s\" line in its first five lines\n", file, spdx
                }
                FNR == 1 { missing(); file = FILENAME; found = 0 }
                FNR <= 5 && index($0, spdx) { found = 1 }
                # Whole files, not only comments: a string naming an issue number
                # is as much a pointer elsewhere as a comment is.
                tolower($0) ~ /(^|[^[:alnum:]_])issues? ?#?[0-9]/ ||
                $0 ~ /(^|[^[:alnum:]_])DESIGN\.md|owned by the [[:alnum:] -]*engineer/ {
                        printf "%s:%d: names an issue, a design document or an owner" \
                                " instead of the requirement: %s\n", FILENAME, FNR, $0
                }
                END { missing() }' | sort -t: -k1,1 -k2,2n || true
}

if $add; then
        added=0
        while IFS= read -r f; do
                insert_spdx "$f"
                added=$((added + 1))
        done < <(scan | sed -n 's/^\(.*\):1: no ".*" line in its first five lines$/\1/p')
        echo "added the SPDX line to $added file(s)"
fi

report=$(scan)
if [ -n "$report" ]; then
        printf '%s\n' "$report"
        echo "$(printf '%s\n' "$report" | wc -l) fault(s); \`$0 --add\` puts in the missing SPDX" \
                "lines; a reference to an issue is rewritten as the requirement it stands for" >&2
        exit 1
fi
echo "every source file carries its SPDX line and names no issue"
