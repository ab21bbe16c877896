#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Translations in use (run through with-translations.sh, which puts the build's
# catalogues where the binaries look): sluicectl and the applet with
# LANGUAGE=de and LANGUAGE=ko in a UTF-8 locale (C.UTF-8: gettext ignores
# LANGUAGE only in the "C" locale) print and show their German and Korean
# text.  Fails when a catalogue is missing or a string is not translated.
#
# The window's text is read back through the test hook (Labels: the text of
# every label shown), not from pixels: OCR is not something a test can rely
# on.  That the Korean text is drawn with real glyphs is checked apart: every
# character of the drop zone's title is in an installed font (fc-list
# :charset=…), and the title's pixels differ from a run in which fontconfig
# rejects every Korean font (where Pango draws hex boxes, "tofu") — the same
# window, state and position, so only the font can make them differ.  The
# screenshots stay in the build directory.
#   SLUICE_TEST_FONT_DIR  fonts to use as the user's own (a machine where the
#                         CJK font package, fonts-wqy-microhei, is not installed)
. "$(dirname "$0")/lib.sh"
: "${SLUICE_CTL:?SLUICE_CTL must name sluicectl}"
export LC_ALL=C.UTF-8
unset LANG

if [ -n "${SLUICE_TEST_FONT_DIR:-}" ]; then
        mkdir -p "$XDG_DATA_HOME/fonts"
        cp "$SLUICE_TEST_FONT_DIR"/* "$XDG_DATA_HOME/fonts/"
fi

labels() { hook_prop Labels; }
has_label() { labels | grep -qF "'$1'"; }
ctl() { LANGUAGE=$lang "$SLUICE_CTL" "$@" 2>&1 || true; }
expect_out() { # OUTPUT TEXT WHAT
        grep -qF "$2" <<<"$1" || fail "sluicectl $3 with LANGUAGE=$lang does not say “$2”: $1"
}

start_desktop --notifications
start_service
folder="$SA_WORK/Fotos"
mkdir -p "$folder"
add_share "$folder" >/dev/null

for lang in de ko; do
        case $lang in
        de) usage="Aufruf: sluicectl" header="ZUSTAND" nosuch="keine Freigabe „nosuch“"
            title="Ordner hierher ziehen" group="Geteilte Ordner" ;;
        ko) usage="사용법: sluicectl" header="상태" nosuch="공유가 없습니다"
            title="여기에 폴더를 놓으십시오" group="공유 폴더" ;;
        esac
        expect_out "$(ctl --help)" "$usage" --help
        expect_out "$(ctl list)" "$header" list
        expect_out "$(ctl stats nosuch)" "$nosuch" "stats nosuch"
        note "sluicectl speaks $lang"

        LANGUAGE=$lang start_applet
        wait_for 15 window_visible || fail "the window did not open"
        wait_for 10 has_label "$title" || fail "the $lang window does not show “$title”: $(labels)"
        has_label "$group" || fail "the $lang window does not show “$group”: $(labels)"
        has_label "Drop Folders Here" && fail "the $lang window still shows English: $(labels)"
        note "the window speaks $lang"
        [ $lang = ko ] || shot translations-$lang
        [ $lang = ko ] && break
        gdbus call --session -d org.sluice.Applet -o /org/sluice/Applet -m org.gtk.Actions.Activate quit '[]' '{}' >/dev/null
        wait_for 20 pid_gone "$applet_pid" || fail "the applet did not quit"
done

# ---- the Korean title in glyphs, not tofu ----------------------------------------
if [ -z "$(fc-list :lang=ko family)" ]; then
        echo "SKIP: no font covers Korean (install fonts-wqy-microhei): the text checks passed, the glyph check did not run"
        exit 77
fi
for (( i=0; i<${#title}; i++ )); do
        c=${title:i:1}
        [ "$c" = " " ] && continue
        cp=$(printf '%x' "'$c")
        [ -n "$(fc-list ":charset=$cp" family)" ] || fail "no installed font has “$c” (U+$cp)"
done
# crop_title NAME: the screen around the drop zone's title (located by its text).
crop_title() {
        locate "label:$title" || fail "cannot locate the title “$title”"
        eval "$(xdotool getwindowgeometry --shell "$loc_win")"
        import -window root "$SA_SHOTS/$1.png"
        convert "$SA_SHOTS/$1.png" -crop "360x40+$((X + loc_x - 180))+$((Y + loc_y - 20))" +repage "$SA_SHOTS/$1-title.png"
}
sleep_until_settled() { # the window drawn, nothing moving: two crops in a row agree
        local a=$SA_SHOTS/settle-a.png b=$SA_SHOTS/settle-b.png
        settled() {
                crop_title settle; cp "$SA_SHOTS/settle-title.png" "$a"
                sleep 0.5
                crop_title settle; cp "$SA_SHOTS/settle-title.png" "$b"
                [ "$(compare -metric AE "$a" "$b" null: 2>&1)" = 0 ]
        }
        wait_for 20 settled || fail "the window never stopped changing"
        rm -f "$a" "$b" "$SA_SHOTS"/settle*.png
}
sleep_until_settled
crop_title translations-ko
colours=$(identify -format %k "$SA_SHOTS/translations-ko-title.png")
[ "$colours" -ge 8 ] || fail "the Korean title looks blank ($colours colours)"

gdbus call --session -d org.sluice.Applet -o /org/sluice/Applet -m org.gtk.Actions.Activate quit '[]' '{}' >/dev/null
wait_for 20 pid_gone "$applet_pid" || fail "the applet did not quit"
cat >"$SA_WORK/no-korean-fonts.conf" <<'CONF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <include ignore_missing="no">/etc/fonts/fonts.conf</include>
  <selectfont><rejectfont><pattern><patelt name="lang"><string>ko</string></patelt></pattern></rejectfont></selectfont>
</fontconfig>
CONF
[ -z "$(FONTCONFIG_FILE="$SA_WORK/no-korean-fonts.conf" fc-list :lang=ko family)" ] ||
        fail "fontconfig still offers a Korean font with them rejected"
LANGUAGE=ko FONTCONFIG_FILE="$SA_WORK/no-korean-fonts.conf" start_applet
wait_for 15 window_visible || fail "the window did not open without Korean fonts"
sleep_until_settled
crop_title translations-ko-tofu
diff=$(compare -metric AE "$SA_SHOTS/translations-ko-title.png" "$SA_SHOTS/translations-ko-tofu-title.png" null: 2>&1 || true)
note "title pixels that differ with and without a Korean font: $diff"
[ "${diff%%.*}" -ge 200 ] 2>/dev/null || fail "the Korean title looks the same without a Korean font ($diff pixels differ): not drawn with its glyphs"
echo "PASS"
