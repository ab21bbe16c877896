#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fails when a translation is not current (meson test --suite po):
#   - a file under common/, service/ or applet/ with _() strings (or a .ui file with
#     translatable="yes", or a data/*.desktop.in) is missing from po/POTFILES;
#   - xgettext complains about a source; in particular a marked string cannot be
#     translated because a format macro was pasted into it
#     (_("%" G_GUINT64_FORMAT …) extracts only "%": the program then looks up the
#     whole string, which no catalogue contains);
#   - a language in po/LINGUAS has untranslated or fuzzy messages against a
#     template extracted from the sources right now (not the committed .pot),
#     or lacks a current message that only an obsolete #~ entry holds;
#   - msgfmt -c --check-accelerators=_ rejects a .po (placeholders, plural forms,
#     header, a mnemonic lost or doubled).
# Nothing in the source tree is written: the template and merges go to a
# temporary directory.
#
# Usage: check-po-current.sh SOURCE_ROOT XGETTEXT_ARG...
# The xgettext arguments come from po/meson.build, which gives the same ones
# to i18n.gettext(), so this extracts exactly what `ninja sluice-pot` does.
set -uo pipefail

top=${1:?usage: check-po-current.sh SOURCE_ROOT XGETTEXT_ARG...}
shift
po="$top/po"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() {
        printf 'FAIL: %s\n' "$*"
        failed=1
}

# 1. POTFILES lists every file with translatable strings.
grep -v -e '^#' -e '^[[:space:]]*$' "$po/POTFILES" | sort -u >"$tmp/listed"
while read -r f; do
        [ -f "$top/$f" ] || fail "po/POTFILES lists $f, which does not exist"
done <"$tmp/listed"
(
        cd "$top" || exit 1
        grep -rlE --include='*.c' --include='*.h' \
                '(^|[^A-Za-z0-9_])(_|N_|C_|NC_|Q_|g_dgettext|g_dcgettext|g_dngettext|g_dpgettext2?)[[:space:]]*\(' \
                common service applet cli 2>/dev/null
        grep -rl --include='*.ui' 'translatable="yes"' common service applet cli 2>/dev/null
        ls data/*.desktop.in data/*.metainfo.xml.in data/*.appdata.xml.in 2>/dev/null
) | sort -u >"$tmp/marked"
while read -r f; do
        fail "$f has translatable strings but is not in po/POTFILES"
done < <(comm -23 "$tmp/marked" "$tmp/listed")

# 2. Extract the template from the sources as they are now.
if ! xgettext --package-name=sluice -f "$tmp/listed" -D "$top" -k_ \
        -o "$tmp/sluice.pot" "$@" 2>"$tmp/xgettext.err"; then
        cat "$tmp/xgettext.err"
        fail "xgettext could not extract the strings"
        exit 1
fi
# xgettext exits 0 even when it cannot parse a file (it then skips that file's
# strings, or reads it as C), so anything it says is a failure.
if [ -s "$tmp/xgettext.err" ]; then
        cat "$tmp/xgettext.err"
        fail "xgettext complained about the sources above: their strings are not all extracted"
        grep -q 'not a valid C format string' "$tmp/xgettext.err" &&
                fail "a marked string is cut short by a format macro (G_GUINT64_FORMAT, …):" \
                        "xgettext extracts only its first piece, so it is never translated; use" \
                        "PRIu64 from <inttypes.h> (xgettext and glibc understand it) or format" \
                        "the number with %s"
fi

# 3. Every language is complete and msgfmt accepts it.
langs=$(grep -v -e '^#' -e '^[[:space:]]*$' "$po/LINGUAS")
[ -n "$langs" ] || fail "po/LINGUAS names no language"
for lang in $langs; do
        if [ ! -f "$po/$lang.po" ]; then
                fail "po/LINGUAS names $lang but po/$lang.po does not exist"
                continue
        fi
        if ! msgfmt -c --check-accelerators=_ -o /dev/null "$po/$lang.po" 2>"$tmp/msgfmt.err"; then
                cat "$tmp/msgfmt.err"
                fail "msgfmt -c rejects po/$lang.po"
        fi
        if ! msgmerge --quiet -o "$tmp/$lang.po" "$po/$lang.po" "$tmp/sluice.pot"; then
                fail "msgmerge could not merge po/$lang.po with the sources' strings"
                continue
        fi
        listed=0
        for kind in untranslated only-fuzzy; do
                msgattrib --"$kind" --no-obsolete --no-wrap -o "$tmp/$lang.$kind.po" "$tmp/$lang.po"
                # One line per message: where it is used and its msgid, as written in the
                # .po (the header, whose msgid is empty, is not a message).
                awk '/^#: / && where == "" { where = substr($0, 4) }
                     /^msgid "/ { id = $0; sub(/^msgid "/, "", id); sub(/"$/, "", id); open = 1; next }
                     open && /^"/ { s = $0; sub(/^"/, "", s); sub(/"$/, "", s); id = id s; next }
                     open { open = 0
                            if (id != "") print "    " where ": \"" substr(id, 1, 110) "\""
                            where = "" }' \
                        "$tmp/$lang.$kind.po" >"$tmp/$lang.$kind.list" 2>/dev/null
                n=$(wc -l <"$tmp/$lang.$kind.list")
                [ "$n" -gt 0 ] || continue
                listed=1
                fail "po/$lang.po: $n ${kind#only-} message(s) (run ninja -C BUILD sluice-update-po, then translate them):"
                cat "$tmp/$lang.$kind.list"
        done
        # What ships is po/LANG.po itself (msgfmt skips obsolete #~ entries), so it must
        # hold every current message; msgmerge above would quietly revive obsolete ones.
        if [ "$listed" = 0 ] && ! msgcmp "$po/$lang.po" "$tmp/sluice.pot" 2>"$tmp/msgcmp.err"; then
                fail "po/$lang.po lacks current messages (run ninja -C BUILD sluice-update-po):"
                sed -n 's/^.*sluice\.pot:\([0-9]*\): this message is used but not defined.*/\1/p' \
                        "$tmp/msgcmp.err" | while read -r line; do
                        # The msgid that starts at or before the reported line.
                        awk -v from="$line" 'NR > from && !(inid && /^"/) { exit }
                                             /^msgid / { buf = $0; inid = 1; next }
                                             inid && /^"/ { buf = buf "\n" $0; next }
                                             { inid = 0 }
                                             END { print buf }' "$tmp/sluice.pot" | sed 's/^/    /'
                done
        fi
        if ! msgfmt -c --check-accelerators=_ -o /dev/null "$tmp/$lang.po" 2>"$tmp/msgfmt.err"; then
                cat "$tmp/msgfmt.err"
                fail "po/$lang.po does not match the placeholders of the current sources"
        fi
done

if [ "$failed" = 0 ]; then
        for lang in $langs; do
                printf '%s: ' "$lang"
                msgfmt --statistics -o /dev/null "$tmp/$lang.po" 2>&1
        done
        echo "translations are current"
fi
exit "$failed"
