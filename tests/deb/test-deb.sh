#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Sluice as Debian ships it: the packages built from a copy of the tree,
# checked by lintian, installed with apt on this machine, their programs and
# files where the distribution and libvirt look for them, the units run from
# the installed files under a real user manager, and a purge that leaves
# nothing behind.
#
#   test-deb.sh WORK_DIR [CACHE_DIR]
#
# WORK_DIR holds the packages and logs of the last run; CACHE_DIR the Debian
# 13 virtiofsd package that check-virtiofsd-choice.sh sets next to Sluice's
# (which virtiofsd libvirt launches for a VM that names none).  Runs as root (it
# installs packages) and only where no Sluice package is installed but by
# an earlier run of this test (a marker file says so), since it purges what
# it installs; otherwise it skips (exit 77) and says why.  The install must
# not reach the network: apt runs without package sources, after a dry run
# has shown that it installs the three packages and nothing else.
# The package build is most of the time: DEB_BUILD_OPTIONS=nocheck (the
# other suites run the tests) parallel=2.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

work=${1:?usage: test-deb.sh WORK_DIR [CACHE_DIR]}
# Other releases' packages, kept across runs (tests/debian_archive.py)
cache=${2:-$work.cache}
top=${SLUICE_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
packages=(sluice-fs sluice sluice-applet)
# What this test installed, so that a run killed before its purge is
# cleaned up by the next run instead of blocking it.
marker=/var/tmp/sluice-deb-test.installed

need_root "installs and purges the sluice packages"
need_tools dpkg-buildpackage dh lintian apt-get dpkg-query python3 objdump ldd desktop-file-validate msgunfmt flock

installed_status() { # PACKAGE → its dpkg status (ii, rc, …), empty when unknown
        dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | tr -d ' '
}
# ensure_absent [--purge] — skips when a Sluice package is on the machine
# that this test did not install; with --purge (under the lock only: without
# it, the packages may be another run's, in use), purges what an earlier,
# interrupted run left.
ensure_absent() {
        local p s present=()
        for p in "${packages[@]}"; do
                s=$(installed_status "$p")
                [ -n "$s" ] && [ "$s" != un ] && present+=("$p ($s)")
        done
        [ "${#present[@]}" = 0 ] && return 0
        [ -f "$marker" ] ||
                skip "already on this machine, not installed by this test: ${present[*]};" \
                     "the test purges what it installs, so it runs only where Sluice is not installed" \
                     "(apt-get purge ${packages[*]} to run it here)"
        [ "${1:-}" = --purge ] || return 0
        note "purging what an earlier, interrupted run installed: ${present[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${apt_lock[@]}" "${packages[@]}" >/dev/null 2>&1 ||
                fail "cannot purge ${packages[*]}, left by an earlier run"
        rm -f "$marker"
}
# Another apt or dpkg at work (another test's apt-get, make deps) is waited for.
apt_lock=(-o DPkg::Lock::Timeout=600)
# Early, not to build for nothing; again under the lock below.
ensure_absent

installed=false
cleanup() {
        if $installed; then
                note "purging the packages (the test ended early)"
                DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${apt_lock[@]}" "${packages[@]}" >/dev/null 2>&1 &&
                        rm -f "$marker"
        fi
}
trap cleanup EXIT

version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version) || fail "cannot read debian/changelog"
arch=$(dpkg --print-architecture)
rm -rf "$work"
mkdir -p "$work" || fail "cannot make $work"

# --- build -----------------------------------------------------------------
t=$EPOCHREALTIME
DEB_BUILD_OPTIONS=${SLUICE_DEB_BUILD_OPTIONS:-nocheck parallel=2} "$here/build-debs.sh" "$work" >"$work/built" ||
        fail "the packages did not build (log: $work/build.log)"
debs=()
for p in "${packages[@]}"; do
        deb=$work/${p}_${version}_${arch}.deb
        [ -f "$deb" ] || fail "no $deb among what was built: $(tr '\n' ' ' <"$work/built")"
        debs+=("$deb")
