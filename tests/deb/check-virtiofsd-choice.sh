#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Which virtiofs daemon the system libvirtd launches for a VM whose
# <filesystem> names no <binary path> (virt-manager's default), with the
# vhost-user descriptors installed on this machine now, next to each
# distribution's virtiofsd descriptor.  tests/deb/test-deb.sh runs it while
# the Sluice packages are installed: installing Sluice must change nothing
# for other people's VMs.
#
#   check-virtiofsd-choice.sh WORK_DIR CACHE_DIR
#
# libvirt takes the first "fs" descriptor by file name among
# /usr/share/qemu/vhost-user and /etc/qemu/vhost-user (a file in /etc
# replaces one of the same name, an empty one hides it).  Each case puts
# descriptors under the real names and at the real sort positions into
# /etc/qemu/vhost-user, their "binary" a recorder that notes that it was
# chosen and exits (libvirt then fails the start: no QEMU is run):
#   Debian 12  the machine's own 50-qemu-virtiofsd.json (qemu-system-common)
#   Debian 13  virtiofsd's 50-virtiofsd.json, from the trixie package (a
#              private apt state, tests/debian_archive.py; skipped alone when
#              the mirror cannot be reached), Debian 12's hidden
#   none       both hidden: libvirt must say it found no virtiofsd
# A tiny TCG domain with one such filesystem is started in each; the one
# run at a time of the libvirt suite's lock (tests/libvirt/lock.sh).
# Exit: 0 pass, 1 fail, 77 skip (not root, no libvirtd/QEMU, or the machine's
# /etc/qemu/vhost-user already holds files of these names).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib.sh"

work=${1:?usage: check-virtiofsd-choice.sh WORK_DIR CACHE_DIR}
cache=${2:?usage: check-virtiofsd-choice.sh WORK_DIR CACHE_DIR}
need_root "starts the system libvirtd and writes /etc/qemu/vhost-user"
need_tools libvirtd virsh qemu-system-x86_64 python3 flock
. "$top/tests/libvirt/lock.sh"
libvirt_test_lock "$0" "$@"
. "$top/tests/libvirt/system-libvirtd.sh"

etc=/etc/qemu/vhost-user
names=(50-qemu-virtiofsd.json 50-virtiofsd.json)
for n in "${names[@]}"; do
        [ -e "$etc/$n" ] && skip "$etc/$n exists on this machine; the check writes files of that name"
