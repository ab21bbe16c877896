#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds Sluice's Debian packages from a copy of the source tree (make deb;
# the deb suite's test-deb.sh).
#
#   tests/deb/build-debs.sh OUT_DIR
#
# The copy holds the files git tracks, as they are in the working tree (a
# file not added to git is not in the package, as in a fresh clone); without
# git, the whole tree but build folders.  It goes to OUT_DIR/src/sluice-VERSION,
# since dpkg-buildpackage writes its results into the folder above the
# source.  Then `dpkg-buildpackage -us -uc -b` (unsigned, binaries only),
# with DEB_BUILD_OPTIONS as given (unset: parallel=CORES), its log in
# OUT_DIR/build.log.  The .debs, .changes and .buildinfo end up in OUT_DIR,
# one path a line on stdout; OUT_DIR/src is removed.  Exit 0 built, 1 not.
set -uo pipefail
out=${1:?usage: build-debs.sh OUT_DIR}
top=$(cd "$(dirname "$0")/../.." && pwd)

die() { echo "build-debs: $*" >&2; exit 1; }

command -v dpkg-buildpackage >/dev/null || die "dpkg-buildpackage is missing (make deps installs dpkg-dev)"
command -v dh >/dev/null || die "debhelper is missing (make deps installs it)"
[ -f "$top/debian/changelog" ] || die "$top has no debian/ folder"

version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version) ||
        die "cannot read the version from debian/changelog"
mkdir -p "$out" || die "cannot make $out"
out=$(cd "$out" && pwd)
src=$out/src/sluice-$version
# Results of an earlier build would be listed as this one's.
rm -rf "$out/src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out/build.log"
mkdir -p "$src" || die "cannot make $src"

if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        # Tracked files deleted in the working tree are left out, as a commit
        # would leave them.
        (cd "$top" && git ls-files -z --cached | while IFS= read -r -d '' f; do
                [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
        done | tar --null -T - -cf -) | tar -x -C "$src" ||
                die "cannot copy the files git tracks to $src"
else
        (cd "$top" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -x -C "$src" ||
                die "cannot copy $top to $src"
fi

export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS-parallel=$(nproc)}
echo "building sluice $version in $src (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS); log: $out/build.log" >&2
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1; then
        tail -n 40 "$out/build.log" >&2
        die "dpkg-buildpackage failed: the whole log is $out/build.log"
fi

shopt -s nullglob
results=("$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo)
[ "${#results[@]}" -gt 0 ] || die "dpkg-buildpackage made no packages in $out/src"
mv "${results[@]}" "$out/" || die "cannot move the packages to $out"
rm -rf "$out/src"
for f in "${results[@]}"; do
        echo "$out/${f##*/}"
done