done
pass "dpkg-buildpackage -us -uc -b built ${packages[*]} $version in $(since "$t") s"

# Release flags, -Werror off (debian/rules): a warning is still a defect.
warnings=$(grep -cE '^[^ :]+:[0-9]+:[0-9]+: warning:' "$work/build.log")
if [ "$warnings" = 0 ]; then
        pass "no compiler warning with Debian's build flags"
else
        grep -E '^[^ :]+:[0-9]+:[0-9]+: warning:' "$work/build.log" | head -n 20
        fail_later "$warnings compiler warning(s) with Debian's build flags (log: $work/build.log)"
fi

# --- lintian -----------------------------------------------------------------
t=$EPOCHREALTIME
changes=$work/sluice_${version}_${arch}.changes
lintian --fail-on error,warning --display-info --pedantic "$changes" >"$work/lintian.log" 2>&1
rc=$?
grep -v 'running with root privileges' "$work/lintian.log" | sed 's/^/  lintian: /'
if [ "$rc" = 0 ]; then
        pass "lintian: no error and no warning that is not overridden with its reason ($(since "$t") s)"
else
        fail_later "lintian reports errors or warnings (exit $rc), above"
fi

# --- install -----------------------------------------------------------------
# One run at a time from here to the purge (another worktree's, CI's): two
# would install and purge the same packages under each other.
lock=/run/lock/sluice-deb-test.lock
[ -d /run/lock ] || lock=/tmp/sluice-deb-test.lock
exec {lock_fd}>"$lock"
flock -w 900 "$lock_fd" || fail "another run of the deb test held $lock for 15 minutes"
ensure_absent --purge
# Without package sources apt can only use what is installed: a dependency
# missing here fails the install instead of being downloaded.
mkdir -p "$work/no-sources.d" && : >"$work/no-sources.list"
offline=(-o "Dir::Etc::SourceList=$work/no-sources.list" -o "Dir::Etc::SourceParts=$work/no-sources.d")
plan=$(DEBIAN_FRONTEND=noninteractive apt-get install -s --no-install-recommends "${apt_lock[@]}" "${offline[@]}" "${debs[@]}" 2>&1) ||
        { printf '%s\n' "$plan"; fail "apt cannot install the packages with what is on this machine (make deps installs the dependencies)"; }
would=$(sed -n 's/^Inst \([^ ]*\) .*/\1/p' <<<"$plan" | sort | tr '\n' ' ')
[ "$would" = "$(printf '%s\n' "${packages[@]}" | sort | tr '\n' ' ')" ] ||
        fail "apt would install more than the three packages (a download): $would"
# Paths of files and folders that exist before the install: the purge must
# leave exactly these.
before=$work/existed-before
for deb in "${debs[@]}"; do
        dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||; /^$/d'
done | sort -u >"$work/shipped"
while IFS= read -r f; do
        [ -e "$f" ] || [ -L "$f" ] && printf '%s\n' "$f"
done <"$work/shipped" >"$before"

# libvirt's local AppArmor file, which the sluice package may write to: as
# it was, after the purge.
aa_local_before=$(cat /etc/apparmor.d/local/abstractions/libvirt-qemu 2>/dev/null | sha256sum)

printf '%s\n' "${packages[@]}" >"$marker"
installed=true
t=$EPOCHREALTIME
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${apt_lock[@]}" "${offline[@]}" "${debs[@]}" \
        >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "apt-get install failed"; }
for p in "${packages[@]}"; do
        [ "$(installed_status "$p")" = ii ] || fail "$p is not installed after apt-get install (log: $work/install.log)"
done
pass "apt-get install ./${packages[0]}…deb installed ${packages[*]} from this machine alone ($(since "$t") s)"

# --- the libraries each program loads -----------------------------------------
if out=$(python3 "$here/check-shlib-deps.py" "${packages[@]}"); then
        pass "every library the installed programs load comes with their package's Depends"
        sed 's/^/  /' <<<"$out"
else
        sed 's/^/  /' <<<"$out"
        fail_later "a library an installed program loads is not covered by its package's Depends"