done
dom=sluice-deb-virtiofsd
made_dirs=()
cleanup() {
        virsh -q -c qemu:///system destroy "$dom" >/dev/null 2>&1
        virsh -q -c qemu:///system undefine "$dom" >/dev/null 2>&1
        for n in "${names[@]}"; do rm -f "$etc/$n"; done
        local i
        for ((i = ${#made_dirs[@]} - 1; i >= 0; i--)); do rmdir "${made_dirs[i]}" 2>/dev/null; done
        system_libvirtd_cleanup
}
trap cleanup EXIT

mkdir -p "$work/shared" || fail "cannot make $work"
for d in /etc/qemu "$etc"; do
        [ -d "$d" ] || { mkdir "$d" && made_dirs+=("$d"); } || fail "cannot make $d"
done
system_libvirtd_setup check-virtiofsd-choice.sh || fail "cannot set up the system libvirtd"
system_libvirtd_start || fail "the system libvirtd did not start (log: $work/libvirtd.log)"

# The recorder, run as virtiofsd-recorder-NAME (a link), notes NAME: the
# descriptor whose binary libvirt launched.
recorder=$work/virtiofsd-recorder
chosen=$work/chosen
cat >"$recorder" <<REC
#!/bin/sh
[ "\$1" = --print-capabilities ] && { echo '{"type": "fs"}'; exit 0; }
echo "\${0##*/virtiofsd-recorder-}" >"$chosen"
exit 1
REC
chmod 755 "$recorder"
# descriptor SOURCE NAME.json: SOURCE, its binary the recorder as NAME → $etc/NAME.json
descriptor() {
        ln -sf "$recorder" "$recorder-${2%.json}"
        python3 - "$1" "$recorder-${2%.json}" >"$etc/$2" <<'PY' || fail "cannot rewrite $1"
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
assert d.get("type") == "fs", f"{sys.argv[1]}: type {d.get('type')!r}"
d["binary"] = sys.argv[2]
print(json.dumps(d, indent=2))
PY
}

cat >"$work/$dom.xml" <<XML
<domain type='qemu'>
  <name>$dom</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <features><acpi/></features>
  <memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>
  <devices>
    <emulator>$(command -v qemu-system-x86_64)</emulator>
    <filesystem type='mount' accessmode='passthrough'>
      <driver type='virtiofs'/>
      <source dir='$work/shared'/>
      <target dir='t'/>
    </filesystem>
  </devices>
</domain>
XML
virsh -q -c qemu:///system destroy "$dom" >/dev/null 2>&1
virsh -q -c qemu:///system undefine "$dom" >/dev/null 2>&1
virsh -q -c qemu:///system define "$work/$dom.xml" >/dev/null || fail "cannot define $dom"

# start_and_tell EXPECTED WHAT — starts the domain, says which daemon libvirt
# launched; EXPECTED is the descriptor's name without .json, or "none"
start_and_tell() {
        local expected=$1 what=$2 out rc got binary
        rm -f "$chosen"
        out=$(virsh -q -c qemu:///system start "$dom" 2>&1)
        rc=$?
        got=$(cat "$chosen" 2>/dev/null)
        binary=
        if [ $rc = 0 ]; then
                binary=$(virsh -q -c qemu:///system dumpxml "$dom" | sed -n "s|.*<binary path='\([^']*\)'.*|\1|p")
                virsh -q -c qemu:///system destroy "$dom" >/dev/null 2>&1
        fi
        if [ "$expected" = none ]; then
                if [ $rc != 0 ] && [ -z "$got" ] && grep -q 'Unable to find a satisfying virtiofsd' <<<"$out"; then
                        pass "$what: libvirt finds no virtiofsd and launches nothing ($(tr '\n' ' ' <<<"$out"))"
                        return
                fi
        elif [ "$got" = "$expected" ]; then
                pass "$what: libvirt launched the daemon of $expected.json"
                return
        fi
        fail_later "$what: expected ${expected/#none/no daemon}, libvirt launched ${got:-${binary:-something else}}" \
                "(virsh start: exit $rc, $(tr '\n' ' ' <<<"$out"); descriptors: $(ls /usr/share/qemu/vhost-user "$etc" 2>/dev/null | tr '\n' ' '))"
}

t=$EPOCHREALTIME
bookworm=/usr/share/qemu/vhost-user/50-qemu-virtiofsd.json
if [ -s "$bookworm" ]; then
        descriptor "$bookworm" 50-qemu-virtiofsd.json
        start_and_tell 50-qemu-virtiofsd "next to Debian 12's $bookworm, a VM without <binary>"
        rm -f "$etc/50-qemu-virtiofsd.json"
else
        note "SKIP next to Debian 12's descriptor: no $bookworm (qemu-system-common) here"
fi

roots=$(python3 "$top/tests/debian_archive.py" "$cache" virtiofsd/trixie)
rc=$?
: >"$etc/50-qemu-virtiofsd.json"   # hides Debian 12's, as if only Debian 13's were installed
if [ $rc = 0 ]; then
        trixie=${roots#virtiofsd/trixie }/usr/share/qemu/vhost-user/50-virtiofsd.json
        [ -s "$trixie" ] || fail "Debian 13's virtiofsd package has no $trixie"
        descriptor "$trixie" 50-virtiofsd.json
        start_and_tell 50-virtiofsd "next to Debian 13's virtiofsd ($(basename "$trixie")), a VM without <binary>"
        rm -f "$etc/50-virtiofsd.json"
elif [ $rc = 77 ]; then
        note "SKIP next to Debian 13's descriptor: the mirror cannot be reached"
else
        fail_later "cannot fetch Debian 13's virtiofsd package"
fi

start_and_tell none "with no virtiofsd installed, a VM without <binary>"
note "libvirt's choice checked in $(since "$t") s"
finish
