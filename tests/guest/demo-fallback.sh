#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# demo-fallback.sh BUILD — `make demo` where qemu:///session cannot run: the
# demo must notice it by itself, say so, and run the whole demo with the VM
# in qemu:///system (QEMU as libvirt-qemu, the worker's socket granted to it
# with an ACL by sluice-service, which still runs as the ordinary user).
#
# The cause is a real one, not a switch that pretends: a temporary folder so
# deep that the session libvirtd's own socket ($XDG_RUNTIME_DIR/libvirt/
# libvirt-sock; the demo keeps its runtime folder in $TMPDIR) is longer than a
# socket address holds (108 bytes).  libvirtd then exits at start, as it does
# for anyone whose runtime or config folder is that deep (a long home folder
# breaks session mode the same way, later: at QEMU's sockets).  The folder is
# still short enough for the demo's session bus socket, so everything but
# the session libvirtd works there.  The system libvirtd keeps its sockets in
# /run and /var/lib, the worker's socket is under /tmp: neither is affected.
#
# Checks: the demo passes; it says "VMs: qemu:///system (qemu:///session could
# not start: …)" naming the socket path that is too long; afterwards no VM of
# the demo is defined, no process of the demo user is left, the folder is empty.
# Needs root (the system libvirtd); 77 otherwise, or when the demo cannot run.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
build=${1:-${SLUICE_BUILD_ROOT:-build}}
need_root "the demo falls back to a system libvirtd, which it starts as root"
user=${SLUICE_DEMO_USER:-sluice-demo}

deep=
cleanup() { [ -z "$deep" ] || rm -rf "$deep"; }
trap cleanup EXIT
deep=$(mktemp -d /tmp/sluice-demo-deep.XXXXXX) || fail "mktemp failed"
chmod 0755 "$deep"
# the demo's work folder is $TMPDIR/sluice-demo.XXXXXX (19 more bytes): make it
# 90 bytes long, so $work/run/libvirt/libvirt-sock (116) cannot be a socket
# while $work/run/bus (98) can
tmpdir=$deep/
while [ $(( ${#tmpdir} + 19 )) -lt 90 ]; do tmpdir+=d; done
mkdir -p "$tmpdir" && chmod 0755 "$tmpdir" || fail "mkdir $tmpdir failed"
note "TMPDIR=$tmpdir (${#tmpdir} bytes): the demo's session libvirtd socket will not fit in a socket address"

out=$deep/demo.log
env -u SLUICE_DEMO_KEEP TMPDIR="$tmpdir" "$here/demo.sh" "$build" >"$out" 2>&1
rc=$?
sed 's/^/| /' "$out"
[ "$rc" != 77 ] || skip "the demo cannot run here: $(grep 'NOT RUN' "$out")"
vms=$(grep -a '^VMs: ' "$out" | tail -n 1)

if [ "$rc" = 0 ]; then pass "the demo passed with qemu:///session unavailable"
else fail_later "the demo failed (exit $rc)"; fi
case $vms in
"VMs: qemu:///system (qemu:///session could not start: "*"too long"*")")
        pass "it used qemu:///system and said why: $vms" ;;
*)      fail_later "its last line about the VMs is '$vms', not qemu:///system with the reason session mode failed" ;;
esac
if virsh -q -c qemu:///system dominfo sluice-demo-vm >/dev/null 2>&1 || [ -e /etc/libvirt/qemu/sluice-demo-vm.xml ]; then
        fail_later "sluice-demo-vm is still defined in qemu:///system"
else
        pass "no VM of the demo is left defined"
fi
left=$(pgrep -u "$user" -a 2>/dev/null)
if [ -z "$left" ]; then pass "no process of $user is left"
else fail_later "processes of $user are left: $left"; fi
rest=$(ls -A "$tmpdir")
if [ -z "$rest" ]; then pass "the demo removed its work folder"
else fail_later "left in $tmpdir: $rest"; fi
finish
