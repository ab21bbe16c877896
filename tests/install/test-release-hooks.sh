#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A release has no test hooks: the sluice-fs and sluice-applet that meson
# builds by default (test_hooks off) contain neither the applet's
# org.sluice.Applet.Test interface nor sluice-fs's SLUICE_FS_TEST_SANDBOX.
#
#   test-release-hooks.sh TEST_HOOKS APPLET RELEASE_TREE
#
# TEST_HOOKS, APPLET: this build's options (true/false).  A build without the
# hooks is checked as it is.  A build with them (make check's) must show them
# (so that the markers below still name the hooks), and then a second tree,
# RELEASE_TREE, configured with meson's defaults, builds only those two
# programs and is checked; it stays for the next run, which rebuilds only
# what changed.
set -euo pipefail
test_hooks=$1 applet=$2 tree=$3
build=${SLUICE_BUILD_ROOT:?} source=${SLUICE_SOURCE_ROOT:?}

fail() { echo "FAIL: $*" >&2; exit 1; }

# What each hook leaves in a program: its environment variable and D-Bus
# name as strings, its entry point as a symbol.
fs_strings=(SLUICE_FS_TEST_SANDBOX "sandbox test: opening")
applet_strings=(SLUICE_APPLET_TEST_HOOK org.sluice.Applet.Test)
applet_symbols=(sa_test_hook_install)

# markers WANT BINARY STRINGS... -- SYMBOLS...: fails unless every marker is
# present (WANT=yes) or none is (WANT=no).
markers() {
        local want=$1 bin=$2 m found symbols
        shift 2
        [ -x "$bin" ] || fail "$bin was not built"
        # not nm | grep -q: with pipefail, nm killed by SIGPIPE after an
        # early match would read as "missing"
        symbols=$(nm "$bin" 2>/dev/null) || fail "nm cannot read $bin"
        local in_symbols=false
        for m in "$@"; do
                if [ "$m" = -- ]; then in_symbols=true; continue; fi
                if $in_symbols; then
                        grep -qw -- "$m" <<<"$symbols" && found=yes || found=no
                else
                        grep -qaF -- "$m" "$bin" && found=yes || found=no
                fi
                [ "$found" = "$want" ] ||
                        fail "$bin: '$m' is $([ "$found" = yes ] && echo present || echo missing)" \
                             "(a build with test_hooks=$([ "$want" = yes ] && echo true || echo false))"
        done
        echo "ok: $bin $([ "$want" = yes ] && echo has || echo has no) test hooks"
}

check() { # WANT BUILD_DIR
        markers "$1" "$2/daemon/sluice-fs" "${fs_strings[@]}"
        if [ "$applet" = true ]; then
                markers "$1" "$2/applet/sluice-applet" "${applet_strings[@]}" -- "${applet_symbols[@]}"
        fi
}

if [ "$test_hooks" = false ]; then
        check no "$build"
        exit 0
fi
check yes "$build"
targets=(sluice-fs)
[ "$applet" = true ] && targets+=(sluice-applet)
if [ ! -f "$tree/build.ninja" ]; then
        # Only what the two programs need; -O0 compiles fastest, and warnings
        # are the other builds' business.
        meson setup "$tree" "$source" -Dservice=false -Dguest_tests=false -Dapplet="$applet" \
                -Dbuildtype=debug -Dwerror=false >"$tree.log" 2>&1 ||
                { cat "$tree.log"; fail "cannot configure the release tree $tree"; }
fi
grep -q "SLUICE_TEST_HOOKS 0" "$tree/config.h" || fail "meson's default for test_hooks is not false"
meson compile -C "$tree" "${targets[@]}" >"$tree.log" 2>&1 ||
        { cat "$tree.log"; fail "cannot build the release tree $tree"; }
check no "$tree"