fi

# --- the installed layout -------------------------------------------------------
owned_by() { # PATH PACKAGE
        local owner
        owner=$(dpkg -S "$1" 2>/dev/null | sed -n '1s/^\([^:,]*\)\(:[^:]*\)\?: .*/\1/p')
        [ "$owner" = "$2" ]
}
check_file() { # PACKAGE PATH WHAT
        if [ -f "$2" ] && owned_by "$2" "$1"; then
                pass "$1 installs $3: $2"
        else
                fail_later "$1 does not install $3 at $2"
        fi
}

worker=/usr/libexec/sluice-fs
if [ -x "$worker" ] && owned_by "$worker" sluice-fs; then
        pass "the worker is at $worker, from sluice-fs"
else
        fail_later "no executable $worker from sluice-fs"
fi
# No descriptor where libvirt looks for a virtiofsd: libvirt gives the first
# "fs" one by file name to every VM without <binary path>, so one of ours
# would replace virtiofsd for other people's VMs (README.md).  The example
# is documentation.
json=/usr/share/doc/sluice-fs/examples/vhost-user/sluice-fs.json
check_file sluice-fs "$json" "the example vhost-user descriptor"
if out=$(python3 - "$json" "$worker" 2>&1 <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
assert d.get("type") == "fs", f"type is {d.get('type')!r}, libvirt looks for \"fs\""
assert d.get("binary") == sys.argv[2], f"binary is {d.get('binary')!r}"
EOF
); then
        pass "$json is valid JSON, type fs, binary $worker"
else
        fail_later "$json: $out"
fi
descriptors=$(for p in "${packages[@]}"; do dpkg -L "$p"; done | grep -E '^(/usr/share/qemu|/etc/qemu)/vhost-user/.' || true)
if [ -z "$descriptors" ]; then
        pass "no package installs a vhost-user descriptor in /usr/share/qemu or /etc/qemu"
else
        fail_later "installed where libvirt picks a VM's virtiofsd: $(tr '\n' ' ' <<<"$descriptors")"
fi
# What libvirt really launches for a VM without <binary path>, with the
# packages installed, next to Debian 12's and Debian 13's virtiofsd.
t=$EPOCHREALTIME
bash "$here/check-virtiofsd-choice.sh" "$work/virtiofsd-choice" "$cache" 2>&1 | sed 's/^/  virtiofsd: /'
rc=${PIPESTATUS[0]}
case $rc in
0) pass "libvirt launches virtiofsd, never sluice-fs, for a VM that names no binary ($(since "$t") s)" ;;
77) note "SKIP libvirt's choice of a virtiofsd cannot be checked here (above)" ;;
*) fail_later "libvirt's choice of a virtiofsd for a VM that names none (exit $rc), above" ;;
esac
# What libvirt asks a vhost-user binary before it uses it.
if caps=$("$worker" --print-capabilities 2>&1) && python3 -c 'import json, sys; json.loads(sys.argv[1])' "$caps" 2>/dev/null; then
        pass "$worker --print-capabilities answers JSON, as libvirt expects"
else
        fail_later "$worker --print-capabilities: $caps"
fi

for unit in sluice-fs@.service:sluice-fs sluice-service.service:sluice sluice-share@.service:sluice; do
        check_file "${unit#*:}" "/usr/lib/systemd/user/${unit%%:*}" "the user unit"
done
# Each unit starts an installed program.
for f in /usr/lib/systemd/user/sluice-*.service; do
        [ -f "$f" ] || continue
        while read -r exe; do
                if [ -x "$exe" ]; then
                        pass "${f##*/} runs $exe, which is installed"
                else
                        fail_later "${f##*/} runs $exe, which is not installed"
                fi
        done < <(sed -n 's/^Exec\(Start\|Stop\)=[-@+!:]*\([^ ]*\).*/\2/p' "$f")
