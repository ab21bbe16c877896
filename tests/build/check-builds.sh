#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tree builds warning-free in the three ways others build it, not only in
# make check's own build (meson test --suite build):
#   gcc-release    gcc, --buildtype=release (-O3: gcc warns about other things)
#   clang          clang, the whole tree with the test hooks
#   gcc-debian     gcc with Debian's hardening flags (dpkg-buildflags,
#                  hardening=+all) as debian/rules builds the package, but
#                  with -Werror kept
# Each fails on a compiler warning: -Werror (meson.build's default) turns it
# into a failed build, and a warning line that is not an error (a linker's)
# fails it too.
#
#   tests/build/check-builds.sh [TOP]
#
# Cached: the build folders stay, under $SLUICE_BUILD_CACHE (default
# /var/cache/sluice-builds as root, else ~/.cache/sluice-builds), one set per
# source tree, so that a second run rebuilds only what changed; ccache, when
# installed, keeps the objects of a fresh clone at the same path.  A folder
# whose configuration changed (compiler version, flags, options, meson) is
# set up again from nothing.
# Exit: 0 pass, 1 fail, 77 skip (no clang or dpkg-buildflags).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
top=$(cd "${1:-$here/../..}" && pwd)
cd "$top" || exit 1   # dpkg-buildflags maps this folder (-ffile-prefix-map)

need_tools meson ninja gcc clang dpkg-buildflags flock sha256sum

if [ -n "${SLUICE_BUILD_CACHE:-}" ]; then
        cache=$SLUICE_BUILD_CACHE
elif [ "$(id -u)" = 0 ]; then
        cache=/var/cache/sluice-builds
else
        cache=${XDG_CACHE_HOME:-$HOME/.cache}/sluice-builds
fi
# one set of folders per source tree (a build folder belongs to one)
trees=$cache/$(printf '%s' "$top" | sha256sum | cut -c1-16)
mkdir -p "$trees" || fail "cannot make $trees"
printf '%s\n' "$top" >"$trees/source"
# two runs on one tree would build into the same folders
exec 9>"$trees/lock"
flock -w 1800 9 || fail "another check-builds.sh held $trees/lock for 30 minutes"

ccache=()
if command -v ccache >/dev/null; then
        ccache=(ccache)
        export CCACHE_DIR=$cache/ccache CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
fi

# build NAME CC [VAR=VALUE…] -- MESON-OPTIONS… — sets up (when new or its
# configuration changed) and builds $trees/NAME; a FAIL line with the
# compiler's messages when it does not build or warns.
build() {
        local name=$1 cc=$2 dir=$trees/$1 env=() opts key log t rc
        shift 2
        while [ "$1" != -- ]; do env+=("$1"); shift; done
        shift
        opts=("$@")
        key=$(printf '%s\n' "$top" "${ccache[*]} $cc" "$("$cc" --version | head -n 1)" \
                "$(meson --version)" "${env[@]}" "${opts[@]}")
        t=$EPOCHREALTIME
        log=$dir.log
        if [ ! -f "$dir/build.ninja" ] || [ "$(cat "$dir/sluice-build-key" 2>/dev/null)" != "$key" ]; then
                rm -rf "$dir"
                if ! env CC="${ccache[*]} $cc" "${env[@]}" \
                        meson setup "$dir" "$top" "${opts[@]}" >"$log" 2>&1; then
                        tail -n 20 "$log"
                        fail_later "$name: meson setup failed (${opts[*]}; log $log)"
                        return
                fi
                printf '%s\n' "$key" >"$dir/sluice-build-key"
        fi
        ninja -C "$dir" -k 0 >"$log" 2>&1
        rc=$?
        if [ $rc != 0 ] || grep -q 'warning:' "$log"; then
                grep -E -A 3 'error:|warning:' "$log" | head -n 60
                fail_later "$name: $(grep -cE 'error:|warning:' "$log") compiler message(s), ninja exit $rc (log $log)"
                return
        fi
        pass "$name builds warning-free ($(since "$t") s)"
}

build gcc-release gcc -- --buildtype=release
build clang clang -- -Dtest_hooks=true

# What debian/rules builds with (DEB_BUILD_MAINT_OPTIONS there): dh's meson
# build is --buildtype=plain with these flags; -Werror stays on here.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
build gcc-debian gcc \
        "CFLAGS=$(dpkg-buildflags --get CFLAGS)" \
        "CPPFLAGS=$(dpkg-buildflags --get CPPFLAGS)" \
        "LDFLAGS=$(dpkg-buildflags --get LDFLAGS)" -- \
        --buildtype=plain -Dtest_hooks=false -Dseccomp=enabled -Dbuild_tree_worker=false

finish
