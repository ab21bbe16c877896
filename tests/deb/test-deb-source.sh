#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# debian/ agrees with the tree: the package's version is the project's
# (meson.build), and every package debian/control builds with is one `make
# deps` installs (the Makefile's DEPS_BUILD), so that CI can build it.
#
#   test-deb-source.sh SOURCE_ROOT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
top=${1:?usage: test-deb-source.sh SOURCE_ROOT}
need_tools dpkg-parsechangelog meson python3 make

changelog=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version) || fail "cannot read debian/changelog"
project=$(meson introspect --projectinfo "$top/meson.build" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])') ||
        fail "cannot read the project version from meson.build"
if [ "$changelog" = "$project" ]; then
        pass "debian/changelog and meson.build both say version $project"
else
        fail_later "debian/changelog says $changelog, meson.build says $project: a release changes both"
fi

format=$(cat "$top/debian/source/format")
if [ "$format" = "3.0 (native)" ]; then
        pass "source format $format: the version has no Debian revision"
else
        fail_later "debian/source/format is '$format', not '3.0 (native)'"
fi

# The Makefile's DEPS_BUILD as make expands it.
deps=$(make --no-print-directory -s -C "$top" -f Makefile -f - print-deps-build <<'MAKE'
print-deps-build:
	@echo $(DEPS_BUILD)
MAKE
) || fail "cannot read DEPS_BUILD from the Makefile"
# Build-Depends, each package name alone (debhelper-compat is debhelper's).
build_deps=$(python3 - "$top/debian/control" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
source = text.split("\n\n")[0]
m = re.search(r"^Build-Depends:(.*(?:\n[ \t].*)*)", source, re.M)
for clause in m.group(1).split(","):
    for alternative in clause.split("|"):
        name = alternative.split()[0] if alternative.split() else ""
        name = name.split("(")[0].split("[")[0].split(":")[0]
        if name:
            print("debhelper" if name == "debhelper-compat" else name)
PY
) || fail "cannot read Build-Depends from debian/control"
missing=()
for d in $build_deps; do
        grep -qxF -- "$d" <(tr ' ' '\n' <<<"$deps") || missing+=("$d")
done
if [ "${#missing[@]}" = 0 ]; then
        pass "every Build-Depends is in the Makefile's DEPS_BUILD ($(wc -w <<<"$build_deps") packages)"
else
        fail_later "Build-Depends not in the Makefile's DEPS_BUILD (make deps would not install them): ${missing[*]}"
fi
finish