done
dbus_service=/usr/share/dbus-1/services/org.sluice.Sluice1.service
check_file sluice "$dbus_service" "the D-Bus activation file"
if grep -qx 'Exec=/usr/bin/sluice-service' "$dbus_service" &&
        grep -qx 'SystemdService=sluice-service.service' "$dbus_service"; then
        pass "D-Bus activates /usr/bin/sluice-service, through sluice-service.service under systemd"
else
        fail_later "$dbus_service does not name /usr/bin/sluice-service and sluice-service.service: $(tr '\n' ' ' <"$dbus_service")"
fi
check_file sluice /usr/share/dbus-1/interfaces/org.sluice.Sluice1.xml "the D-Bus interface"
# libvirt's QEMU under AppArmor may reach the workers' sockets: the snippet,
# a conffile, in the folder libvirt >= 9.6 includes; with an older libvirt
# installed, the postinst includes it from libvirt's local file (its own
# test: tests/apparmor).
snippet=/etc/apparmor.d/abstractions/libvirt-qemu.d/sluice
check_file sluice "$snippet" "the AppArmor snippet for libvirt's QEMU"
if dpkg-query -W -f='${Conffiles}\n' sluice | grep -q "^ $snippet "; then
        pass "$snippet is a conffile"
else
        fail_later "$snippet is not among sluice's conffiles"
fi
aa_abstraction=/etc/apparmor.d/abstractions/libvirt-qemu
aa_local=/etc/apparmor.d/local/abstractions/libvirt-qemu
if [ -f "$aa_abstraction" ] && ! grep -q 'libvirt-qemu\.d' "$aa_abstraction"; then
        if grep -qx '#include <abstractions/libvirt-qemu.d/sluice>' "$aa_local" 2>/dev/null; then
                pass "libvirt < 9.6 is installed: $aa_local includes the snippet"
        else
                fail_later "libvirt < 9.6 is installed, but $aa_local does not include the snippet"
        fi
elif [ "$(cat "$aa_local" 2>/dev/null | sha256sum)" = "$aa_local_before" ]; then
        pass "libvirt's local AppArmor file is as it was (no libvirt < 9.6 here)"
else
        fail_later "the install changed $aa_local, which no libvirt < 9.6 needs here"
fi
autostart=/etc/xdg/autostart/org.sluice.Applet-autostart.desktop
check_file sluice-applet "$autostart" "the autostart entry"
for f in "$autostart" /usr/share/applications/org.sluice.Applet.desktop /usr/share/applications/org.sluice.Applet-share.desktop; do
        if out=$(desktop-file-validate "$f" 2>&1) && [ -z "$out" ]; then
                pass "desktop-file-validate $f"
        else
                fail_later "desktop-file-validate $f: $out"
        fi
done
check_file sluice-applet /usr/share/icons/hicolor/scalable/apps/org.sluice.Applet.svg "the application icon"

# Every program has its manual page and says the packaged version.
for prog in sluice-fs:/usr/libexec/sluice-fs sluice:/usr/bin/sluice-service sluice:/usr/bin/sluicectl \
        sluice-applet:/usr/bin/sluice-applet; do
        p=${prog%%:*} exe=${prog#*:}
        name=${exe##*/}
        page=/usr/share/man/man1/$name.1.gz
        if [ -f "$page" ] && owned_by "$page" "$p" && zcat "$page" | grep -c '^\.TH' >/dev/null; then
                pass "$p installs the manual page $page"
        else
                fail_later "$p has no manual page for $name at $page"
        fi
        out=$(env -u DISPLAY -u WAYLAND_DISPLAY "$exe" --version 2>&1)
        if [ "$out" = "$name $version" ]; then
                pass "$exe --version says $version"
        else
                fail_later "$exe --version says '$out', not '$name $version'"
        fi
done

# The translations, one per language the tree has.
for lang in $(sed 's/#.*//' "$top/po/LINGUAS"); do
        mo=/usr/share/locale/$lang/LC_MESSAGES/sluice.mo
        if [ -f "$mo" ] && owned_by "$mo" sluice && msgunfmt "$mo" >/dev/null 2>&1; then
                pass "sluice installs the $lang translation: $mo"
        else
                fail_later "no valid $mo from sluice"
        fi
done

# Each package holds what the split promises: no GTK outside sluice-applet.
for p in sluice-fs sluice; do
        deps=$(dpkg-query -W -f='${Depends}' "$p")
        if grep -Ec 'libgtk|libadwaita' <<<"$deps" >/dev/null; then
                fail_later "$p depends on GTK: $deps"
        else
                pass "$p does not pull in GTK"
        fi
done

# Nothing is enabled for every user (debian/rules: dh_installsystemduser --no-enable).
enabled=$(find /etc/systemd/user -name 'sluice*' 2>/dev/null)
if [ -z "$enabled" ]; then
        pass "no unit is enabled globally: /etc/systemd/user holds no sluice link"
else
        fail_later "units enabled for every user at install: $enabled"
fi

# --- the units under a real user manager, from the installed files ----------------
session=$top/tests/session/run.sh
if [ -f "$session" ]; then
        t=$EPOCHREALTIME
        vmm=${SLUICE_BUILD_ROOT:-}/tests/frontend/sluice-test-vmm
        [ -x "$vmm" ] && export SLUICE_TEST_VMM=${SLUICE_TEST_VMM:-$vmm}
        bash "$session" --installed service share-unit fs-unit autostart 2>&1 | sed 's/^/  session: /'
        rc=${PIPESTATUS[0]}
        case $rc in
        0) pass "tests/session/run.sh --installed: the units, D-Bus activation and autostart from /usr ($(since "$t") s)" ;;
        77) note "SKIP tests/session/run.sh --installed cannot run here (above)" ;;
        *) fail_later "tests/session/run.sh --installed failed (exit $rc), above" ;;
        esac
else
        note "SKIP the units under a user manager: no tests/session/run.sh in this tree"
fi

# --- purge -------------------------------------------------------------------------
for p in "${packages[@]}"; do dpkg -L "$p"; done | sort -u >"$work/listed"
t=$EPOCHREALTIME
DEBIAN_FRONTEND=noninteractive apt-get purge -y "${apt_lock[@]}" "${offline[@]}" "${packages[@]}" >"$work/purge.log" 2>&1 ||
        { cat "$work/purge.log"; fail "apt-get purge failed"; }
installed=false
rm -f "$marker"
known=()
for p in "${packages[@]}"; do
        s=$(installed_status "$p")
        [ -n "$s" ] && [ "$s" != un ] && known+=("$p ($s)")
done
if [ "${#known[@]}" = 0 ]; then
        pass "apt-get purge removed ${packages[*]} and their configuration ($(since "$t") s)"
else
        fail_later "dpkg still knows after the purge: ${known[*]}"
fi
# Everything dpkg listed (and the packages' own, shipped paths) that was not
# there before the install is gone.
left=$(sort -u "$work/listed" "$work/shipped" | while IFS= read -r f; do
        [ "$f" = /. ] && continue
        { [ -e "$f" ] || [ -L "$f" ]; } && ! grep -qxF -- "$f" "$before" && printf '%s\n' "$f"
done)
if [ -z "$left" ]; then
        pass "the purge left nothing the packages installed ($(wc -l <"$work/listed") paths checked)"
else
        fail_later "left after the purge: $(tr '\n' ' ' <<<"$left")"
fi
if [ "$(cat /etc/apparmor.d/local/abstractions/libvirt-qemu 2>/dev/null | sha256sum)" = "$aa_local_before" ]; then
        pass "the purge left libvirt's local AppArmor file as it was before the install"
else
        fail_later "the purge left /etc/apparmor.d/local/abstractions/libvirt-qemu changed"
fi
enabled=$(find /etc/systemd/user /var/lib/systemd/deb-systemd-user-helper-enabled \
        /var/lib/systemd/deb-systemd-user-helper-masked -name '*sluice*' 2>/dev/null)
if [ -z "$enabled" ]; then
        pass "no sluice link or deb-systemd-helper state is left in /etc/systemd/user or /var/lib/systemd"
else
        fail_later "left after the purge: $enabled"
fi
finish
